package session

import (
	"context"
	"errors"
	"time"
)

// Prover proves a session's credential to the upstream that issued it: nil
// when the upstream still honours it. ctx carries the session as its
// credential source (a refused banking token ends the session through the
// usual write-back path, see tokenSource.TokenRefused); an error that is no
// refusal (the upstream unavailable) leaves the session as it was.
type Prover func(ctx context.Context, s *Session) error

// standing judges a session that a request or connection presents against
// the ends of its authority (see Authority): a session whose authority
// ended is deleted (which closes its connections on every replica) and
// refused with an *Ending; one that must prove its credential does so, once
// per session at a time, and goes on with its updated copy.
func (h *Handler) standing(ctx context.Context, token string, sess *Session) (*Session, error) {
	if h.Authority == nil || len(sess.Grants) == 0 {
		return sess, nil
	}
	verdict, ending, err := h.Authority.Verdict(ctx, sess)
	if err != nil {
		return nil, err
	}
	switch verdict {
	case Revoked:
		h.drop(ctx, token)
		return nil, ending
	case MustProve:
		v, err, _ := h.proving.Do(Key(token), func() (any, error) {
			// Not the request's own deadline or cancellation: the
			// proof serves every request of the session waiting on it.
			pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), proveTimeout)
			defer cancel()
			return h.prove(pctx, token, sess, ending)
		})
		if err != nil {
			return nil, err
		}
		return v.(*Session), nil
	}
	return sess, nil
}

// proveTimeout bounds one proof, the upstream call and the session write.
const proveTimeout = 15 * time.Second

// prove asks the upstream whether it still honours sess's credential and
// records the generations it proved itself against.
func (h *Handler) prove(ctx context.Context, token string, sess *Session, ending *Ending) (*Session, error) {
	gens := make(map[string]uint64, len(sess.Grants))
	for g := range sess.Grants {
		r, err := h.Authority.lookup(ctx, g)
		if err != nil {
			return nil, err
		}
		gens[g] = r.Gen
	}
	if h.Prove == nil {
		// Nothing can prove it: the safe answer is the end.
		h.drop(ctx, token)
		return nil, ending
	}
	st := &state{store: h.store, logger: h.logger, bursts: h.bursts, token: token, sess: sess}
	if err := h.Prove(st.attach(ctx), sess); err != nil {
		if _, gerr := h.store.Get(ctx, token); errors.Is(gerr, ErrNotFound) {
			// The upstream refused the credential, and write-back ended
			// the session.
			return nil, ending
		}
		return nil, err
	}
	return h.store.Update(ctx, token, func(s *Session) error {
		changed := false
		for g, gen := range gens {
			if seen, ok := s.Grants[g]; ok && seen < gen {
				s.Grants[g] = gen
				changed = true
			}
		}
		if !changed {
			return ErrNoChange
		}
		return nil
	})
}

// answerLost refreshes, in the background, the banking token of the
// session of token after one of its calls ended without an answer: if the
// upstream did answer, with a refreshed token that was lost, the token the
// session holds works only for the upstream's grace period, and one read
// with it now returns the chain's newest (written back as every refreshed
// token is). One refresh per session at a time; the refresh's own lost
// answer asks for none.
func (h *Handler) answerLost(token string) {
	if h.Prove == nil {
		return
	}
	go func() {
		_, _, _ = h.proving.Do("refresh\x00"+Key(token), func() (any, error) {
			ctx, cancel := context.WithTimeout(context.Background(), proveTimeout)
			defer cancel()
			sess, err := h.store.Get(ctx, token)
			if err != nil || sess.BankingToken == "" {
				return nil, err
			}
			st := &state{store: h.store, logger: h.logger, bursts: h.bursts, token: token, sess: sess}
			if err := h.Prove(st.attach(ctx), sess); err != nil {
				h.logger.InfoContext(ctx, "could not refresh a session's banking token after a lost answer", "err", err)
			}
			return nil, nil
		})
	}()
}

// drop deletes a session whose authority ended.
func (h *Handler) drop(ctx context.Context, token string) {
	if err := h.store.Delete(context.WithoutCancel(ctx), token); err != nil {
		h.logger.WarnContext(ctx, "could not delete a session whose authority ended", "err", err)
	}
}

// FollowAuthority ends, or makes prove themselves, this replica's tracked
// connections whose authority ends on any replica, until ctx is done.
func (h *Handler) FollowAuthority(ctx context.Context) {
	if h.Authority == nil || h.Sockets == nil {
		return
	}
	h.Sockets.mu.Lock()
	h.Sockets.authority = h.Authority
	h.Sockets.mu.Unlock()
	h.Authority.Watch(ctx, func(grant string) { h.authorityChanged(ctx, grant) })
}

// authorityChanged applies a changed record of grant to the connections
// that rest on it: those it ended close at once, with the reason; those that
// must prove themselves do so on a goroutine each (one upstream call per
// session, see standing), and close if the upstream refuses them.
func (h *Handler) authorityChanged(ctx context.Context, grant string) {
	r, err := h.Authority.lookup(ctx, grant)
	if err != nil {
		return
	}
	for _, c := range h.Sockets.underGrant(grant) {
		c.mu.Lock()
		seen, ok := c.grants[grant]
		c.mu.Unlock()
		if !ok {
			continue
		}
		switch r.judge(c.id, seen) {
		case Revoked:
			h.Sockets.endOne(c, &Ending{Reason: r.Reason})
		case MustProve:
			go h.reprove(ctx, c)
		}
	}
}

// reprove re-reads a connection's session and judges it as a request
// would, closing the connection when it no longer stands.
func (h *Handler) reprove(ctx context.Context, c *socket) {
	sess, err := h.store.Get(ctx, c.token)
	if errors.Is(err, ErrNotFound) {
		h.Sockets.endOne(c, ErrEnded)
		return
	}
	if err != nil {
		// The next operation on the connection judges it again
		// (Recheck).
		h.logger.WarnContext(ctx, "could not re-read a connection's session", "err", err)
		return
	}
	sess, err = h.standing(ctx, c.token, sess)
	if errors.Is(err, ErrEnded) {
		h.Sockets.endOne(c, err)
		return
	}
	if err != nil {
		h.logger.WarnContext(ctx, "could not prove a connection's session", "err", err)
		return
	}
	c.mu.Lock()
	for g, gen := range sess.Grants {
		if _, ok := c.grants[g]; ok {
			c.grants[g] = gen
		}
	}
	c.mu.Unlock()
}
