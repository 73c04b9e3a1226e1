package banking

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// TokenSource holds one session's upstream access token. The gateway's
// session implements it (or wraps a TokenStore) so that the token refreshed by
// every upstream response lands back in the session. Implementations must be
// safe for concurrent use: the calls of one GraphQL request run in parallel.
type TokenSource interface {
	// Token returns the current access token; "" sends the call without one.
	Token(ctx context.Context) (string, error)
	// SetToken stores a refreshed token. It is called once per upstream
	// response that carries a changed token, success or error, except for
	// the calls a CallFollower follows, whose TokenCall is told instead.
	SetToken(ctx context.Context, token string) error
}

// TokenRefuser is a TokenSource that wants to know when the upstream refuses
// its token outright (a 401 on a protected route naming no field): the
// session the token belongs to cannot work any more. The client calls it
// where it sees that answer, before returning the error.
type TokenRefuser interface {
	TokenRefused(ctx context.Context)
}

// CallFollower is a TokenSource that follows each protected call made with
// its token, from its start to its outcome, instead of being handed each
// refreshed token on its own: the gateway's session, which tells apart the
// tokens of calls that overlap and has other tokens to offer when the
// upstream refuses the one sent. The client hands it every refreshed token
// of a followed call exactly once, and SetToken none of them.
type CallFollower interface {
	TokenSource
	// FollowCall starts following one call, before its first attempt;
	// nil leaves the call to Token and SetToken.
	FollowCall(ctx context.Context) TokenCall
}

// TokenCall follows one call of a CallFollower, attempt by attempt. The
// client calls it from one goroutine at a time.
type TokenCall interface {
	// Token is the token the next attempt sends.
	Token() string
	// Refreshed is told the changed token an answer carried.
	Refreshed(ctx context.Context, token string)
	// Refused is told that the upstream refused token outright (a 401
	// carrying no refreshed token: it did not act), and reports whether
	// there is another token to send the call again with; Token returns
	// it then.
	Refused(ctx context.Context, token string) bool
	// End is called once the call has its outcome.
	End()
}

// WithTokenSource returns a context whose calls authenticate with ts and
// write refreshed tokens back to it.
func WithTokenSource(ctx context.Context, ts TokenSource) context.Context {
	return context.WithValue(ctx, keyTokenSource, ts)
}

// TokenSourceFrom returns the context's TokenSource, or nil.
func TokenSourceFrom(ctx context.Context) TokenSource {
	ts, _ := ctx.Value(keyTokenSource).(TokenSource)
	return ts
}

// TokenStore is an in-memory TokenSource, safe for concurrent use. The last
// SetToken wins; empty tokens are ignored so a response without a refresh
// never signs a session out.
type TokenStore struct {
	mu  sync.RWMutex
	tok string
}

var _ TokenSource = (*TokenStore)(nil)

// NewTokenStore returns a store holding token (which may be empty, for a
// sign-in that is about to fill it).
func NewTokenStore(token string) *TokenStore { return &TokenStore{tok: token} }

// Token returns the stored token.
func (s *TokenStore) Token(context.Context) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tok, nil
}

// SetToken replaces the stored token unless token is empty.
func (s *TokenStore) SetToken(_ context.Context, token string) error {
	if token == "" {
		return nil
	}
	s.mu.Lock()
	s.tok = token
	s.mu.Unlock()
	return nil
}

// Secret is a credential value: an access token, an API private key. It
// prints as [REDACTED] through fmt and slog so it cannot slip into logs or
// error strings by accident; Reveal returns the value where it is really
// needed. JSON encoding keeps the value, because sessions store it.
type Secret string

const redacted = "[REDACTED]"

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return string(s) }

// String hides the value from %v, %s and %q.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString hides the value from %#v.
func (s Secret) GoString() string { return fmt.Sprintf("banking.Secret(%q)", s.String()) }

// LogValue hides the value from slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }
