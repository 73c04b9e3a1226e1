package gqlhttp

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Tracing opens an OpenTelemetry span for every operation and every root
// field. Spans carry the operation's type and name and the field's name,
// never the query text or variables: those can hold card tokens.
type Tracing struct {
	Tracer trace.Tracer
}

var (
	_ graphql.HandlerExtension     = Tracing{}
	_ graphql.OperationInterceptor = Tracing{}
	_ graphql.RootFieldInterceptor = Tracing{}
	_ graphql.ResponseInterceptor  = Tracing{}
)

// ExtensionName implements graphql.HandlerExtension.
func (Tracing) ExtensionName() string { return "Tracing" }

// Validate implements graphql.HandlerExtension.
func (Tracing) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation implements graphql.OperationInterceptor.
func (t Tracing) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	name, kind := oc.OperationName, "query"
	if oc.Operation != nil {
		kind = string(oc.Operation.Operation)
		if name == "" {
			name = oc.Operation.Name
		}
	}
	spanName := "graphql." + kind
	if name != "" {
		spanName += " " + name
	}
	ctx, span := t.Tracer.Start(ctx, spanName, trace.WithAttributes(
		attribute.String("graphql.operation.type", kind),
		attribute.String("graphql.operation.name", name),
	))
	// The operation's handler runs once per response (once per event of a
	// subscription); the span covers setting the operation up.
	defer span.End()
	return next(ctx)
}

// InterceptResponse implements graphql.ResponseInterceptor: it marks the
// current span when a response carries errors, with their codes only.
func (t Tracing) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp != nil && len(resp.Errors) > 0 {
		span := trace.SpanFromContext(ctx)
		codesSeen := make([]string, 0, len(resp.Errors))
		for _, e := range resp.Errors {
			if c, ok := e.Extensions["code"].(string); ok {
				codesSeen = append(codesSeen, c)
			}
		}
		span.SetAttributes(attribute.StringSlice("graphql.error.codes", codesSeen))
		span.SetStatus(codes.Error, "the response carries errors")
	}
	return resp
}

// InterceptRootField implements graphql.RootFieldInterceptor.
func (t Tracing) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	fc := graphql.GetRootFieldContext(ctx)
	if fc == nil {
		return next(ctx)
	}
	ctx, span := t.Tracer.Start(ctx, "graphql.field "+fc.Field.Name, trace.WithAttributes(
		attribute.String("graphql.field.name", fc.Field.Name),
		attribute.String("graphql.field.object", fc.Object),
	))
	defer span.End()
	return next(ctx)
}
