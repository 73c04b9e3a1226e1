// Package resolvers holds fingraph's hand-written GraphQL resolvers, laid out
// as gqlgen's follow-schema layout generates them (one file per schema file),
// plus the mapping from upstream types to graph models. Resolver holds the
// dependencies every resolver shares; per-request state lives in loaders.
package resolvers

import (
	"log/slog"
	"time"

	"github.com/fingraph/fingraph/downloads"
)

// Resolver is the root resolver; it holds the dependencies.
type Resolver struct {
	// Payments and Banking are the upstreams' services resolvers call
	// (upstreams.go).
	Payments Payments
	Banking  Banking
	// Policy decides who may call what (the @requires and @rateLimited
	// directives).
	Policy *Policy
	// Attempts keeps money movements to one per idempotency key.
	Attempts Attempts
	// Authority ends the sessions and streams an authority admitted when
	// that authority ends (session.Authority); nil ends none.
	Authority Authority
	Events    EventStream
	// BankPoll, when set, polls the banking changes of the corporations
	// that live subscribers belong to.
	BankPoll BankPolling
	Logger   *slog.Logger
	// Downloads signs the gateway's report download links.
	Downloads *downloads.Signer
	// OutcomeSettle is how long after a money movement whose answer was
	// lost its absence upstream proves it had no effect
	// (DefaultOutcomeSettle when zero).
	OutcomeSettle time.Duration
	// Now is the clock; tests may fix it.
	Now func() time.Time
}

func (r *Resolver) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
