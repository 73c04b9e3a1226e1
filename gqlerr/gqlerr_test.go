package gqlerr_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/gqlerr"
)

func TestConstructorsSetTheirCode(t *testing.T) {
	tests := []struct {
		name  string
		err   *gqlerr.Error
		code  gqlerr.Code
		field string
		msg   string
	}{
		{"bad input", gqlerr.BadInput("input.email", "%s must be an e-mail address", "input.email"), gqlerr.BadUserInput, "input.email", "input.email must be an e-mail address"},
		{"not found", gqlerr.NotFoundf("order %s not found", "o-1"), gqlerr.NotFound, "", "order o-1 not found"},
		{"forbidden", gqlerr.Forbiddenf("only %s may do this", "staff"), gqlerr.Forbidden, "", "only staff may do this"},
		{"unauthenticated", gqlerr.Unauthenticatedf("sign in first"), gqlerr.Unauthenticated, "", "sign in first"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.code, tc.err.Code)
			assert.Equal(t, tc.field, tc.err.Field)
			assert.Equal(t, tc.msg, tc.err.Message)
		})
	}
}

func TestErrorText(t *testing.T) {
	assert.Equal(t, "BAD_USER_INPUT: amount must be positive (input.amount)",
		gqlerr.BadInput("input.amount", "amount must be positive").Error())
	assert.Equal(t, "NOT_FOUND: no such order", gqlerr.NotFoundf("no such order").Error())

	internal := &gqlerr.Error{Code: gqlerr.Internal, Message: "internal error", Cause: errors.New("dial tcp 10.0.0.7:4222: refused")}
	assert.Equal(t, "INTERNAL: internal error", internal.Error(), "the cause is logged, never part of the text")
}

func TestAsAndUnwrapThroughWrapping(t *testing.T) {
	cause := errors.New("bucket unavailable")
	inner := &gqlerr.Error{Code: gqlerr.UpstreamUnavailable, Message: "try again", Cause: cause}
	wrapped := fmt.Errorf("resolving createOrder: %w", inner)

	e, ok := gqlerr.As(wrapped)
	require.True(t, ok)
	assert.Same(t, inner, e)
	assert.ErrorIs(t, wrapped, cause, "the cause stays reachable for logs")

	_, ok = gqlerr.As(errors.New("plain"))
	assert.False(t, ok)
	_, ok = gqlerr.As(nil)
	assert.False(t, ok)
}

func TestCodesAreTheDocumentedSet(t *testing.T) {
	assert.ElementsMatch(t, []gqlerr.Code{"UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", "BAD_USER_INPUT",
		"UPSTREAM_REJECTED", "UPSTREAM_UNAVAILABLE", "RATE_LIMITED", "INTERNAL"},
		[]gqlerr.Code{gqlerr.Unauthenticated, gqlerr.Forbidden, gqlerr.NotFound, gqlerr.BadUserInput,
			gqlerr.UpstreamRejected, gqlerr.UpstreamUnavailable, gqlerr.RateLimited, gqlerr.Internal})
}
