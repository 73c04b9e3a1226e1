package resolvers

import (
	"context"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/payments"
)

// mustSession returns the request's session; the @requires directive has
// already refused requests without one.
func mustSession(ctx context.Context) (*session.Session, error) {
	s := session.From(ctx)
	if s == nil {
		return nil, gqlerr.Unauthenticatedf("sign in first")
	}
	return s, nil
}

// inCustomerSession reports whether the request acts as one customer.
func inCustomerSession(ctx context.Context) bool {
	_, ok := payments.CustomerKey(ctx)
	return ok
}
