package resolvers

import (
	"context"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"golang.org/x/time/rate"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/session"
)

// Policy is the gateway's access policy, applied by the schema directives
// @requires(role) and @rateLimited before a resolver (and so before any
// upstream call) runs.
type Policy struct {
	operators map[session.Kind]bool
	public    *addressLimiter
}

// NewPolicy returns a policy where the principal kinds in operators may
// operate the merchant's payments, and public operations are limited to
// perMinute calls per client address (with a burst of the same size).
func NewPolicy(operators []string, perMinute int) *Policy {
	p := &Policy{operators: map[session.Kind]bool{}, public: newAddressLimiter(perMinute)}
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
	s := session.From(ctx)
	if s == nil {
		return nil, gqlerr.Unauthenticatedf("sign in first")
	}
	switch role {
	case model.RoleSignedIn:
	case model.RoleBanking:
		if s.Kind == session.Customer {
			return nil, gqlerr.Forbiddenf("a payments customer session cannot use banking operations")
		}
	case model.RolePaymentsOperator:
		if !p.MayOperatePayments(s.Kind) {
			return nil, gqlerr.Forbiddenf("this principal may not operate the merchant's payments")
		}
	case model.RoleCustomerOrOperator:
		// A customer passes; which customer it may name is the resolver's
		// business (customerTarget, orderCustomer).
		if s.Kind != session.Customer && !p.MayOperatePayments(s.Kind) {
			return nil, gqlerr.Forbiddenf("this principal may not operate the merchant's payments")
		}
	case model.RoleStaff:
		if s.Kind != session.Staff {
			return nil, gqlerr.Forbiddenf("only staff members may do this")
		}
	default:
		return nil, gqlerr.Forbiddenf("unknown role")
	}
	return next(ctx)
}

func (p *Policy) rateLimited(ctx context.Context, obj any, next graphql.Resolver) (any, error) {
	if !p.public.allow(session.ClientAddr(ctx)) {
		return nil, &gqlerr.Error{Code: gqlerr.RateLimited, Message: "too many requests from this address; slow down"}
	}
	return next(ctx)
}

// addressLimiter keeps one token bucket per client address. Idle buckets
// are dropped, so the map stays as large as the set of recent clients.
type addressLimiter struct {
	limit rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

const idleBucket = 10 * time.Minute

func newAddressLimiter(perMinute int) *addressLimiter {
	return &addressLimiter{limit: rate.Limit(float64(perMinute) / 60), burst: perMinute, buckets: map[string]*bucket{}}
}

func (l *addressLimiter) allow(addr string) bool {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > idleBucket {
		for a, b := range l.buckets {
			if now.Sub(b.seen) > idleBucket {
				delete(l.buckets, a)
			}
		}
		l.swept = now
	}
	b := l.buckets[addr]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[addr] = b
	}
	b.seen = now
	return b.lim.AllowN(now, 1)
}
