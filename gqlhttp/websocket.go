package gqlhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
)

// GorillaWebsocket adapts gorilla/websocket to gqlgen's websocket transport.
// It implements the optional read-limit and read-deadline interfaces too:
// without them gqlgen silently skips payload limits and pong timeouts.
type GorillaWebsocket struct {
	Upgrader websocket.Upgrader
}

var _ transport.WebsocketImplementation = GorillaWebsocket{}

// Accept upgrades the request, negotiating gqlgen's subprotocols.
func (g GorillaWebsocket) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	up := g.Upgrader
	up.Subprotocols = append(append([]string(nil), up.Subprotocols...), opts.Subprotocols...)
	conn, err := up.Upgrade(w, r, opts.ResponseHeader)
	if err != nil {
		return nil, err
	}
	gc := &gorillaConn{conn: conn}
	if slot, ok := r.Context().Value(slotKey{}).(*socketSlot); ok {
		slot.set(gc)
	}
	return gc, nil
}

// The websocket connection of an upgrade request is reachable from its
// context (and from every context derived from it: connection_init's and
// each operation's), so that the gateway can close it with a code of its
// choosing from outside gqlgen's read loop, for example when its session
// ends on another replica.
type (
	slotKey    struct{}
	cleanupKey struct{}
	socketSlot struct {
		mu   sync.Mutex
		conn *gorillaConn
		// ops counts the operations in flight on the connection,
		// subscriptions included.
		ops atomic.Int32
	}
)

func (s *socketSlot) set(c *gorillaConn) {
	s.mu.Lock()
	s.conn = c
	s.mu.Unlock()
}

func (s *socketSlot) get() *gorillaConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

// IsWebsocket reports whether ctx belongs to a websocket connection.
func IsWebsocket(ctx context.Context) bool {
	_, ok := ctx.Value(slotKey{}).(*socketSlot)
	return ok
}

// CloseSocket closes the websocket connection of ctx with code and reason
// (a close frame, then the TCP connection); gqlgen's read loop then ends
// the connection's operations. It reports whether there was a connection.
// Safe to call concurrently with gqlgen's writes: gorilla allows
// WriteControl and Close alongside them.
func CloseSocket(ctx context.Context, code int, reason string) bool {
	slot, ok := ctx.Value(slotKey{}).(*socketSlot)
	if !ok {
		return false
	}
	c := slot.get()
	if c == nil {
		return false
	}
	_ = c.WriteClose(code, reason)
	_ = c.Close()
	return true
}

// WithSocketCleanup returns ctx carrying f, which runs when the websocket
// connection of ctx closes, however it closes. connection_init uses it to
// stop tracking the connection.
func WithSocketCleanup(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, cleanupKey{}, f)
}

func runSocketCleanup(ctx context.Context, _ int) {
	if f, ok := ctx.Value(cleanupKey{}).(func()); ok {
		f()
	}
}

type gorillaConn struct{ conn *websocket.Conn }

var (
	_ transport.WebsocketConn          = (*gorillaConn)(nil)
	_ transport.WebsocketReadLimiter   = (*gorillaConn)(nil)
	_ transport.WebsocketReadDeadliner = (*gorillaConn)(nil)
)

func (c *gorillaConn) Close() error { return c.conn.Close() }

func (c *gorillaConn) NextReader() (int, io.Reader, error) {
	t, r, err := c.conn.NextReader()
	if err != nil {
		if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseNoStatusReceived, websocket.CloseGoingAway) {
			return 0, nil, transport.ErrWebsocketClosed
		}
		return 0, nil, err
	}
	return t, r, nil
}

func (c *gorillaConn) WriteJSON(v any) error {
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.conn.WriteJSON(v)
}

func (c *gorillaConn) WriteClose(code int, message string) error {
	err := c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, message), time.Now().Add(time.Second))
	if errors.Is(err, websocket.ErrCloseSent) {
		return nil
	}
	return err
}

func (c *gorillaConn) Subprotocol() string               { return c.conn.Subprotocol() }
func (c *gorillaConn) SetReadLimit(limit int64)          { c.conn.SetReadLimit(limit) }
func (c *gorillaConn) SetReadDeadline(t time.Time) error { return c.conn.SetReadDeadline(t) }
