package app

import (
	"context"
	"fmt"
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.34.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// tracing is the gateway's OpenTelemetry setup: spans for incoming
// requests, GraphQL operations and root fields, and upstream calls, sent
// over OTLP/HTTP to FINGRAPH_OTLP_ENDPOINT. Without an endpoint nothing is
// recorded, but incoming trace context is still passed on upstream.
type tracing struct {
	provider   trace.TracerProvider
	propagator propagation.TextMapPropagator
	shutdown   func(context.Context) error
	// recording is false without an exporter or provider: then nothing
	// is traced, and requests and upstream calls go through a propagator
	// alone instead of otelhttp's middleware and transport, which would
	// build spans and metric attributes that go nowhere on every request
	// and upstream call (docs/performance.md, "Settings chosen by
	// measurement").
	recording bool
}

func newTracing(ctx context.Context, cfg Config) (*tracing, error) {
	t := &tracing{
		provider:   noop.NewTracerProvider(),
		propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
		shutdown:   func(context.Context) error { return nil },
	}
	switch {
	case cfg.TracerProvider != nil:
		t.provider, t.recording = cfg.TracerProvider, true
	case cfg.OTLPEndpoint != "":
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(cfg.OTLPEndpoint))
		if err != nil {
			return nil, fmt.Errorf("FINGRAPH_OTLP_ENDPOINT: %w", err)
		}
		tp := sdktrace.NewTracerProvider(
			sdktrace.WithBatcher(exp),
			sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("fingraph"))),
		)
		t.provider, t.shutdown, t.recording = tp, tp.Shutdown, true
	}
	return t, nil
}

// tracer is the gateway's tracer, or nil when nothing is recorded (no
// operation or field spans then).
func (t *tracing) tracer() trace.Tracer {
	if !t.recording {
		return nil
	}
	return t.provider.Tracer("github.com/fingraph/fingraph")
}

// handler traces incoming requests with otelhttp, or, when nothing is
// recorded, only takes their trace context (traceparent, baggage) into the
// request's context so upstream calls pass it on.
func (t *tracing) handler(name string, next http.Handler) http.Handler {
	if t.recording {
		// The server span is named after the route it serves (name), as
		// otelhttp named it before v0.72 began naming it "<method> <pattern>".
		return otelhttp.NewHandler(next, name, otelhttp.WithTracerProvider(t.provider), otelhttp.WithPropagators(t.propagator),
			otelhttp.WithSpanNameFormatter(func(operation string, _ *http.Request) string { return operation }))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !carriesTraceContext(r.Header, t.propagator) {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r.WithContext(t.propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))))
	})
}

// transport traces upstream calls with otelhttp, or, when nothing is
// recorded, only passes the request's trace context on.
func (t *tracing) transport(rt http.RoundTripper) http.RoundTripper {
	if t.recording {
		return otelhttp.NewTransport(rt, otelhttp.WithTracerProvider(t.provider), otelhttp.WithPropagators(t.propagator))
	}
	return propagating{base: rt, propagator: t.propagator}
}

func carriesTraceContext(h http.Header, p propagation.TextMapPropagator) bool {
	for _, f := range p.Fields() {
		if h.Get(f) != "" {
			return true
		}
	}
	return false
}

// propagating injects the trace context of a call's context into its
// headers, as otelhttp's transport does with a tracer that records nothing.
type propagating struct {
	base       http.RoundTripper
	propagator propagation.TextMapPropagator
}

func (p propagating) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if !trace.SpanContextFromContext(ctx).IsValid() && baggage.FromContext(ctx).Len() == 0 {
		return p.base.RoundTrip(req)
	}
	req = req.Clone(ctx)
	p.propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
	return p.base.RoundTrip(req)
}
