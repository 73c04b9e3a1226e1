package gqlhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/reply"
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

// Close codes of graphql-transport-ws besides the gateway's own
// (CloseUnauthorized, CloseForbidden, CloseTooMany).
const (
	closeBadMessage  = 4400
	closeInitTimeout = 4408
	closeDuplicateID = 4409
)

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

type initRefusalKey struct{}

type initRefusal struct {
	code   int
	reason string
}

// RefuseInit returns ctx telling both websocket transports how to close a
// connection whose connection_init the init function refuses: with code and
// reason (at most 123 bytes).
func RefuseInit(ctx context.Context, code int, reason string) context.Context {
	ctx = transport.WithWebsocketCloseCode(ctx, code)
	ctx = transport.AppendCloseReason(ctx, reason)
	return context.WithValue(ctx, initRefusalKey{}, initRefusal{code: code, reason: reason})
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

// wsVerdict is what handling a message decided: a close code and reason,
// or 0 to read on.
type wsVerdict struct {
	code   int
	reason string
}

// handle handles one message from the client (see read).
func (c *wsConn) handle(msg []byte, start time.Time) (v wsVerdict) {
	defer func() {
		if p := recover(); p != nil {
			v = wsVerdict{websocket.CloseInternalServerErr, "Internal error"}
		}
	}()
	var m wsIn
	if err := json.Unmarshal(msg, &m); err != nil {
		return wsVerdict{closeBadMessage, "Invalid message received"}
	}
	switch m.Type {
	case "connection_init":
		v.code, v.reason = c.initialise(m.Payload)
	case "ping":
		c.pong(m.Payload)
	case "pong":
		// The peer was heard from: the read deadline moved on reading.
	case "subscribe":
		switch {
		case !c.acked:
			v = wsVerdict{CloseUnauthorized, "Unauthorized"}
		case m.ID == "":
			v = wsVerdict{closeBadMessage, "Invalid message received: subscribe without an id"}
		default:
			op, full := c.add(m.ID)
			switch {
			case full:
				// Refused from the reader, before any goroutine: the
				// next message is read once this answer is written.
				refused := &wsOp{c: c, id: m.ID}
				refused.sendErrors(gqlerror.List{{Message: tooManyOperations,
					Extensions: map[string]any{"code": string(gqlerr.RateLimited)}}})
			case op == nil:
				return wsVerdict{closeDuplicateID, "Subscriber for the id already exists"}
			default:
				go op.start(m.Payload, graphql.TraceTiming{Start: start, End: graphql.Now()})
			}
		}
	case "complete":
		c.mu.Lock()
		op := c.op(m.ID)
		if op != nil {
			// The id is free at once; nothing more is sent for it.
			op.completed.Store(true)
			c.remove(op)
		}
		c.mu.Unlock()
		if op != nil {
			op.stop()
		}
	default:
		v = wsVerdict{closeBadMessage, "Invalid message received: unknown type"}
	}
	return v
}

// initialise answers connection_init; a non-zero code closes the
// connection.
func (c *wsConn) initialise(payload json.RawMessage) (int, string) {
	if c.acked || !c.init.CompareAndSwap(0, 1) {
		if c.init.Load() == 2 {
			return 0, "" // the init timeout closed the connection
		}
		return CloseTooMany, "Too many initialisation requests"
	}
	if c.initTimer != nil {
		c.initTimer.Stop()
		c.initTimer = nil
	}
	var p transport.InitPayload
	if len(payload) > 0 && !bytes.Equal(payload, []byte("null")) {
		if err := json.Unmarshal(payload, &p); err != nil {
			return closeBadMessage, "Invalid message received: connection_init payload is not an object"
		}
	}
	var ack *transport.InitPayload
	if c.initFunc != nil {
		ctx, a, err := c.initFunc(c.ctx, p)
		if err != nil {
			if ctx != nil {
				if r, ok := ctx.Value(initRefusalKey{}).(initRefusal); ok {
					return r.code, r.reason
				}
			}
			return CloseForbidden, "Forbidden"
		}
		c.ctx, ack = ctx, a
	}
	msg := []byte(`{"type":"connection_ack"}`)
	if ack != nil {
		b, err := json.Marshal(*ack)
		if err != nil {
			return closeBadMessage, "Internal error"
		}
		msg = append(append([]byte(`{"type":"connection_ack","payload":`), b...), '}')
	}
	c.acked = true
	c.send(msg)
	return 0, ""
}

// initExpired runs on the init timer: no connection_init in time.
func (c *wsConn) initExpired() {
	if c.init.CompareAndSwap(0, 2) {
		_ = c.gc.WriteClose(closeInitTimeout, "Connection initialisation timeout")
		_ = c.gc.Close()
	}
}

func (c *wsConn) pong(payload json.RawMessage) {
	if len(payload) == 0 {
		c.send([]byte(`{"type":"pong"}`))
		return
	}
	c.send(append(append([]byte(`{"type":"pong","payload":`), payload...), '}'))
}

// add registers the operation id and takes its place; it returns nil when
// one with that id runs, and full when the connection's operations are
// at the cap.
func (c *wsConn) add(id string) (op *wsOp, full bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.op(id) != nil {
		return nil, false
	}
	if c.maxOps > 0 && c.running >= c.maxOps {
		return nil, true
	}
	op = &wsOp{c: c, id: id}
	op.ctx, op.cancel = context.WithCancel(c.ctx)
	c.ops = append(c.ops, op)
	c.running++
	return op, false
}

// remove lets go of the id of op. Call with mu held.
func (c *wsConn) remove(op *wsOp) {
	for i, o := range c.ops {
		if o == op {
			c.ops = slices.Delete(c.ops, i, i+1)
			return
		}
	}
}

// op returns the running operation id, or nil. Call with mu held.
func (c *wsConn) op(id string) *wsOp {
	for _, op := range c.ops {
		if op.id == id {
			return op
		}
	}
	return nil
}

// send writes one text message; a connection that cannot take it (the
// peer left, or reads too slowly for the write deadline) is closed, and
// its read loop ends it.
func (c *wsConn) send(b []byte) {
	if err := c.gc.writeText(b); err != nil {
		_ = c.gc.Close()
	}
}

// end closes the connection (with code, when not 0), ends its operations
// and runs CloseFunc.
func (c *wsConn) end(code int, reason string) {
	if code != 0 {
		_ = c.gc.WriteClose(code, reason)
	}
	_ = c.gc.Close()
	if c.initTimer != nil {
		c.initTimer.Stop()
	}
	c.mu.Lock()
	c.closed = true
	ops := c.ops
	c.ops = nil
	c.mu.Unlock()
	for _, op := range ops {
		op.stop()
	}
	if c.closeFunc != nil {
		c.closeFunc(c.ctx, code)
	}
}

// wsOp is one operation on a connection.
type wsOp struct {
	c      *wsConn
	id     string
	ctx    context.Context
	cancel context.CancelFunc

	mu sync.Mutex
	oc *graphql.OperationContext
	h  graphql.ResponseHandler
	// hctx is the context DispatchOperation returned, which h is called
	// with.
	hctx context.Context
	// claimed: the producer signals (ClaimStream). ready: h is set and
	// the operation runs on signals.
	claimed, ready bool
	// pending counts the values signalled and not yet handled; closed
	// the producer's close; stopped the client's complete or the
	// connection's end.
	pending         int
	closed, stopped bool
	// running is set while a goroutine handles signals.
	running, finished bool
	// completed is set when the client completed the operation: nothing
	// more is sent for it.
	completed atomic.Bool
}

type streamClaimKey = reply.StreamKey

// start runs the subscribe message's operation, on a goroutine of its own.
func (op *wsOp) start(payload json.RawMessage, read graphql.TraceTiming) {
	defer op.recover()
	exec := op.c.exec
	params := &graphql.RawParams{}
	if err := decodeObject(bytes.NewReader(payload), params); err != nil {
		op.sendErrors(gqlerror.List{{Message: "the subscribe payload must be a JSON object with query, variables, operationName and extensions",
			Extensions: map[string]any{"code": string(gqlerr.BadUserInput)}}})
		op.finish(false)
		return
	}
	// No Headers: the upgrade request's served the session at the
	// upgrade and at connection_init, and keeping them for the
	// connection's operations would keep them for its whole life; nothing
	// in the gateway reads an operation's headers.
	params.ReadTime = read
	ctx := graphql.StartOperationTrace(op.ctx)
	oc, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, oc), errs)
		if errcode.GetErrorKind(errs) == errcode.KindProtocol {
			// The document never ran: an error message ends the
			// operation, with no complete after it.
			op.sendErrors(resp.Errors)
			op.finish(false)
			return
		}
		op.sendNext(resp)
		op.finish(true)
		return
	}
	op.mu.Lock()
	op.oc = oc
	op.mu.Unlock()
	ctx = context.WithValue(graphql.WithOperationContext(ctx, oc), streamClaimKey{}, op)
	h, hctx := exec.DispatchOperation(ctx, oc)
	op.mu.Lock()
	op.h, op.hctx = h, hctx
	if op.claimed {
		op.ready = true
		kick := !op.running && (op.pending > 0 || op.closed || op.stopped)
		op.running = op.running || kick
		op.mu.Unlock()
		if kick {
			op.run()
		}
		return
	}
	op.mu.Unlock()
	for {
		r := h(hctx)
		if r == nil {
			break
		}
		op.sendNext(r)
	}
	op.finish(true)
}

// run handles the signals of a claimed stream until none is waiting, one
// response handler call at a time.
func (op *wsOp) run() {
	defer op.recover()
	for {
		op.mu.Lock()
		stopped, closed, one := op.stopped, op.closed, false
		switch {
		case op.finished:
			op.running = false
			op.mu.Unlock()
			return
		case stopped, closed:
		case op.pending > 0:
			op.pending--
			one = true
		default:
			op.running = false
			op.mu.Unlock()
			return
		}
		op.mu.Unlock()
		switch {
		case stopped:
			// The operation's context has ended, so the producer adds
			// nothing and each call returns at once: with a value still
			// in the channel (gqlgen's select picks at random between it
			// and the context's end) or nil, which releases the
			// operation's place on the connection. Calls go on until
			// that nil; values and a reason the producer left are not
			// sent.
			for range maxDrain {
				if op.h(op.hctx) == nil {
					break
				}
			}
			op.finish(true)
		case closed:
			// What the channel still holds, then the end.
			for {
				r := op.h(op.hctx)
				if r == nil {
					break
				}
				op.sendNext(r)
			}
			op.finish(true)
		case one:
			if r := op.h(op.hctx); r != nil {
				op.sendNext(r)
			} else {
				op.finish(true)
			}
		}
	}
}

// maxDrain bounds the calls that drain a stopped subscription's channel:
// far more than a channel and its backlog hold, a bound only against a
// producer that would go on sending after its context ended.
const maxDrain = 4096

// stop ends the operation early: the client's complete or the
// connection's end.
func (op *wsOp) stop() {
	op.cancel()
	op.note(func() { op.stopped = true })
}

// signal records a value sent (closed false) or the channel's close.
func (op *wsOp) signal(closed bool) {
	op.note(func() {
		if closed {
			op.closed = true
		} else {
			op.pending++
		}
	})
}

// note records what happened (record runs under mu) unless the operation
// has finished, and starts a goroutine to handle it when the operation
// runs on signals and none is handling them.
func (op *wsOp) note(record func()) {
	op.mu.Lock()
	if op.finished {
		op.mu.Unlock()
		return
	}
	record()
	kick := op.ready && !op.running
	op.running = op.running || kick
	op.mu.Unlock()
	if kick {
		go op.run()
	}
}

// finish ends the operation once: its context, its id, and a complete
// message when complete is set and the connection is open.
func (op *wsOp) finish(complete bool) {
	op.mu.Lock()
	if op.finished {
		op.mu.Unlock()
		return
	}
	op.finished = true
	op.mu.Unlock()
	op.cancel()
	c := op.c
	c.mu.Lock()
	c.remove(op)
	c.running--
	open := !c.closed
	c.mu.Unlock()
	if complete && open {
		op.send("complete", nil, nil)
	}
}

// recover ends an operation whose execution panicked outside gqlgen's own
// recovery, as gqlgen's transport does: an error message, then no more.
func (op *wsOp) recover() {
	v := recover()
	if v == nil {
		return
	}
	op.mu.Lock()
	oc := op.oc
	op.mu.Unlock()
	if oc != nil && oc.RecoverFunc != nil {
		_ = oc.RecoverFunc(op.ctx, v)
	}
	op.sendErrors(gqlerror.List{{Message: gqlerr.InternalMessage, Extensions: map[string]any{"code": string(gqlerr.Internal)}}})
	op.finish(false)
}

func (op *wsOp) sendNext(r *graphql.Response) {
	op.send("next", r, nil)
}

func (op *wsOp) sendErrors(errs gqlerror.List) {
	op.send("error", nil, errs)
}

// wsBuffers are the buffers messages are framed in.
var wsBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// send writes a message of the operation: a response (next), errors
// (error) or neither (complete).
func (op *wsOp) send(typ string, r *graphql.Response, errs gqlerror.List) {
	if op.completed.Load() {
		return
	}
	id, err := json.Marshal(op.id)
	if err != nil {
		return
	}
	b := wsBuffers.Get().(*bytes.Buffer)
	b.Reset()
	b.WriteString(`{"id":`)
	b.Write(id)
	b.WriteString(`,"type":"`)
	b.WriteString(typ)
	b.WriteByte('"')
	switch {
	case r != nil:
		b.WriteString(`,"payload":`)
		writeResponse(b, r)
	case errs != nil:
		p, err := json.Marshal(errs)
		if err != nil {
			p = []byte(`[{"message":"` + gqlerr.InternalMessage + `","extensions":{"code":"` + string(gqlerr.Internal) + `"}}]`)
		}
		b.WriteString(`,"payload":`)
		b.Write(p)
	}
	b.WriteByte('}')
	op.c.send(b.Bytes())
	if b.Cap() <= 64<<10 {
		wsBuffers.Put(b)
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
