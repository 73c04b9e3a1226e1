package resolvers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/ratelimit"
	"github.com/fingraph/fingraph/session"
)

// Policy is the gateway's access policy, applied by the schema directives
// @requires(role) and @rateLimited before a resolver (and so before any
// upstream call) runs.
type Policy struct {
	operators map[session.Kind]bool
	public    *ratelimit.Keyed
	// accounts limits sign-in and two-factor attempts per account, across
	// all addresses: credential stuffing from many addresses against one
	// account is slowed as much as from one.
	accounts *ratelimit.Keyed
}

// Per-account limit of sign-in, two-factor and recovery attempts: a burst
// of 10, then one every 6 seconds.
const (
	accountBurst     = 10
	accountPerMinute = 10
)

// NewPolicy returns a policy where the principal kinds in operators may
// operate the merchant's payments, and public operations are limited to
// perMinute calls per client address (with a burst of the same size).
func NewPolicy(operators []string, perMinute int) *Policy {
	p := &Policy{operators: map[session.Kind]bool{}, public: ratelimit.PerMinute(perMinute),
		accounts: ratelimit.New(float64(accountPerMinute)/60, accountBurst)}
	for _, k := range operators {
		p.operators[session.Kind(k)] = true
	}
	return p
}

// MayOperatePayments reports whether a session of kind k may use the
// merchant's private-key operations.
func (p *Policy) MayOperatePayments(k session.Kind) bool { return p.operators[k] }

// Directives implements the schema's directives.
func (p *Policy) Directives() graph.DirectiveRoot {
	return graph.DirectiveRoot{Requires: p.requires, RateLimited: p.rateLimited}
}

func (p *Policy) requires(ctx context.Context, obj any, next graphql.Resolver, role model.Role) (any, error) {
	if err := p.Allows(ctx, role); err != nil {
		return nil, err
	}
	return next(ctx)
}

// Allows is @requires(role) as a function, for resolvers that reach an
// object without its typed field (node, nodes): nil when the request's
// session has the role, else the error the directive would give.
func (p *Policy) Allows(ctx context.Context, role model.Role) error {
	s := session.From(ctx)
	if s == nil {
		return gqlerr.Unauthenticatedf("sign in first")
	}
	switch role {
	case model.RoleSignedIn:
	case model.RoleBanking:
		if s.Kind == session.Customer {
			return gqlerr.Forbiddenf("a payments customer session cannot use banking operations")
		}
	case model.RolePaymentsOperator:
		if !p.MayOperatePayments(s.Kind) {
			return gqlerr.Forbiddenf("this principal may not operate the merchant's payments")
		}
	case model.RoleCustomerOrOperator:
		// A customer passes; which customer it may name is the resolver's
		// business (customerTarget, orderCustomer).
		if s.Kind != session.Customer && !p.MayOperatePayments(s.Kind) {
			return gqlerr.Forbiddenf("this principal may not operate the merchant's payments")
		}
	case model.RoleStaff:
		if s.Kind != session.Staff {
			return gqlerr.Forbiddenf("only staff members may do this")
		}
	default:
		return gqlerr.Forbiddenf("unknown role")
	}
	return nil
}

func (p *Policy) rateLimited(ctx context.Context, obj any, next graphql.Resolver) (any, error) {
	if ok, wait := p.public.Allow(session.ClientAddr(ctx)); !ok {
		return nil, rateLimitedError("too many requests from this address; slow down", wait)
	}
	if acct := accountKey(ctx); acct != "" {
		if ok, wait := p.accounts.Allow(acct); !ok {
			return nil, rateLimitedError("too many attempts for this account; wait before trying again", wait)
		}
	}
	return next(ctx)
}

// rateLimitedError tells the client when to come back
// (extensions.retryAfter, whole seconds).
func rateLimitedError(msg string, wait time.Duration) error {
	secs := int((wait + time.Second - 1) / time.Second)
	return &gqlerr.Error{Code: gqlerr.RateLimited, Message: msg, RetryAfter: max(secs, 1)}
}

// accountKey names the account a sign-in, two-factor or recovery attempt
// is about, from the field's input: the e-mail of a password sign-in, or a
// digest of an API or customer key (a secret, so never kept as it is).
func accountKey(ctx context.Context) string {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return ""
	}
	in, _ := fc.Args["input"]
	var parts []string
	switch v := in.(type) {
	case model.SignInInput:
		parts = []string{string(v.Kind), strings.ToLower(strings.TrimSpace(deref(v.Email))), deref(v.APIKey)}
	case *model.SignInInput:
		if v != nil {
			parts = []string{string(v.Kind), strings.ToLower(strings.TrimSpace(deref(v.Email))), deref(v.APIKey)}
		}
	case model.SignInCustomerInput:
		parts = []string{"customer", v.CustomerKey}
	case model.ForgotPasswordInput:
		parts = []string{"recovery", strings.ToLower(strings.TrimSpace(v.Email))}
	}
	if len(parts) == 0 {
		return ""
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return fc.Field.Name + ":" + hex.EncodeToString(sum[:16])
}
