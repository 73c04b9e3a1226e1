package gqlhttp

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"io"
	"net"
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
//
// With KeepAlive set, the adapter keeps the connection alive and detects a
// dead peer itself, on a timer instead of gqlgen's ping loop (gqlgen's
// KeepAlivePingInterval and PingPongInterval stay 0): gqlgen's loop is a
// goroutine per socket for its whole life, a third of what an idle
// subscription cost; a timer holds no goroutine between ticks. Each tick
// sends the protocol's keep-alive message (graphql-transport-ws "ping",
// graphql-ws "ka") and a websocket ping frame; every message or pong (frame
// or protocol message) from the peer moves the read deadline PeerTimeout
// ahead, and a peer silent past it fails gqlgen's read loop, which closes
// the connection as gqlgen's own pong timeout did.
type GorillaWebsocket struct {
	Upgrader websocket.Upgrader
	// KeepAlive is the interval of keep-alive messages; 0 sends none and
	// sets no read deadline.
	KeepAlive time.Duration
	// PeerTimeout is how long the peer may stay silent (no message, no
	// pong) before the connection is dropped; 0 means 2×KeepAlive + 10 s.
	PeerTimeout time.Duration
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
	// The upgrade is done: let go of net/http's writer and tell
	// serveSocket, whose HTTP handler can now return.
	if dw, ok := w.(*detachedWriter); ok {
		dw.detach()
	}
	gc := &gorillaConn{conn: conn}
	if g.KeepAlive > 0 {
		gc.startKeepAlive(g.KeepAlive, cmp.Or(g.PeerTimeout, 2*g.KeepAlive+10*time.Second))
	}
	if slot, ok := r.Context().Value(slotKey{}).(*socketSlot); ok {
		slot.set(gc)
		if slot.upgraded != nil {
			close(slot.upgraded)
		}
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
		// ownCap is set when the transport caps the connection's
		// operations itself (TransportWS).
		ownCap atomic.Bool
		// place is the connection's long-lived place (admission.go);
		// guarded by mu.
		place socketPlace
		// upgraded, when set, is closed once the connection is upgraded
		// (see Handler.serveSocket).
		upgraded chan struct{}
		// done, when set, runs once the connection has ended; a transport
		// that serves the connection on a goroutine of its own takes it
		// (takeDone), else it runs when the request's handler returns.
		done func()
	}
)

// takeDone hands the slot's done to the caller, which runs it when the
// connection ends; nil when there is none or it was taken.
func (s *socketSlot) takeDone() func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.done
	s.done = nil
	return d
}

// detachedWriter is the ResponseWriter of a websocket request served on its
// own goroutine: it passes everything to net/http's writer until the
// upgrade, then drops it, so that the connection's HTTP state can be freed
// (see Handler.serveSocket). After detach, writes go nowhere.
type detachedWriter struct {
	mu sync.Mutex
	w  http.ResponseWriter
}

func (d *detachedWriter) writer() http.ResponseWriter {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.w
}

func (d *detachedWriter) detach() {
	d.mu.Lock()
	d.w = nil
	d.mu.Unlock()
}

func (d *detachedWriter) Header() http.Header {
	if w := d.writer(); w != nil {
		return w.Header()
	}
	return http.Header{}
}

func (d *detachedWriter) Write(b []byte) (int, error) {
	if w := d.writer(); w != nil {
		return w.Write(b)
	}
	return 0, http.ErrHijacked
}

func (d *detachedWriter) WriteHeader(code int) {
	if w := d.writer(); w != nil {
		w.WriteHeader(code)
	}
}

// Hijack lets gorilla take the connection over; it asks for http.Hijacker
// directly.
func (d *detachedWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := d.writer().(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("gqlhttp: the response writer cannot be hijacked")
	}
	return h.Hijack()
}

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

type gorillaConn struct {
	conn *websocket.Conn
	// wmu orders text writes: gqlgen's (serialised by its own lock) and
	// the keep-alive timer's. Control frames need no lock in gorilla.
	wmu sync.Mutex

	keepAlive, peerTimeout time.Duration
	keepAliveMsg           []byte
	timer                  *time.Timer
	closed                 atomic.Bool
}

// Keep-alive messages of the two subprotocols gqlgen speaks; a connection
// without a subprotocol speaks graphql-ws.
var (
	transportWSPing    = []byte(`{"type":"ping"}`)
	graphqlWSKeepAlive = []byte(`{"type":"ka"}`)
)

func (c *gorillaConn) startKeepAlive(every, timeout time.Duration) {
	c.keepAlive, c.peerTimeout = every, timeout
	c.keepAliveMsg = graphqlWSKeepAlive
	if c.conn.Subprotocol() == "graphql-transport-ws" {
		c.keepAliveMsg = transportWSPing
	}
	c.alive()
	c.conn.SetPongHandler(func(string) error { c.alive(); return nil })
	c.timer = time.AfterFunc(every, c.tick)
}

// alive moves the read deadline: the peer was heard from.
func (c *gorillaConn) alive() {
	_ = c.conn.SetReadDeadline(time.Now().Add(c.peerTimeout))
}

// tick runs on the timer's own short-lived goroutine.
func (c *gorillaConn) tick() {
	if c.closed.Load() {
		return
	}
	c.wmu.Lock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	err := c.conn.WriteMessage(websocket.TextMessage, c.keepAliveMsg)
	c.wmu.Unlock()
	if err == nil {
		err = c.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(10*time.Second))
	}
	if err != nil || c.closed.Load() {
		// The connection is gone or going; gqlgen's read loop sees it.
		return
	}
	c.timer.Reset(c.keepAlive)
}

var (
	_ transport.WebsocketConn          = (*gorillaConn)(nil)
	_ transport.WebsocketReadLimiter   = (*gorillaConn)(nil)
	_ transport.WebsocketReadDeadliner = (*gorillaConn)(nil)
)

func (c *gorillaConn) Close() error {
	if !c.closed.Swap(true) && c.timer != nil {
		c.timer.Stop()
	}
	return c.conn.Close()
}

func (c *gorillaConn) NextReader() (int, io.Reader, error) {
	t, r, err := c.conn.NextReader()
	if err != nil {
		if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseNoStatusReceived, websocket.CloseGoingAway) {
			return 0, nil, transport.ErrWebsocketClosed
		}
		return 0, nil, err
	}
	if c.keepAlive > 0 {
		c.alive()
	}
	return t, r, nil
}

func (c *gorillaConn) WriteJSON(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.conn.WriteJSON(v)
}

// writeText writes one text message, under the same lock and deadline as
// WriteJSON; gorilla borrows its write buffer only for the call.
func (c *gorillaConn) writeText(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.conn.WriteMessage(websocket.TextMessage, b)
}

func (c *gorillaConn) WriteClose(code int, message string) error {
	err := c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, message), time.Now().Add(time.Second))
	if errors.Is(err, websocket.ErrCloseSent) {
		return nil
	}
	return err
}

func (c *gorillaConn) Subprotocol() string      { return c.conn.Subprotocol() }
func (c *gorillaConn) SetReadLimit(limit int64) { c.conn.SetReadLimit(limit) }

// SetReadDeadline serves gqlgen's pong handling. With the adapter's
// keep-alive, gqlgen clears the deadline (zero time) when a protocol pong
// arrives: that is the peer being heard from, so the deadline moves ahead
// instead of going away.
func (c *gorillaConn) SetReadDeadline(t time.Time) error {
	if t.IsZero() && c.keepAlive > 0 {
		c.alive()
		return nil
	}
	return c.conn.SetReadDeadline(t)
}
