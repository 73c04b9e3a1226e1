package app

import (
	"context"
	"fmt"

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
}

func newTracing(ctx context.Context, cfg Config) (*tracing, error) {
	t := &tracing{
		provider:   noop.NewTracerProvider(),
		propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
		shutdown:   func(context.Context) error { return nil },
	}
	switch {
	case cfg.TracerProvider != nil:
		t.provider = cfg.TracerProvider
	case cfg.OTLPEndpoint != "":
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(cfg.OTLPEndpoint))
		if err != nil {
			return nil, fmt.Errorf("FINGRAPH_OTLP_ENDPOINT: %w", err)
		}
		tp := sdktrace.NewTracerProvider(
			sdktrace.WithBatcher(exp),
			sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("fingraph"))),
		)
		t.provider, t.shutdown = tp, tp.Shutdown
	}
	return t, nil
}

func (t *tracing) tracer() trace.Tracer { return t.provider.Tracer("github.com/fingraph/fingraph") }
