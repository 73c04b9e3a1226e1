package resolvers

import (
	"context"
	"errors"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/idempotency"
	"github.com/fingraph/fingraph/session"
)

// Attempts runs money movements at most once per idempotency key
// (idempotency.Store); createOrder uses it, and so can any other mutation
// that must not repeat its effect on a retry.
type Attempts interface {
	Do(ctx context.Context, scope, key, fingerprint string, fn idempotency.Func) (idempotency.Attempt, error)
}

var _ Attempts = (*idempotency.Store)(nil)

// idempotencyScope keeps idempotency keys apart per kind of call and per
// principal: two API clients, or two customers, choosing the same key never
// share an attempt, nor does an order share one with another kind of call.
func idempotencyScope(ctx context.Context, kind string) string {
	s := session.From(ctx)
	if s == nil {
		return kind + "|signed-out"
	}
	return kind + "|" + string(s.Kind) + "|" + s.PrincipalID + "|" + s.CorporationID
}

// idempotencyError translates what idempotency.Store.Do refuses into a
// client error naming field; any other error is internal. It returns nil
// for nil.
func idempotencyError(field string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, idempotency.ErrFingerprintMismatch):
		return gqlerr.BadInput(field, "this idempotency key was used for a different request")
	case errors.Is(err, idempotency.ErrInProgress):
		return gqlerr.BadInput(field, "a request with this idempotency key is still in progress; retry it later")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return &gqlerr.Error{Code: gqlerr.Internal, Message: "internal error", Cause: err}
}
