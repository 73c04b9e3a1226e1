// Package resolvers holds fingraph's hand-written GraphQL resolvers, laid out
// as gqlgen's follow-schema layout generates them (one file per schema file),
// plus the mapping from upstream types to graph models. Resolver holds the
// dependencies every resolver shares; per-request state lives in loaders.
package resolvers

import (
	"context"
	"log/slog"
	"time"

	"github.com/fingraph/fingraph/downloads"
	"github.com/fingraph/fingraph/idempotency"
	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
)

// OrderAttempts remembers order attempts under idempotency keys.
type OrderAttempts interface {
	Get(ctx context.Context, scope, key string) (*idempotency.Attempt, error)
	Put(ctx context.Context, scope, key string, a idempotency.Attempt) error
}

var _ OrderAttempts = (*idempotency.Store)(nil)

// Resolver is the root resolver; it holds the dependencies.
type Resolver struct {
	Payments *payments.Client
	// Banking is the banking client; calls authenticate with the request's
	// session (session.Middleware puts its token source in the context).
	Banking *banking.Client
	// Policy decides who may call what (the @requires and @rateLimited
	// directives).
	Policy        *Policy
	OrderAttempts OrderAttempts
	Events        EventStream
	Logger        *slog.Logger
	// Downloads signs the gateway's report download links.
	Downloads *downloads.Signer
	// conversions serialises createConversion per idempotency key within
	// this process (wallets_money.go).
	conversions keyedMutex
	// Now is the clock; tests may fix it.
	Now func() time.Time

	// credentialReads limits card credential reads per session (cards.go).
	credentialReads credentialLimiter
}

func (r *Resolver) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
