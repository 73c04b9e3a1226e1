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

// Sockets tracks this replica's websocket connections by session, and ends
// them when their session ends on any replica or reaches its expiry.
type Sockets struct {
	logger *slog.Logger
	// MaxPerSession caps one session's connections on this replica; 0 is
	// no cap.
	MaxPerSession int

	mu    sync.Mutex
	byKey map[string]map[*socket]struct{}
}

type socket struct {
	once  sync.Once
	end   func()
	timer *time.Timer
}

func (s *socket) close() {
	s.once.Do(func() {
		s.timer.Stop()
		s.end()
	})
}

// NewSockets returns an empty registry.
func NewSockets(logger *slog.Logger) *Sockets {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Sockets{logger: logger, byKey: map[string]map[*socket]struct{}{}}
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
	s.mu.Unlock()
	for c := range conns {
		c.close()
	}
	if len(conns) > 0 {
		s.logger.Info("session ended; its websocket connections closed", "connections", len(conns))
	}
}

// track registers end under key until untrack is called; end runs at most
// once, when the session ends or at expires.
func (s *Sockets) track(key string, expires time.Time, end func()) (untrack func(), err error) {
	c := &socket{end: end}
	s.mu.Lock()
	if s.MaxPerSession > 0 && len(s.byKey[key]) >= s.MaxPerSession {
		s.mu.Unlock()
		return nil, ErrTooManySockets
	}
	if s.byKey[key] == nil {
		s.byKey[key] = map[*socket]struct{}{}
	}
	s.byKey[key][c] = struct{}{}
	// The timer is created under the lock so close never sees it nil.
	c.timer = time.AfterFunc(time.Until(expires), func() {
		s.forget(key, c)
		c.close()
	})
	s.mu.Unlock()
	return func() {
		s.forget(key, c)
		c.timer.Stop()
	}, nil
}

func (s *Sockets) forget(key string, c *socket) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if conns := s.byKey[key]; conns != nil {
		delete(conns, c)
		if len(conns) == 0 {
			delete(s.byKey, key)
		}
	}
}

// ErrTooManySockets refuses a connection over the per-session cap.
var ErrTooManySockets = errors.New("session: too many connections for this session")

// ErrEnded is returned by Recheck when the connection's session has ended.
var ErrEnded = errors.New("session: ended")

// TrackSocket ties a websocket connection to the session in ctx (from the
// upgrade's cookie or connection_init): end runs when that session ends. A
// connection without a session, or on sandbox mode's shared anonymous
// session, is not tracked (untrack is a no-op).
// It refuses a connection over Sockets.MaxPerSession with
// ErrTooManySockets.
func (h *Handler) TrackSocket(ctx context.Context, end func()) (untrack func(), err error) {
	st := stateFrom(ctx)
	if st == nil || h.Sockets == nil {
		return func() {}, nil
	}
	st.mu.Lock()
	token, sess, shared := st.token, st.sess, st.anonymous
	st.mu.Unlock()
	if token == "" || sess == nil || shared {
		return func() {}, nil
	}
	return h.Sockets.track(Key(token), sess.ExpiresAt, end)
}

// Recheck confirms that the session of a long-lived connection still exists
// before an operation starts on it: a session ended on another replica
// must not run one more operation here while its close is under way.
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
	// The connection's copy of the banking token may have been superseded
	// by the session's other requests long ago (its calls send the copy):
	// take the stored one, as a request does when it begins.
	st.setLocal(token, stored.BankingToken.Reveal(), stored.BankingTokenAt)
	return nil
}
