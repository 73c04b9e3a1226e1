package gqlhttp

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fingraph/fingraph/gqlerr"
)

// A subscription that a resolver ends with gqlerr.EndStream sends its
// events, then one errors-only response with the reason's code, then ends.
func TestEndStreamSendsTheReasonBeforeTheEnd(t *testing.T) {
	next := func(ctx context.Context) graphql.ResponseHandler {
		calls := 0
		return func(context.Context) *graphql.Response {
			calls++
			switch calls {
			case 1:
				return &graphql.Response{Data: []byte(`{"events":{}}`)}
			case 2: // the resolver ends the stream once, closing its channel
				gqlerr.EndStream(ctx, gqlerr.New(gqlerr.RateLimited, "too slow"))
			}
			return nil
		}
	}
	h := endWithReason(context.Background(), next)
	if r := h(context.Background()); r == nil || len(r.Errors) > 0 {
		t.Fatalf("first response: %+v", r)
	}
	r := h(context.Background())
	if r == nil || len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != string(gqlerr.RateLimited) || r.Errors[0].Message != "too slow" {
		t.Fatalf("second response: %+v, want the reason", r)
	}
	if r := h(context.Background()); r != nil {
		t.Fatalf("after the reason: %+v, want the end", r)
	}
}
