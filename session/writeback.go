package session

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
)

// Token write-back.
//
// The banking upstream answers every call with a refreshed token and treats
// the newest one it issued as current; older ones work only for a short
// grace period. Calls of one session run concurrently (parallel resolvers of
// a request, parallel requests), so their refreshed tokens must be stored in
// the order the upstream issued them, or a slower writer puts back a token
// that is about to be refused.
//
// Transport therefore holds a per-session lock around each call: it reads
// the stored token (so a call never sends a token superseded by another
// request's call), sends the call, and writes the refreshed token back with
// the time it arrived, all before the next call of the session starts.
// Within one gateway process the upstream thus issues and the store receives
// a session's tokens in the same order. The KV update (compare-and-set on
// the entry's revision, retried on conflict) replaces only a token with an
// earlier stamp, so the stored token is the newest issued even when replicas
// write concurrently. The lock costs parallelism only within one session,
// whose calls dataloaders already batch. Between replicas the stamps are
// wall-clock times; calls of one session on two replicas at the same moment
// could store the older token, which still works for the grace period, and
// the next call refreshes it. Sticky routing of a session removes that
// window.

// Transport wraps base so that banking calls made with a session's token are
// ordered and their refreshed tokens written back (see above). Calls without
// a session pass straight through.
func Transport(base http.RoundTripper) http.RoundTripper {
	return roundTripper{base: base}
}

// TokenHeader is the banking upstream's token header, both ways.
const TokenHeader = "x-access-token"

type roundTripper struct{ base http.RoundTripper }

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	st := stateFrom(req.Context())
	if st == nil || st.locks == nil || req.Header.Get(TokenHeader) == "" {
		return rt.base.RoundTrip(req)
	}
	// Only calls made with the session's own token source are the
	// session's: a sign-in within a signed-in request carries the new
	// principal's token in a token source of its own.
	if ts, ok := banking.TokenSourceFrom(req.Context()).(*tokenSource); !ok || (*state)(ts) != st {
		return rt.base.RoundTrip(req)
	}
	st.mu.Lock()
	key := st.token
	st.mu.Unlock()
	if key == "" {
		return rt.base.RoundTrip(req)
	}
	ctx := req.Context()
	unlock := st.locks.lock(Key(key))
	defer unlock()
	// Send the newest token: the one another request (or replica) stored
	// while this call waited may be newer than this request's copy, and
	// the copy may have been superseded for longer than the grace period.
	if stored, err := st.store.Get(ctx, key); err == nil {
		st.setLocal(stored.BankingToken.Reveal(), stored.BankingTokenAt)
	}
	st.mu.Lock()
	var tok string
	if st.sess != nil {
		tok = st.sess.BankingToken.Reveal()
	}
	st.mu.Unlock()
	if tok != "" {
		req = req.Clone(ctx)
		req.Header.Set(TokenHeader, tok)
	}
	resp, err := rt.base.RoundTrip(req)
	if resp == nil {
		return resp, err
	}
	if fresh := resp.Header.Get(TokenHeader); fresh != "" {
		at := time.Now().UTC()
		st.setLocal(fresh, at)
		if _, werr := st.store.Update(ctx, key, newer(fresh, at)); werr != nil && !errors.Is(werr, ErrNotFound) {
			st.logger.WarnContext(ctx, "could not write back a refreshed banking token", "err", werr)
		}
	}
	return resp, err
}

// newer replaces the stored token when tok arrived later than it.
func newer(tok string, at time.Time) func(*Session) error {
	return func(s *Session) error {
		if !at.After(s.BankingTokenAt) {
			return ErrNoChange
		}
		s.BankingToken, s.BankingTokenAt = Secret(tok), at
		return nil
	}
}

// setLocal updates the request's copy of the session, so its next call
// sends the newest token without reading the store.
func (st *state) setLocal(tok string, at time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.sess != nil && at.After(st.sess.BankingTokenAt) {
		st.sess.BankingToken, st.sess.BankingTokenAt = Secret(tok), at
	}
	st.recent = append(st.recent, tok)
	if len(st.recent) > 32 {
		st.recent = st.recent[len(st.recent)-32:]
	}
}

// tokenSource is the session as a banking.TokenSource: Token reads the
// request's copy of the session; SetToken writes back what Transport did not
// already (for example when the client is used without Transport).
type tokenSource state

func (ts *tokenSource) Token(context.Context) (string, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.sess == nil {
		return "", nil
	}
	return ts.sess.BankingToken.Reveal(), nil
}

func (ts *tokenSource) SetToken(ctx context.Context, token string) error {
	if token == "" {
		return nil
	}
	st := (*state)(ts)
	st.mu.Lock()
	seen, key := slices.Contains(st.recent, token), st.token
	st.mu.Unlock()
	if seen || key == "" {
		return nil
	}
	at := time.Now().UTC()
	st.setLocal(token, at)
	_, err := st.store.Update(ctx, key, newer(token, at))
	return err
}

// TokenRefused ends the session: the banking upstream refused its token
// outright, so no later call of it can succeed. The client reports this
// where it sees the answer, before any resolver or the error presenter does.
func (ts *tokenSource) TokenRefused(ctx context.Context) {
	if (*state)(ts).revoke(ctx) {
		ts.logger.InfoContext(ctx, "banking refused the session's token; session ended")
	}
}

// keyOwner is a CUSTOMER session as the holder of its payments customer key.
type keyOwner state

// CustomerKeyRefused ends the session: the payments upstream refused its
// customer key.
func (o *keyOwner) CustomerKeyRefused(ctx context.Context) {
	if (*state)(o).revoke(ctx) {
		o.logger.InfoContext(ctx, "payments refused the session's customer key; session ended")
	}
}

var (
	_ banking.TokenRefuser = (*tokenSource)(nil)
	_ payments.KeyOwner    = (*keyOwner)(nil)
)

// revoke ends the session because the upstream refused its credential. It
// reports whether there was a session to end.
func (st *state) revoke(ctx context.Context) bool {
	st.mu.Lock()
	has := st.token != ""
	st.mu.Unlock()
	if !has {
		return false
	}
	if _, err := st.end(ctx); err != nil {
		st.logger.WarnContext(ctx, "could not delete a revoked session", "err", err)
	}
	return true
}

// keyedMutex is a set of mutexes by key, each dropped when nobody holds or
// waits for it.
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*keyedEntry
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

func newKeyedMutex() *keyedMutex { return &keyedMutex{m: map[string]*keyedEntry{}} }

func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	e := k.m[key]
	if e == nil {
		e = &keyedEntry{}
		k.m[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}
