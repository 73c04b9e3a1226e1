package resolvers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/ratelimit"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// Policy is the gateway's access policy, applied by the schema directives
// @requires(role) and @rateLimited before a resolver (and so before any
// upstream call) runs.
type Policy struct {
	operators map[session.Kind]bool
	// corporations are the merchant's: their principals of the operator
	// kinds operate payments (staff whatever their corporation); "*" is
	// any corporation.
	corporations    map[string]bool
	publicPerMinute int
	public          ratelimit.Limiter
	// accounts limits failed sign-in and two-factor attempts (and every
	// recovery request) per account, across all addresses: guessing from
	// many addresses against one account is slowed as much as from one.
	accounts ratelimit.Limiter
	// pairs limits failed sign-ins per account and client address, and
	// addresses failed sign-ins per address over all accounts: they stop
	// one guessing client long before it could empty the account's bucket,
	// so that its guesses never lock the owner out.
	pairs, addresses ratelimit.Limiter
	// credentials limits card credential reads per person (cards.go).
	credentials ratelimit.Limiter
}

// Sign-in limits (see docs/identity.md, "Sign-in limits"). Only failures
// count: a correct password (or SMS code) takes no token. Per
// account and address: 5, then one a minute; per address over all
// accounts: 20, then 10 a minute; per account over all addresses: 10,
// then 10 a minute, which one client held to one a minute can never empty.
// A recovery request counts against the account whatever its outcome.
const (
	accountBurst       = 10
	accountPerMinute   = 10
	pairBurst          = 5
	pairPerMinute      = 1
	addressFailBurst   = 20
	addressFailsPerMin = 10
)

// NewPolicy returns a policy where the principals of the kinds in operators
// may operate the merchant's payments when they are staff or of one of
// corporations (the merchant's), and public operations are limited to
// perMinute calls per client address (with a burst of the same size).
func NewPolicy(operators, corporations []string, perMinute int) *Policy {
	p := &Policy{operators: map[session.Kind]bool{}, corporations: map[string]bool{}, publicPerMinute: perMinute, public: ratelimit.PerMinute(perMinute),
		accounts:    ratelimit.New(float64(accountPerMinute)/60, accountBurst),
		pairs:       ratelimit.New(float64(pairPerMinute)/60, pairBurst),
		addresses:   ratelimit.New(float64(addressFailsPerMin)/60, addressFailBurst),
		credentials: ratelimit.PerMinute(credentialReadsPerMinute)}
	for _, k := range operators {
		p.operators[session.Kind(k)] = true
	}
	for _, c := range corporations {
		p.corporations[c] = true
	}
	return p
}

// ShareLimits keeps the public, sign-in, recovery and credential-read
// limits in kv, a JetStream bucket every replica uses, so that N replicas
// allow what one does; until it is called each replica keeps its own. Call
// it before the policy serves.
func (p *Policy) ShareLimits(kv jetstream.KeyValue) {
	p.public = ratelimit.SharedPerMinute(kv, "public", p.publicPerMinute)
	p.accounts = ratelimit.NewShared(kv, "account", float64(accountPerMinute)/60, accountBurst)
	p.pairs = ratelimit.NewShared(kv, "pair", float64(pairPerMinute)/60, pairBurst)
	p.addresses = ratelimit.NewShared(kv, "address", float64(addressFailsPerMin)/60, addressFailBurst)
	p.credentials = ratelimit.SharedPerMinute(kv, "credentials", credentialReadsPerMinute)
}

// MayOperatePayments reports whether session s may use the merchant's
// private-key operations: payments belong to the merchant, so besides
// staff only the merchant corporation's own principals (of the operator
// kinds) operate them, never another corporation's.
func (p *Policy) MayOperatePayments(s *session.Session) bool {
	if s == nil || !p.operators[s.Kind] {
		return false
	}
	return s.Kind == session.Staff || p.corporations["*"] || (s.CorporationID != "" && p.corporations[s.CorporationID])
}

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
		if !p.MayOperatePayments(s) {
			return gqlerr.Forbiddenf("this principal may not operate the merchant's payments")
		}
	case model.RoleCustomerOrOperator:
		// A customer passes; which customer it may name is the resolver's
		// business (customerTarget, orderCustomer).
		if s.Kind != session.Customer && !p.MayOperatePayments(s) {
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

// AllowsOperation checks every root field of a validated operation against
// its @requires role, for a transport that must refuse a request before it
// reads the rest of it (a file upload, before its files): nil when the
// request's session may run them all, else the error the directive would
// give the first it may not.
func (p *Policy) AllowsOperation(ctx context.Context, op *ast.OperationDefinition) error {
	return p.allowsSelection(ctx, op.SelectionSet, 0)
}

// maxFragmentNesting bounds the fragments followed at the root; validation
// has already refused cycles, this only keeps the walk finite regardless.
const maxFragmentNesting = 16

func (p *Policy) allowsSelection(ctx context.Context, set ast.SelectionSet, depth int) error {
	if depth > maxFragmentNesting {
		return gqlerr.BadInput("", "fragments nest too deep")
	}
	for _, sel := range set {
		var err error
		switch s := sel.(type) {
		case *ast.Field:
			if s.Definition == nil {
				continue
			}
			if d := s.Definition.Directives.ForName("requires"); d != nil {
				role := d.Arguments.ForName("role")
				if role == nil || role.Value == nil {
					return gqlerr.Forbiddenf("unknown role")
				}
				err = p.Allows(ctx, model.Role(role.Value.Raw))
			}
		case *ast.InlineFragment:
			err = p.allowsSelection(ctx, s.SelectionSet, depth+1)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				err = p.allowsSelection(ctx, s.Definition.SelectionSet, depth+1)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (p *Policy) rateLimited(ctx context.Context, obj any, next graphql.Resolver) (any, error) {
	addr := session.ClientAddr(ctx)
	if ok, wait := p.public.Allow(addr); !ok {
		return nil, rateLimitedError("too many requests from this address; slow down", wait)
	}
	acct, signIn := accountKey(ctx)
	if acct == "" {
		return next(ctx)
	}
	if !signIn {
		if ok, wait := p.accounts.Allow(acct); !ok {
			return nil, rateLimitedError("too many attempts for this account; wait before trying again", wait)
		}
		return next(ctx)
	}
	// A sign-in claims a token of each bucket while it runs, so that
	// attempts sent at once cannot all pass, and takes them only when it
	// failed. The client's own buckets come first: a client that keeps
	// failing is stopped there and never reaches the account's.
	var dones []func(counts bool)
	end := func(counts bool) {
		for _, f := range dones {
			f(counts)
		}
	}
	for _, c := range []struct {
		lim ratelimit.Limiter
		key string
		msg string
	}{
		{p.pairs, acct + "\x00" + addr, "too many failed sign-ins for this account from this address; wait before trying again"},
		{p.addresses, addr, "too many failed sign-ins from this address; wait before trying again"},
		{p.accounts, acct, "too many failed attempts for this account; wait before trying again"},
	} {
		ok, wait, done := c.lim.Take(c.key)
		if !ok {
			end(false)
			return nil, rateLimitedError(c.msg, wait)
		}
		dones = append(dones, done)
	}
	// Deferred, so that a resolver that panics does not hold its claims
	// for ever.
	counts := false
	defer func() { end(counts) }()
	res, err := next(ctx)
	counts = failedAttempt(err)
	return res, err
}

// failedAttempt reports whether a sign-in's error is a refusal of the
// credentials it carried (a wrong password or code, an unknown key). An
// answer that judged nothing (the upstream unavailable or limiting, the
// gateway's own input checks or failures, a caller that gave up) is not a
// failure: an outage must not lock anyone out.
func failedAttempt(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || roundtrip.IsUnavailable(err) {
		return false
	}
	if e, ok := gqlerr.As(err); ok {
		switch e.Code {
		case gqlerr.Internal, gqlerr.UpstreamUnavailable, gqlerr.RateLimited, gqlerr.BadUserInput:
			return false
		}
		return true
	}
	if rj, ok := roundtrip.AsRejection(err); ok {
		return rj.Status >= 400 && rj.Status < 500 && rj.Status != http.StatusTooManyRequests && rj.Misconfigured == ""
	}
	return false
}

// PasswordAttempt runs change, an upstream call that checks current, a
// current password, under the account limit of sign-in: a wrong current
// password counts as a failed sign-in of the session's account, so that
// guessing it in a session is slowed (and stopped) as guessing it at
// sign-in is. Without a current password change runs as it is.
func (p *Policy) PasswordAttempt(ctx context.Context, s *session.Session, current *string, change func() error) error {
	if current == nil || *current == "" || s == nil {
		return change()
	}
	acct := s.Account
	if acct == "" {
		acct = "person:" + s.PersonID
	}
	ok, wait, done := p.accounts.Take(acct)
	if !ok {
		return rateLimitedError("too many failed attempts for this account; wait before trying again", wait)
	}
	counts := false
	defer func() { done(counts) }()
	err := change()
	counts = wrongCurrentPassword(err)
	return err
}

// wrongCurrentPassword reports whether the upstream refused a change for
// its current password.
func wrongCurrentPassword(err error) bool {
	if err == nil {
		return false
	}
	if rj, ok := roundtrip.AsRejection(err); ok {
		return rj.Field == "current_password" || strings.Contains(rj.Message, "current_password") ||
			strings.Contains(strings.ToLower(rj.Message), "current password")
	}
	if e, ok := gqlerr.As(err); ok {
		return strings.Contains(e.Field, "currentPassword") || strings.Contains(strings.ToLower(e.Message), "current password")
	}
	return false
}

// SignInAccount is the account key of a person's password sign-in, which a
// session keeps (session.Session.Account) so that a wrong current password
// later counts toward the same limit.
func SignInAccount(kind model.SignInKind, email string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{string(kind), strings.ToLower(strings.TrimSpace(email)), ""}, "\x00")))
	return "signIn:" + hex.EncodeToString(sum[:16])
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
// signIn reports whether the attempt is a sign-in, which counts only when
// it fails.
func accountKey(ctx context.Context) (key string, signIn bool) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return "", false
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
		return "", false
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	_, recovery := in.(model.ForgotPasswordInput)
	return fc.Field.Name + ":" + hex.EncodeToString(sum[:16]), !recovery
}
