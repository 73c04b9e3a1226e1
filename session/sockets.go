package session

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Ended reports, on every replica, the bucket keys (see Key) of sessions that
// ended: signed out, replaced, revoked, or expired and removed. A session
// that ends must end its websocket connections everywhere, not only on the
// replica that served the sign-out.
type Ended interface {
	// WatchEnded calls fn with the key of every session that ends from now
	// on, until ctx is done.
	WatchEnded(ctx context.Context, fn func(key string)) error
}

var _ Ended = (*JetStreamStore)(nil)

// Sockets tracks this replica's long-lived connections (websockets, event
// streams) by session and by the grants that session rests on, and ends
// them when their session ends on any replica, reaches its expiry, or loses
// its authority (see Authority).
type Sockets struct {
	logger *slog.Logger
	// MaxPerSession caps one session's connections on this replica; 0 is
	// no cap.
	MaxPerSession int

	// authority, once set (Handler.FollowAuthority), tells why a session
	// ended when an end of its authority is under way: a person blocked
	// whose token the upstream refused before the block's record arrived.
	authority *Authority

	mu      sync.Mutex
	byKey   map[string]map[*socket]struct{}
	byGrant map[string]map[*socket]struct{}
}

// socket is one tracked connection under one session.
type socket struct {
	key   string
	token string // to re-read the session when its authority asks for proof
	id    string // the session's id
	once  sync.Once
	end   func(error)
	timer *time.Timer

	// names are the grants' names, fixed at track: the registry's index.
	names []string

	mu     sync.Mutex
	grants map[string]uint64 // the generation held of each, as proofs raise it
}

func (s *socket) close(why error) {
	s.once.Do(func() {
		s.timer.Stop()
		s.end(why)
	})
}

// NewSockets returns an empty registry.
func NewSockets(logger *slog.Logger) *Sockets {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Sockets{logger: logger, byKey: map[string]map[*socket]struct{}{}, byGrant: map[string]map[*socket]struct{}{}}
}

// Run follows ended sessions until ctx is done. It returns once the watch
// is in place, so that a sign-out right after Run cannot be missed.
func (s *Sockets) Run(ctx context.Context, ended Ended) error {
	return ended.WatchEnded(ctx, s.End)
}

// End ends every tracked connection of the session with bucket key key.
func (s *Sockets) End(key string) {
	s.mu.Lock()
	conns := s.byKey[key]
	delete(s.byKey, key)
	for c := range conns {
		s.unindexLocked(c)
	}
	auth := s.authority
	s.mu.Unlock()
	for c := range conns {
		c.close(c.why(auth))
	}
	if len(conns) > 0 {
		s.logger.Info("session ended; its connections closed", "connections", len(conns))
	}
}

// why says why c's session ended: the end of authority under way for one
// of its grants, or that it just ended (ErrEnded). It reads memory only:
// it runs on the sessions watch.
func (c *socket) why(auth *Authority) error {
	if auth == nil {
		return ErrEnded
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for g, seen := range c.grants {
		if r, ok := auth.known(g); ok {
			if why, ok := r.cause(c.id, seen); ok {
				return &Ending{Reason: why}
			}
		}
	}
	return ErrEnded
}

// underGrant returns the connections of sessions that rest on grant.
func (s *Sockets) underGrant(grant string) []*socket {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*socket, 0, len(s.byGrant[grant]))
	for c := range s.byGrant[grant] {
		out = append(out, c)
	}
	return out
}

// endOne ends one connection, for an authority that ended.
func (s *Sockets) endOne(c *socket, why error) {
	s.forget(c)
	c.close(why)
}

// track registers a connection of the session sess (whose token is token)
// until it is forgotten; end runs at most once, when the session ends, its
// authority does, or at its expiry.
func (s *Sockets) track(token string, sess *Session, end func(error)) (*socket, error) {
	key := Key(token)
	c := &socket{key: key, token: token, id: sess.ID, end: end, grants: make(map[string]uint64, len(sess.Grants))}
	for g, gen := range sess.Grants {
		c.grants[g] = gen
		c.names = append(c.names, g)
	}
	s.mu.Lock()
	if s.MaxPerSession > 0 && len(s.byKey[key]) >= s.MaxPerSession {
		s.mu.Unlock()
		return nil, ErrTooManySockets
	}
	if s.byKey[key] == nil {
		s.byKey[key] = map[*socket]struct{}{}
	}
	s.byKey[key][c] = struct{}{}
	for _, g := range c.names {
		if s.byGrant[g] == nil {
			s.byGrant[g] = map[*socket]struct{}{}
		}
		s.byGrant[g][c] = struct{}{}
	}
	// The timer is created under the lock so close never sees it nil.
	c.timer = time.AfterFunc(time.Until(sess.ExpiresAt), func() {
		s.forget(c)
		c.close(ErrEnded)
	})
	s.mu.Unlock()
	return c, nil
}

func (s *Sockets) forget(c *socket) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if conns := s.byKey[c.key]; conns != nil {
		delete(conns, c)
		if len(conns) == 0 {
			delete(s.byKey, c.key)
		}
	}
	s.unindexLocked(c)
}

func (s *Sockets) unindexLocked(c *socket) {
	for _, g := range c.names {
		if conns := s.byGrant[g]; conns != nil {
			delete(conns, c)
			if len(conns) == 0 {
				delete(s.byGrant, g)
			}
		}
	}
}

// ErrTooManySockets refuses a connection over the per-session cap.
var ErrTooManySockets = errors.New("session: too many connections for this session")

// ErrEnded is returned by Recheck when the connection's session has ended.
// An *Ending says why, when an end of authority ended it.
var ErrEnded = errors.New("session: ended")

// conn is one long-lived connection's place in the registry. It follows
// the connection's session: a connection opened without one (or on the
// sandbox's shared anonymous session) that signs in over itself is tracked
// from then on under the new session, as if it had opened with it.
type conn struct {
	sockets *Sockets
	end     func(error)

	mu     sync.Mutex
	cur    *socket
	closed bool
}

// follow tracks the connection under the session of token (untracking it
// from any earlier one).
func (c *conn) follow(token string, sess *Session) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	next, err := c.sockets.track(token, sess, c.end)
	if err != nil {
		return err
	}
	if c.cur != nil {
		c.sockets.forget(c.cur)
		c.cur.timer.Stop()
	}
	c.cur = next
	return nil
}

// untrack forgets the connection: it has ended.
func (c *conn) untrack() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.cur != nil {
		c.sockets.forget(c.cur)
		c.cur.timer.Stop()
		c.cur = nil
	}
}

// TrackSocket ties a long-lived connection (a websocket from its upgrade's
// cookie or connection_init, an event stream) to the session in ctx: end
// runs, with the reason (ErrEnded, or an *Ending), when that session ends
// or its authority does. A connection without a session, or on sandbox
// mode's shared anonymous session, is tracked from the moment it signs in
// over itself. It refuses a connection over Sockets.MaxPerSession with
// ErrTooManySockets.
func (h *Handler) TrackSocket(ctx context.Context, end func(error)) (untrack func(), err error) {
	st := stateFrom(ctx)
	if st == nil || h.Sockets == nil {
		return func() {}, nil
	}
	c := &conn{sockets: h.Sockets, end: end}
	st.mu.Lock()
	token, sess, shared := st.token, st.sess, st.anonymous
	st.conn = c
	st.mu.Unlock()
	if token != "" && sess != nil && !shared {
		if err := c.follow(token, sess); err != nil {
			return nil, err
		}
	}
	return c.untrack, nil
}

// Recheck confirms that the session of a long-lived connection still exists
// and stands before an operation starts on it: a session ended on another
// replica must not run one more operation here while its close is under
// way.
func (h *Handler) Recheck(ctx context.Context) error {
	st := stateFrom(ctx)
	if st == nil {
		return nil
	}
	st.mu.Lock()
	token, shared := st.token, st.anonymous
	st.mu.Unlock()
	if token == "" || shared {
		return nil
	}
	stored, err := h.store.Get(ctx, token)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return ErrEnded
		}
		return err
	}
	if stored, err = h.standing(ctx, token, stored); err != nil {
		return err
	}
	// The connection's copy of the banking token may have been superseded
	// by the session's other requests long ago (its calls send the copy):
	// take the stored one, as a request does when it begins.
	st.setLocal(token, stored.BankingToken.Reveal(), stored.BankingTokenAt)
	return nil
}
