package gqlhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// streamExec runs every operation as a subscription whose responses come
// from a channel.
type streamExec struct{ responses chan *graphql.Response }

func (s streamExec) CreateOperationContext(context.Context, *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	return &graphql.OperationContext{Operation: &ast.OperationDefinition{Operation: ast.Subscription}}, nil
}

func (s streamExec) DispatchOperation(ctx context.Context, _ *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	return func(ctx context.Context) *graphql.Response {
		select {
		case r := <-s.responses:
			return r
		case <-ctx.Done():
			return nil
		}
	}, ctx
}

func (s streamExec) DispatchError(_ context.Context, list gqlerror.List) *graphql.Response {
	return &graphql.Response{Errors: list}
}

// A multipart subscription: a heartbeat first and while idle, each event a
// {"payload": ...} part, an error that ends it a {"payload": null,
// "errors": [...]} part, then the closing delimiter.
func TestMultipartSubscriptionParts(t *testing.T) {
	exec := streamExec{responses: make(chan *graphql.Response)}
	tr := MultipartSubscription{MaxBodyBytes: 1 << 10, Heartbeat: time.Millisecond}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !tr.Supports(r) {
			t.Errorf("the transport does not take Apollo's Accept %q", r.Header.Get("Accept"))
			return
		}
		tr.Do(w, r, exec)
	}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"query":"subscription { events { cursor } }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", `multipart/mixed;boundary="graphql";subscriptionSpec=1.0,application/json`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" || params["boundary"] != "graphql" || params["subscriptionspec"] != "1.0" {
		t.Fatalf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	mr := multipart.NewReader(resp.Body, "graphql")
	part := func() string {
		t.Helper()
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("next part: %v", err)
		}
		if ct := p.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("part Content-Type %q", ct)
		}
		b, _ := io.ReadAll(p)
		return string(b)
	}
	// Heartbeats while no event comes.
	for range 3 {
		if got := part(); got != "{}" {
			t.Fatalf("part %s, want the heartbeat {}", got)
		}
	}
	exec.responses <- &graphql.Response{Data: []byte(`{"events":{"cursor":"c1"}}`)}
	var got string
	for got = part(); got == "{}"; got = part() {
	}
	if got != `{"payload":{"data":{"events":{"cursor":"c1"}}}}` {
		t.Errorf("event part %s", got)
	}
	exec.responses <- &graphql.Response{Errors: gqlerror.List{{Message: "too slow", Extensions: map[string]any{"code": "RATE_LIMITED"}}}}
	for got = part(); got == "{}"; got = part() {
	}
	var end struct {
		Payload json.RawMessage `json:"payload"`
		Errors  gqlerror.List   `json:"errors"`
	}
	if err := json.Unmarshal([]byte(got), &end); err != nil || string(end.Payload) != "null" || len(end.Errors) != 1 || end.Errors[0].Extensions["code"] != "RATE_LIMITED" {
		t.Errorf("ending part %s, want payload null with the error", got)
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("after the error: %v, want the closing delimiter (EOF)", err)
	}
}

// Apollo's clients name multipart/mixed for @defer (deferSpec) too: those
// requests stay with incremental delivery.
func TestMultipartSubscriptionAccept(t *testing.T) {
	for accept, want := range map[string]bool{
		`multipart/mixed;subscriptionSpec="1.0", application/json`:                 true,
		`multipart/mixed;boundary="graphql";subscriptionSpec=1.0,application/json`: true,
		`multipart/mixed;deferSpec=20220824, application/json`:                     false,
		`application/json`:  false,
		`text/event-stream`: false,
	} {
		r := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(nil))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", accept)
		if got := (MultipartSubscription{}).Supports(r); got != want {
			t.Errorf("%s: supports %v, want %v", accept, got, want)
		}
		if (MultipartMixed{}).Supports(r) && want {
			t.Errorf("%s: the incremental-delivery transport takes it too", accept)
		}
	}
}
