package session

import (
	"context"
	"crypto/rand"
	"errors"
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
// grace period, then 401. A session's calls run concurrently (a request's
// loader batches, parallel requests), and the session lets them: it is the
// banking client's TokenSource and follows each of its calls
// (banking.CallFollower), driven by the shared sender's hooks. Each call is
// sent with the request's copy of the newest token it knows, with no lock
// and no store read, and every refreshed token an answer carries comes back
// to the call once.
//
// Concurrency costs knowing which token is the newest: the upstream issues
// tokens in the order it serves calls, the gateway sees them in the order
// the answers arrive, and for overlapping calls the two need not agree. So
// the session tracks bursts of overlapping calls (a burst lasts while any
// call of the session is in flight on this replica):
//
//   - A call that arrives while no other call of its burst has started is
//     unambiguous: its token was issued after every token stored before, so
//     it is stored and the candidates are cleared.
//   - In a burst of several calls the latest arrival is stored and the
//     burst's other tokens are kept beside it as candidates
//     (Session.BankingCandidates, at most maxCandidates, secrets like the
//     token). The newest token is always among them: an answer that arrives
//     after it was issued before it, by a call in flight at the time, and a
//     burst's first arrival starts the list afresh.
//   - When the upstream refuses a token outright (a 401 carrying no
//     refreshed token: the upstream did not act), the shared sender sends
//     the call again with the stored token when it differs from the one
//     sent, then with each candidate, latest arrival first. Calls refused
//     together recover one at a time, the later ones from the token the
//     first one found. When none is accepted the 401 goes back unchanged
//     and the banking client ends the session (a blocked person, a deleted
//     key).
//
// Steady state costs no lock and no extra call; a resend happens only on the
// first call after an idle gap longer than the grace, and only when the
// burst's last arrival was not the newest token.
//
// The store is written at most twice per request, not once per call: the
// request's first burst when it ends, by the call that ended it (a screen of
// one level of calls writes once and holds nothing), later bursts together
// when the request ends (hold), before its response completes, so that the
// client's next request finds every token this one received. A write on a
// goroutine of its own, beside the request, would let that next request read
// the entry before the write landed, and its own write would then conflict.
// A burst or a request that goes on is written every flushAfter; a call that
// recovered a refused token writes at once, for its siblings waiting to
// resend; a websocket connection, which has no end to wait for, writes at
// the end of each burst.
//
// The store update (compare-and-set on the entry's revision, retried on
// conflict) orders writes by arrival (the stamp BankingTokenAt): within a
// replica by burst id, between replicas by wall clock, so two replicas
// serving one session at the same moment may leave a superseded token, which
// works for the grace and is refreshed by the next call (or, past the grace,
// fixed by a candidate of this burst). Sticky routing of a session removes
// that window.

// maxCandidates bounds the tokens kept beside the stored one: a burst of
// more than maxCandidates+1 overlapping calls of one session may lose the
// newest token (the session then ends at the next call after the grace).
const maxCandidates = 16

// FollowCall follows a banking call made with the session's token, as one
// call of its burst (see above). A request without a session, or whose
// session has no banking token, leaves the call to Token and SetToken.
func (ts *tokenSource) FollowCall(ctx context.Context) banking.TokenCall {
	st := (*state)(ts)
	if st.bursts == nil {
		return nil
	}
	st.mu.Lock()
	key := st.token
	has := st.sess != nil && st.sess.BankingToken != ""
	st.mu.Unlock()
	if key == "" || !has {
		return nil
	}
	bk := Key(key)
	return &call{st: st, ctx: ctx, key: key, bk: bk, b: st.bursts.begin(bk)}
}

// call is one banking call of a session, followed from its start to its
// outcome.
type call struct {
	st  *state
	ctx context.Context
	key string // the session token
	bk  string // Key(key), which names the session's bursts
	b   *burst

	// recovering is set once the upstream refused the call's token: the
	// call holds b.recovering, and tries are the other tokens left.
	recovering bool
	tries      []string
	// next is the token of the resend the sender is about to make.
	next string
	// attempted is set once an attempt asked for its token (a call an
	// open breaker stops never does); answered once an answer of the call
	// arrived (every answer carries a token, or is a refusal).
	attempted, answered bool
}

// Token is the request's copy of the newest token, or the other token a
// refusal is resent with.
func (c *call) Token() string {
	c.attempted = true
	if tok := c.next; tok != "" {
		c.next = ""
		return tok
	}
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	if c.st.sess == nil {
		return ""
	}
	return c.st.sess.BankingToken.Reveal()
}

// Refreshed writes back fresh, a token an answer of the call carried. The
// answer to a resend writes at once: siblings refused with this call wait
// on b.recovering and then read the store, so the token found must be
// there now, not at the end of the burst or of the request.
func (c *call) Refreshed(ctx context.Context, fresh string) {
	c.answered = true
	c.st.writeBack(c.key, c.b, fresh)
	if c.recovering {
		c.st.hold(ctx, c.key, c.st.bursts.take(c.b))
		c.st.release(ctx, false)
	}
}

// Refused offers the next token to resend a refused call with: the stored
// token, then the candidates, latest arrival first, none of them sent
// before. Overlapping calls refused together recover one at a time: the
// first finds the working token and stores it, the next try it first (the
// stored token) instead of each refused candidate again.
func (c *call) Refused(ctx context.Context, sent string) bool {
	c.answered = true
	if !c.recovering {
		c.recovering = true
		c.b.recovering.Lock()
		stored, err := c.st.store.Get(ctx, c.key)
		if err != nil {
			return false // signed out meanwhile, or the store is down: nothing to try
		}
		seen := map[string]bool{sent: true, "": true}
		add := func(tok string) {
			if !seen[tok] {
				seen[tok] = true
				c.tries = append(c.tries, tok)
			}
		}
		add(stored.BankingToken.Reveal())
		for _, cand := range slices.Backward(stored.BankingCandidates) {
			add(cand.Reveal())
		}
	}
	if len(c.tries) == 0 {
		return false
	}
	c.next, c.tries = c.tries[0], c.tries[1:]
	return true
}

// End counts the call out of its burst, and hands the burst's arrivals to
// the request when it was the burst's last call (see hold).
//
// A call that ended without an answer may have been answered upstream with
// a refreshed token that was lost on the way: the token the session holds
// then works only for the upstream's grace period. The session is told
// (state.lost), to refresh its token while it still can. A call never
// attempted (an open breaker) or given up by its caller (a cancelled
// request) tells nobody.
func (c *call) End() {
	if c.recovering {
		c.b.recovering.Unlock()
	}
	c.st.hold(c.ctx, c.key, c.st.bursts.end(c.bk, c.b))
	if c.attempted && !c.answered && c.st.lost != nil && c.ctx.Err() == nil {
		c.st.lost(c.key)
	}
}

// writeBack records fresh, the token an answer of burst b carried, in the
// request's copy at once, and in b's pending arrivals, which reach the store
// when the burst ends (or has waited flushAfter): one store write per burst
// of calls instead of one per call (see flush).
func (st *state) writeBack(key string, b *burst, fresh string) {
	at := time.Now().UTC()
	st.setLocal(key, fresh, at)
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
// tokens of no followed call (SetToken), which belong to no burst.
func newer(tok string, at time.Time) func(*Session) error {
	return func(s *Session) error {
		if !at.After(s.BankingTokenAt) {
			return ErrNoChange
		}
		// Keep the replaced token: without the bursts, which of the two
		// is newer is not known.
		s.BankingCandidates = pushCandidate(s.BankingCandidates, s.BankingToken)
		s.BankingToken, s.BankingTokenAt = Secret(tok), at
		return nil
	}
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
// request's copy of the session; the calls made with it are followed
// (FollowCall), and SetToken writes back a token that reached the session
// outside them (a call made while the session had no banking token).
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
	key := st.token
	st.mu.Unlock()
	if key == "" {
		return nil
	}
	at := time.Now().UTC()
	st.setLocal(key, token, at)
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
	_ banking.CallFollower = (*tokenSource)(nil)
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

	recovering sync.Mutex // held by a call resending a refused token

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
