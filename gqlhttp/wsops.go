package gqlhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/reply"
)

// The operations of a TransportWS connection: subscribe and complete, the
// connection's registry of operations in flight, and each operation's run,
// on a goroutine of its own or, for a subscription whose producer claims
// its stream (ClaimStream), on the producer's signals.

// subscribe starts the operation of a subscribe message; a verdict with a
// code closes the connection. An operation over the connection's cap is
// refused from the reader, before any goroutine: the next message is read
// once this answer is written.
func (c *wsConn) subscribe(id string, payload json.RawMessage, start time.Time) wsVerdict {
	switch {
	case !c.acked:
		return closeUnacknowledged
	case id == "":
		return closeNoID
	}
	op, full := c.add(id)
	switch {
	case full:
		refused := &wsOp{c: c, id: id}
		refused.sendErrors(gqlerror.List{{Message: tooManyOperations,
			Extensions: map[string]any{"code": string(gqlerr.RateLimited)}}})
	case op == nil:
		return closeIDInUse
	default:
		go op.start(payload, graphql.TraceTiming{Start: start, End: graphql.Now()})
	}
	return wsVerdict{}
}

// complete ends the operation id at the client's request: the id is free
// at once, and nothing more is sent for it.
func (c *wsConn) complete(id string) {
	c.mu.Lock()
	op := c.op(id)
	if op != nil {
		op.completed.Store(true)
		c.remove(op)
	}
	c.mu.Unlock()
	if op != nil {
		op.stop()
	}
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
