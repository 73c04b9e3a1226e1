package gqlhttp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
)

// TransportWS serves the graphql-transport-ws subprotocol on the gorilla
// adapter with one goroutine per socket while its subscriptions are idle:
// the socket's reader (see wsConn.read). gqlgen's own websocket transport
// holds three per socket and subscription (its read loop, a goroutine that
// waits for the connection's end, and per subscription a loop blocked in
// the response handler until the next value), and their stacks were most
// of what an idle subscription cost.
//
// Operations go through gqlgen's executor as gqlgen's transport sends them
// (CreateOperationContext, DispatchOperation, the error presenter), so every
// extension, limit and middleware applies. A subscription whose producer
// claims the operation's stream signal (ClaimStream) has no goroutine while
// it waits: the producer signals after each value it puts into the channel
// and once it closes it, and each signal becomes one call of the response
// handler (which returns at once, a value is waiting) on a short-lived
// goroutine, one at a time per subscription, then one next message. Other
// operations (queries, mutations, live queries, subscriptions whose producer
// does not claim) run on a goroutine of their own until they end, as in
// gqlgen's transport.
//
// Legacy graphql-ws (subscriptions-transport-ws) clients are left to
// gqlgen's transport, registered after this one.
//
// This file reads a connection and dispatches its messages; connection_init
// and its authentication are wsinit.go, subscribe, complete and the
// operations wsops.go, close codes and their reasons wsclose.go, and the
// gorilla adapter under all of it websocket.go.
type TransportWS struct {
	// Socket upgrades the request and keeps the connection alive (see
	// GorillaWebsocket); it records the connection in the request's
	// socket slot, so that CloseSocket and Handler.Shutdown reach it.
	Socket GorillaWebsocket
	// InitFunc authenticates connection_init; RefuseInit in its context
	// chooses the close code of a refusal (4403 by default).
	InitFunc transport.WebsocketInitFunc
	// CloseFunc runs once the connection has ended, however it ended.
	CloseFunc transport.WebsocketCloseFunc
	// InitTimeout is how long a client may take to send connection_init.
	InitTimeout time.Duration
	// ReadLimit bounds one message from the client (0: no bound); gorilla
	// closes the connection with 1009 past it.
	ReadLimit int64
	// MaxOperations caps the operations in flight on one connection (0:
	// no cap). The place is taken as the subscribe message is read, before
	// any goroutine or buffer is spent on it; a subscribe over the cap is
	// answered from the reader with an error message (RATE_LIMITED), so a
	// client that sends faster than it reads waits for its answers.
	MaxOperations int
}

var _ graphql.Transport = TransportWS{}

const transportWSProtocol = "graphql-transport-ws"

// Supports implements graphql.Transport: an upgrade whose client prefers
// graphql-transport-ws among the subprotocols the gateway speaks.
func (TransportWS) Supports(r *http.Request) bool {
	if r.Header.Get("Upgrade") == "" {
		return false
	}
	for _, p := range websocket.Subprotocols(r) {
		switch p {
		case transportWSProtocol:
			return true
		case "graphql-ws":
			return false
		}
	}
	return false
}

// Do implements graphql.Transport. It returns once the connection is handed
// to its reader when the request has the gateway's socket slot (see
// Handler.serveSocket), else when the connection ends.
func (t TransportWS) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	wc, err := t.Socket.Accept(w, r, transport.WebsocketAcceptOptions{
		ResponseHeader: http.Header{},
		Subprotocols:   []string{transportWSProtocol},
	})
	if err != nil {
		return // the upgrader has answered (refuseUpgrade)
	}
	gc := wc.(*gorillaConn)
	if t.ReadLimit > 0 {
		gc.conn.SetReadLimit(t.ReadLimit)
	}
	c := &wsConn{initFunc: t.InitFunc, closeFunc: t.CloseFunc, exec: exec, gc: gc, ctx: r.Context(), maxOps: t.MaxOperations}
	if t.InitTimeout > 0 {
		c.initTimer = time.AfterFunc(t.InitTimeout, c.initExpired)
	}
	// The connection is read on goroutines of its own (see read), and
	// the request's handler returns at once when the gateway's socket slot
	// takes the connection's end; else it waits for the end.
	if slot, ok := r.Context().Value(slotKey{}).(*socketSlot); ok {
		slot.ownCap.Store(t.MaxOperations > 0)
		if c.done = slot.takeDone(); c.done != nil {
			go c.read()
			return
		}
	}
	ended := make(chan struct{})
	c.done = func() { close(ended) }
	go c.read()
	<-ended
}

// wsConn is one graphql-transport-ws connection.
type wsConn struct {
	initFunc  transport.WebsocketInitFunc
	closeFunc transport.WebsocketCloseFunc
	exec      graphql.GraphExecutor
	gc        *gorillaConn
	// ctx is the upgrade request's until connection_init is accepted,
	// then the init function's. Written while connection_init is handled,
	// before any operation starts; messages are handled one at a time.
	ctx context.Context

	// done runs once the connection has ended.
	done      func()
	initTimer *time.Timer
	// init is 0 until connection_init arrives or the init timeout
	// expires, then 1 (arrived) or 2 (expired).
	init  atomic.Int32
	acked bool // the reader's only

	maxOps int

	mu sync.Mutex
	// ops are the operations running whose id is in use, a handful at
	// most (the operations in flight are capped per connection): a slice,
	// smaller than a map. An operation the client completed leaves it at
	// once, freeing its id, as graphql-ws's reference server does, and
	// stays counted in running until it has wound down.
	ops     []*wsOp
	running int
	closed  bool
}

// wsIn is a message from the client.
type wsIn struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// read is the connection's reader: it waits for the next message, handles
// it, and hands the reading on to a new goroutine, so that the one
// goroutine an idle connection holds has only ever waited. Reading a
// message, decoding it, the init function and the writes grow a stack past
// what waiting needs, and the runtime shrinks a stack only while its
// goroutine uses under a quarter of it: a reader that had read would keep
// the larger stack for the connection's life. Client messages are few
// (connection_init, subscribe, complete, a pong per keep-alive tick).
// When the connection is gone or must close, read ends it.
func (c *wsConn) read() {
	_, rd, err := c.gc.conn.NextReader()
	if err == nil {
		start := graphql.Now()
		if c.gc.keepAlive > 0 {
			c.gc.alive()
		}
		var msg []byte
		if msg, err = io.ReadAll(rd); err == nil {
			if v := c.handle(msg, start); v.code != 0 {
				c.end(v.code, v.reason)
				c.done()
				return
			}
			go c.read()
			return
		}
	}
	// The peer left, the read deadline passed, gorilla refused an
	// oversized message with 1009, or the connection was closed from
	// outside.
	c.end(0, "")
	c.done()
}

// handle handles one message from the client (see read): connection_init
// (wsinit.go), subscribe and complete (wsops.go), ping and pong.
func (c *wsConn) handle(msg []byte, start time.Time) (v wsVerdict) {
	defer func() {
		if p := recover(); p != nil {
			v = closeInternal
		}
	}()
	var m wsIn
	if err := json.Unmarshal(msg, &m); err != nil {
		return closeInvalidMessage
	}
	switch m.Type {
	case "connection_init":
		return c.initialise(m.Payload)
	case "ping":
		c.pong(m.Payload)
	case "pong":
		// The peer was heard from: the read deadline moved on reading.
	case "subscribe":
		return c.subscribe(m.ID, m.Payload, start)
	case "complete":
		c.complete(m.ID)
	default:
		return closeUnknownType
	}
	return wsVerdict{}
}

func (c *wsConn) pong(payload json.RawMessage) {
	if len(payload) == 0 {
		c.send([]byte(`{"type":"pong"}`))
		return
	}
	c.send(append(append([]byte(`{"type":"pong","payload":`), payload...), '}'))
}

// send writes one text message; a connection that cannot take it (the
// peer left, or reads too slowly for the write deadline) is closed, and
// its read loop ends it.
func (c *wsConn) send(b []byte) {
	if err := c.gc.writeText(b); err != nil {
		_ = c.gc.Close()
	}
}

// StreamSignal is how the producer of a subscription's channel drives the
// graphql-transport-ws transport, so that no goroutine waits for the
// channel's next value: Sent after each value it puts into the channel,
// Closed after it closes it. Its methods do nothing on a nil StreamSignal.
type StreamSignal wsOp

// ClaimStream returns the stream signal of the subscription operation of
// ctx, or nil when the operation is not served so (another transport; an
// operation already claimed). A producer that claims must signal every
// value and the close, and call Unclaim if it then gives no channel (the
// resolver fails).
func ClaimStream(ctx context.Context) *StreamSignal {
	op, ok := ctx.Value(streamClaimKey{}).(*wsOp)
	if !ok {
		return nil
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.claimed || op.ready {
		return nil
	}
	op.claimed = true
	return (*StreamSignal)(op)
}

// Sent tells the transport one more value waits in the channel.
func (s *StreamSignal) Sent() {
	if s != nil {
		(*wsOp)(s).signal(false)
	}
}

// Closed tells the transport the channel is closed.
func (s *StreamSignal) Closed() {
	if s != nil {
		(*wsOp)(s).signal(true)
	}
}

// Unclaim gives the operation back to the transport's goroutine.
func (s *StreamSignal) Unclaim() {
	if s == nil {
		return
	}
	op := (*wsOp)(s)
	op.mu.Lock()
	if !op.ready {
		op.claimed = false
	}
	op.mu.Unlock()
}
