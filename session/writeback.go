package session

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
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
// grace period (10 s in the sandbox), then 401. A session's calls run
// concurrently (the parallel loader batches of a request, parallel
// requests), and Transport lets them: each call is sent with the request's
// copy of the newest token it knows (the session as read when the request
// began, updated by every answer), with no lock and no store read.
//
// What concurrency costs is knowing which token is the newest. The upstream
// issues tokens in the order it serves calls; the gateway sees them in the
// order the answers arrive, and for calls that overlapped the two orders
// need not agree. So Transport tracks, per session and per replica, the
// bursts of overlapping calls (a burst lasts while any call of the session
// is in flight here):
//
//   - A call that arrives while no other call of its burst has started is
//     unambiguous: its token was issued after every token stored before, so
//     it is stored and the candidates are cleared.
//   - Tokens of a burst with several calls are ambiguous: the latest arrival
//     is stored as the token, and the burst's other tokens are kept beside
//     it as candidates (Session.BankingCandidates, at most maxCandidates,
//     Secrets like the token). The chain's newest token is always among
//     them: an answer that arrives after the newest token's was issued
//     before it, by a call in flight at the time, and a burst's first
//     arrival starts the list afresh (every token of an earlier burst was
//     issued before the calls of this one started).
//   - When the upstream refuses a call's token outright (401 whose answer
//     carries no refreshed token, that is, the upstream did not act), the
//     call is retried once with the stored token when it differs from the
//     one sent (another request, replica or socket moved on), then with each
//     candidate, latest arrival first; only when the request's body can be
//     replayed (GetBody). A retry's answer is written back like any other.
//     Calls of one burst refused together retry one at a time, so the later
//     ones start from the token the first one found (now the stored one).
//     When no retry is accepted, the original 401 goes back unchanged, and
//     the banking client ends the session (a blocked person, a deleted key).
//
// Steady state costs no lock and no extra call; a retry happens only on the
// first call after an idle gap longer than the grace, and only when the
// burst's last arrival was not the newest token.
//
// The store is written at most twice per request, not once per call: each
// answer updates the request's copy at once and joins its burst's pending
// arrivals, and the call that ends the burst hands them to the request
// (hold). The request's first burst is written as soon as it ends, by the
// call that ended it, so a screen of one level of calls (the dashboard)
// writes once and holds nothing; later bursts are held and written
// together when the request ends, before its response completes, so the
// client's next request finds every token this one received. (Writing the
// first burst on a goroutine of its own, beside the rest of the request,
// took ~0.3 ms off one client's screen but added ~4 ms to the p99 of 16:
// docs/performance.md, "Tried and not kept".) A burst that goes on (many
// clients on one session) and a request that goes on are written every
// flushAfter. A call that recovered a refused token writes at once, for its
// siblings waiting to retry. A websocket connection, which has no end to
// wait for, writes at the end of each burst.
//
// The store update (compare-and-set on the entry's revision, retried on
// conflict) orders writes by arrival time (the stamp BankingTokenAt), as
// before: within a replica a burst's arrivals are told apart by their burst
// id; between replicas the stamps are wall-clock times, and two replicas
// serving one session at the same moment may leave a token superseded by the
// other's, which works for the grace period, and the next call refreshes it
// (or, past the grace, one of the candidates fixes it when it came from this
// burst). Sticky routing of a session removes that window.

// Transport wraps base so that banking calls made with a session's token run
// concurrently and their refreshed tokens are written back (see above).
// Calls without a session pass straight through.
func Transport(base http.RoundTripper) http.RoundTripper {
	return roundTripper{base: base}
}

// TokenHeader is the banking upstream's token header, both ways.
const TokenHeader = "x-access-token"

// maxCandidates bounds the tokens kept beside the stored one: a burst of
// more than maxCandidates+1 overlapping calls of one session may lose the
// newest token (the session then ends at the next call after the grace).
const maxCandidates = 16

// maxRefusedBody bounds the 401 body kept in memory while retries run.
const maxRefusedBody = 64 << 10

type roundTripper struct{ base http.RoundTripper }

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	st := stateFrom(req.Context())
	sent := req.Header.Get(TokenHeader)
	if st == nil || st.bursts == nil || sent == "" {
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
	bk := Key(key)
	b := st.bursts.begin(bk)
	defer func() { st.hold(req.Context(), key, st.bursts.end(bk, b)) }()

	resp, err := rt.base.RoundTrip(req)
	if resp == nil {
		return resp, err
	}
	if fresh := resp.Header.Get(TokenHeader); fresh != "" && fresh != sent {
		st.writeBack(key, b, fresh)
		return resp, err
	}
	if resp.StatusCode != http.StatusUnauthorized || !replayable(req) {
		return resp, err
	}
	return rt.retryRefused(req, st, key, b, sent, resp)
}

// replayable reports whether req's body can be sent again.
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// retryRefused retries a call whose token the upstream refused with the
// stored token and the candidates (see above). It returns the first answer
// that is not such a refusal, or refused, unchanged, when there is none.
func (rt roundTripper) retryRefused(req *http.Request, st *state, key string, b *burst, sent string, refused *http.Response) (*http.Response, error) {
	ctx := req.Context()
	// Overlapping calls refused together recover one at a time: the
	// first finds the working token and stores it, the next try it first
	// (the stored token) instead of each refused candidate again.
	b.recovering.Lock()
	defer b.recovering.Unlock()
	stored, err := st.store.Get(ctx, key)
	if err != nil {
		return refused, nil // signed out meanwhile, or the store is down: nothing to try
	}
	tries := make([]string, 0, 1+len(stored.BankingCandidates))
	seen := map[string]bool{sent: true, "": true}
	add := func(tok string) {
		if !seen[tok] {
			seen[tok] = true
			tries = append(tries, tok)
		}
	}
	add(stored.BankingToken.Reveal())
	for _, c := range slices.Backward(stored.BankingCandidates) {
		add(c.Reveal())
	}
	if len(tries) == 0 {
		return refused, nil
	}
	// Keep the refusal to return it unchanged, and free its connection
	// while the retries run.
	raw, rerr := io.ReadAll(io.LimitReader(refused.Body, maxRefusedBody))
	_ = refused.Body.Close()
	refused.Body = io.NopCloser(bytes.NewReader(raw))
	if rerr != nil {
		return refused, nil
	}
	for _, tok := range tries {
		retry := req.Clone(ctx)
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return refused, nil
			}
			retry.Body = body
		}
		retry.Header.Set(TokenHeader, tok)
		resp, err := rt.base.RoundTrip(retry)
		if err != nil {
			// The upstream may not have answered at all: report that
			// rather than a refusal it might not repeat.
			return resp, err
		}
		fresh := resp.Header.Get(TokenHeader)
		if resp.StatusCode == http.StatusUnauthorized && (fresh == "" || fresh == tok) {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxRefusedBody))
			_ = resp.Body.Close()
			continue
		}
		if fresh != "" && fresh != tok {
			st.writeBack(key, b, fresh)
			// Siblings refused with this call wait on b.recovering and
			// then read the store: the token found must be there now,
			// not at the end of the burst or of the request.
			st.hold(ctx, key, st.bursts.take(b))
			st.release(ctx, false)
		}
		return resp, nil
	}
	return refused, nil
}

// writeBack records fresh, the token an answer of burst b carried, in the
// request's copy at once, and in b's pending arrivals, which reach the store
// when the burst ends (or has waited flushAfter): one store write per burst
// of calls instead of one per call (see flush).
func (st *state) writeBack(key string, b *burst, fresh string) {
	at := time.Now().UTC()
	st.received(key, fresh, at)
	st.bursts.arrived(b, fresh, at)
}

// held is what a request holds of its session's token arrivals until it
// ends: the arrivals of its ended bursts after the first, for the session
// of key. A zero holdFor holds nothing (websocket connections).
type held struct {
	mu       sync.Mutex
	key      string
	arrivals []func(*Session) error
	// wrote is set once the request's first burst was written (by the
	// call that ended it).
	wrote bool
	// timer releases the arrivals holdFor (flushAfter) after the first
	// was held, for a request that goes on (a slow call of another
	// upstream).
	timer   *time.Timer
	holdFor time.Duration
	ended   bool // the request is over: later arrivals are written at once

	releasing sync.Mutex // held while a release writes
}

// hold takes the arrivals of the session of key that a burst of calls
// handed over when it ended: the request's first burst is written at once,
// by the call that ended it; later ones are kept for one write at the end
// of the request (release). Without a request to wait for (a websocket
// connection, or a call that outlived its request), they are written at
// once too.
func (st *state) hold(ctx context.Context, key string, arrivals []func(*Session) error) {
	if len(arrivals) == 0 {
		return
	}
	h := &st.held
	if h.holdFor == 0 {
		st.flush(ctx, key, arrivals)
		return
	}
	h.mu.Lock()
	if h.ended {
		h.mu.Unlock()
		st.flush(ctx, key, arrivals)
		return
	}
	if len(h.arrivals) > 0 && h.key != key {
		// The request signed in again: what it holds is the old
		// session's, written first.
		h.mu.Unlock()
		st.release(ctx, false)
		h.mu.Lock()
	}
	if !h.wrote {
		h.wrote = true
		h.mu.Unlock()
		st.flush(ctx, key, arrivals)
		return
	}
	if len(h.arrivals) == 0 {
		if h.timer == nil {
			h.timer = time.AfterFunc(h.holdFor, func() { st.release(ctx, false) })
		} else {
			h.timer.Reset(h.holdFor)
		}
	}
	h.key = key
	h.arrivals = append(h.arrivals, arrivals...)
	h.mu.Unlock()
}

// release writes what the request holds, in one compare-and-set; last
// marks the end of the request. Releases run one at a time, so the
// request's last one returns only after an earlier one (the timer's) is
// written.
func (st *state) release(ctx context.Context, last bool) {
	h := &st.held
	h.releasing.Lock()
	defer h.releasing.Unlock()
	h.mu.Lock()
	key, arrivals := h.key, h.arrivals
	h.arrivals = nil
	if h.timer != nil {
		h.timer.Stop()
	}
	h.ended = h.ended || last
	h.mu.Unlock()
	st.flush(ctx, key, arrivals)
}

// flushTimeout bounds one store write of a burst's arrivals.
const flushTimeout = 5 * time.Second

// flush writes arrivals to the stored session in one compare-and-set, in
// the order they arrived (arrival keeps the newest as the token whatever
// the order, so two flushes of one burst may land either way round). It
// does not inherit the request's cancellation: a client that went away
// must not leave the session holding only superseded tokens.
func (st *state) flush(ctx context.Context, key string, arrivals []func(*Session) error) {
	if len(arrivals) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	defer cancel()
	_, err := st.store.Update(ctx, key, func(s *Session) error {
		for _, a := range arrivals {
			if err := a(s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		st.logger.WarnContext(ctx, "could not write back a refreshed banking token", "err", err)
	}
}

// arrival applies one arrival of a token to the stored session: tok, which
// arrived at at in burst id, shared when other calls of the burst started
// before it arrived.
func arrival(tok string, at time.Time, id string, shared bool) func(*Session) error {
	return func(s *Session) error {
		later := at.After(s.BankingTokenAt)
		switch {
		case later && (!shared || s.BankingBurst != id):
			// Unambiguous, or the first arrival of a new burst: every
			// token stored before was issued before this one.
			s.BankingToken, s.BankingTokenAt, s.BankingBurst = Secret(tok), at, id
			s.BankingCandidates = nil
		case later:
			s.BankingCandidates = pushCandidate(s.BankingCandidates, s.BankingToken)
			s.BankingToken, s.BankingTokenAt = Secret(tok), at
		default:
			// An earlier arrival than the stored token's (its write was
			// overtaken, or another replica's): keep it as a candidate.
			s.BankingCandidates = pushCandidate(s.BankingCandidates, Secret(tok))
		}
		return nil
	}
}

// pushCandidate returns cs with tok added, keeping the newest maxCandidates.
// It never writes into cs's array: sessions are shallow copies of the
// cached one.
func pushCandidate(cs []Secret, tok Secret) []Secret {
	if tok == "" || slices.Contains(cs, tok) {
		return cs
	}
	out := make([]Secret, 0, min(len(cs)+1, maxCandidates))
	if len(cs) >= maxCandidates {
		cs = cs[len(cs)-maxCandidates+1:]
	}
	out = append(out, cs...)
	return append(out, tok)
}

// newer replaces the stored token when tok arrived later than it. It is for
// tokens Transport did not see (SetToken), which belong to no burst.
func newer(tok string, at time.Time) func(*Session) error {
	return func(s *Session) error {
		if !at.After(s.BankingTokenAt) {
			return ErrNoChange
		}
		// Keep the replaced token: without Transport's bursts, which of
		// the two is newer is not known.
		s.BankingCandidates = pushCandidate(s.BankingCandidates, s.BankingToken)
		s.BankingToken, s.BankingTokenAt = Secret(tok), at
		return nil
	}
}

// received records tok, a token an answer carried, in the request's copy
// of the session of key (setLocal) and among the tokens already written
// back, which SetToken then skips.
func (st *state) received(key, tok string, at time.Time) {
	st.mu.Lock()
	st.recent = append(st.recent, tok)
	if len(st.recent) > 32 {
		st.recent = st.recent[len(st.recent)-32:]
	}
	st.mu.Unlock()
	st.setLocal(key, tok, at)
}

// setLocal updates the request's copy of the session of key, so its next
// call sends the newest token without reading the store. A token of a
// session the request has since left (signed in again) is not kept.
func (st *state) setLocal(key, tok string, at time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.token == key && st.sess != nil && at.After(st.sess.BankingTokenAt) {
		st.sess.BankingToken, st.sess.BankingTokenAt = Secret(tok), at
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
	st.received(key, token, at)
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
	token, shared := st.token, st.anonymous
	st.mu.Unlock()
	if token == "" {
		return false
	}
	if shared {
		// The shared demo session is never ended by a request, but one
		// whose credential is refused would refuse every later request:
		// dropping it makes the next one sign the demo principal in again
		// (Anonymous.session).
		if err := st.store.Delete(ctx, token); err != nil {
			st.logger.WarnContext(ctx, "could not delete the refused anonymous session", "err", err)
		}
	}
	if _, err := st.end(ctx); err != nil {
		st.logger.WarnContext(ctx, "could not delete a revoked session", "err", err)
	}
	return true
}

// bursts tracks, per session key, the calls of the session in flight on
// this replica. A burst lasts from the first call's start until no call is
// in flight; it is dropped then.
type bursts struct {
	mu sync.Mutex
	m  map[string]*burst
}

// burst is one run of overlapping calls of a session.
type burst struct {
	id       string // random, unique per burst across replicas
	inflight int
	started  int // calls started in this burst so far

	recovering sync.Mutex // held by a call retrying a refused token

	// pending are the arrivals not yet written to the store, the first
	// of them recorded at pendingSince.
	pending      []func(*Session) error
	pendingSince time.Time
}

// flushAfter bounds how long arrivals wait for their burst to end before
// they are written: a session whose calls never stop overlapping (many
// clients on one session) still reaches the store, and so other replicas
// and the session's later requests.
const flushAfter = 100 * time.Millisecond

func newBursts() *bursts { return &bursts{m: map[string]*burst{}} }

// begin counts a call of key in; the caller must end it.
func (bs *bursts) begin(key string) *burst {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b := bs.m[key]
	if b == nil {
		b = &burst{id: rand.Text()}
		bs.m[key] = b
	}
	b.inflight++
	b.started++
	return b
}

// arrived records tok, which an answer of b carried at at, as a pending
// arrival of b: shared when other calls of b started before it arrived (so
// that it may not be the newest token).
func (bs *bursts) arrived(b *burst, tok string, at time.Time) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if len(b.pending) == 0 {
		b.pendingSince = at
	}
	b.pending = append(b.pending, arrival(tok, at, b.id, b.started > 1))
}

// take returns b's pending arrivals and clears them.
func (bs *bursts) take(b *burst) []func(*Session) error {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	out := b.pending
	b.pending = nil
	return out
}

// end counts a call of key out, after its token was recorded: a call that
// starts after the end of a burst belongs to a new one. It returns the
// arrivals the caller must write: all of b's when b ends, or when the first
// has waited flushAfter; none otherwise.
func (bs *bursts) end(key string, b *burst) []func(*Session) error {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if b.inflight--; b.inflight == 0 && bs.m[key] == b {
		delete(bs.m, key)
	}
	if len(b.pending) == 0 || (b.inflight > 0 && time.Since(b.pendingSince) < flushAfter) {
		return nil
	}
	out := b.pending
	b.pending = nil
	return out
}
