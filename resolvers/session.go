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

// maySeeScreening reports whether a session may read the screening of the
// person with upstream id personID: staff, and the person themselves.
// Screening says whether someone is on a sanctions list; a colleague or the
// corporation's API client has no need to know.
func maySeeScreening(s *session.Session, personID string) bool {
	if s == nil {
		return false
	}
	return s.Kind == session.Staff || (s.Kind == session.Person && s.PersonID != "" && s.PersonID == personID)
}
