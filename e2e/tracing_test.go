package e2e

import (
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fingraph/fingraph/app"
)

// TestTracesFollowARequestUpstreamWithoutSecrets records spans in memory:
// one trace runs from the GraphQL request through the operation and root
// field to the upstream call, and no span carries a card token, a session
// token or a key.
func TestTracesFollowARequestUpstreamWithoutSecrets(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	g := startGatewayWith(t, func(c *app.Config) { c.TracerProvider = tp })
	g = g.as(g.signInAPI(t))
	card := uniq("tok_ok_")
	exp.Reset()
	o := createOrder(t, g, map[string]any{"currency": "EUR", "items": map[string]any{"amount": 100},
		"payment": map[string]any{"card": map[string]any{"token": card}}})
	if o.Typename != "Order" {
		t.Fatalf("order: %+v", o)
	}

	spans := exp.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	server, op, field := byName["/graphql"], byName["graphql.mutation"], byName["graphql.field createOrder"]
	var upstream tracetest.SpanStub
	for _, s := range spans {
		if s.Name == "HTTP POST" || strings.HasPrefix(s.Name, "POST") {
			upstream = s
		}
	}
	names := make([]string, 0, len(spans))
	for _, s := range spans {
		names = append(names, s.Name)
	}
	if !server.SpanContext.IsValid() || !op.SpanContext.IsValid() || !field.SpanContext.IsValid() || !upstream.SpanContext.IsValid() {
		t.Fatalf("missing spans; got %v", names)
	}
	trace := server.SpanContext.TraceID()
	for _, s := range []tracetest.SpanStub{op, field, upstream} {
		if s.SpanContext.TraceID() != trace {
			t.Errorf("span %q is not in the request's trace", s.Name)
		}
	}
	for _, s := range spans {
		for _, kv := range s.Attributes {
			v := kv.Value.String()
			for _, secret := range []string{card, g.bearer, "sk_sandbox_demo", "at_sandbox_demo", "pk_sandbox_demo", "Bearer"} {
				if strings.Contains(v, secret) {
					t.Errorf("span %q attribute %s carries a secret", s.Name, kv.Key)
				}
			}
		}
	}
}

// TestTracesCarryNoCardCredentials: issuing a card, simulating with it and
// reading its credentials are traced end to end, and no span (name,
// attribute or event) carries the PAN or the CVC.
func TestTracesCarryNoCardCredentials(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	g := startGatewayWith(t, func(c *app.Config) { c.TracerProvider = tp })
	g = g.as(g.signInPerson(t, "anna@demo.test"))
	exp.Reset()
	card := g.issueCard(t, issueInput())
	g.simulate(t, card.ID, 100)
	var d struct {
		Reveal struct{ Pan, Cvc string } `json:"revealCardCredentials"`
	}
	g.query(t, revealMutation, map[string]any{"id": card.ID}).decode(t, &d)
	if len(d.Reveal.Pan) != 16 {
		t.Fatalf("credentials: %d digits", len(d.Reveal.Pan))
	}
	spans := exp.GetSpans()
	var sawCredentialsCall bool
	for _, s := range spans {
		// Numbers (status codes, sizes, ports) are compared with the whole
		// PAN only: a three-digit size equal to the CVC by chance is not a
		// leak. Strings are compared with the PAN, its middle digits and
		// the CVC.
		texts := []string{s.Name}
		var numbers []string
		add := func(kvs []attribute.KeyValue) {
			for _, kv := range kvs {
				if kv.Value.Type() == attribute.STRING || kv.Value.Type() == attribute.STRINGSLICE {
					texts = append(texts, kv.Value.String())
				} else {
					numbers = append(numbers, kv.Value.String())
				}
				if strings.Contains(kv.Value.String(), "/credentials") {
					sawCredentialsCall = true
				}
			}
		}
		add(s.Attributes)
		for _, ev := range s.Events {
			texts = append(texts, ev.Name)
			add(ev.Attributes)
		}
		for _, txt := range texts {
			if strings.Contains(txt, d.Reveal.Pan) || strings.Contains(txt, d.Reveal.Pan[6:12]) || txt == d.Reveal.Cvc {
				t.Errorf("span %q carries card data", s.Name)
			}
		}
		for _, n := range numbers {
			if strings.Contains(n, d.Reveal.Pan) {
				t.Errorf("span %q carries the PAN as a number", s.Name)
			}
		}
	}
	if !sawCredentialsCall {
		t.Fatalf("the credentials call was not traced, so the scan proves nothing (%d spans)", len(spans))
	}
}
