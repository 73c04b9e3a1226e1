package gqlhttp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// signalExec runs every operation as a stream of the values its test puts
// in: an operation whose query is "claim" claims the stream signal, as the
// live events' producer does; any other is read by a goroutine of the
// transport.
type signalExec struct{ opened chan *testStream }

type testStream struct {
	ch     chan string
	signal *StreamSignal
	// released is set once the response handler has said the end (nil).
	released atomic.Bool
}

func (e *signalExec) CreateOperationContext(_ context.Context, p *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	return &graphql.OperationContext{RawQuery: p.Query}, nil
}

func (e *signalExec) DispatchError(_ context.Context, errs gqlerror.List) *graphql.Response {
	return &graphql.Response{Errors: errs}
}

func (e *signalExec) DispatchOperation(ctx context.Context, oc *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	s := &testStream{ch: make(chan string, 8)}
	if oc.RawQuery == "claim" {
		s.signal = ClaimStream(ctx)
	}
	e.opened <- s
	return func(ctx context.Context) *graphql.Response {
		select {
		case v, ok := <-s.ch:
			if !ok {
				s.released.Store(true)
				return nil
			}
			return &graphql.Response{Data: json.RawMessage(`"` + v + `"`)}
		case <-ctx.Done():
			s.released.Store(true)
			return nil
		}
	}, ctx
}

func (s *testStream) send(v string) {
	s.ch <- v
	s.signal.Sent()
}

func (s *testStream) close() {
	close(s.ch)
	s.signal.Closed()
}

type testWS struct {
	t    *testing.T
	conn *websocket.Conn
}

func dialTransportWS(t *testing.T, exec *signalExec) *testWS {
	t.Helper()
	return dialTransport(t, TransportWS{}, exec)
}

func dialTransport(t *testing.T, tr TransportWS, exec *signalExec) *testWS {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.Do(w, r, exec)
	}))
	t.Cleanup(srv.Close)
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	c := &testWS{t: t, conn: conn}
	c.send(`{"type":"connection_init"}`)
	if m := c.read(); m.Type != "connection_ack" {
		t.Fatalf("want connection_ack, got %+v", m)
	}
	return c
}

func (c *testWS) send(msg string) {
	c.t.Helper()
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		c.t.Fatal(err)
	}
}

type testMsg struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// read returns the next message; the deadline only bounds a hung test.
func (c *testWS) read() testMsg {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	var m testMsg
	if err := c.conn.ReadJSON(&m); err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return m
}

// waitFor waits until cond holds, failing the test if it never does.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Subscriptions whose producer signals hold no goroutine while they wait,
// however many one socket holds; one whose producer does not is read by a
// goroutine of its own, as before, and works alongside. Each value is one next message, in
// order, and the producer's close completes the subscription.
func TestSignalledSubscriptionsHoldNoGoroutine(t *testing.T) {
	exec := &signalExec{opened: make(chan *testStream, 100)}
	c := dialTransportWS(t, exec)
	settled := runtime.NumGoroutine()

	const subs = 50
	streams := make([]*testStream, subs)
	for i := range streams {
		c.send(fmt.Sprintf(`{"id":"%d","type":"subscribe","payload":{"query":"claim"}}`, i))
		streams[i] = <-exec.opened
		if streams[i].signal == nil {
			t.Fatal("the operation's stream could not be claimed")
		}
	}
	// Each subscription proves itself live with a value.
	for i, s := range streams {
		s.send(fmt.Sprint("v", i))
		if m := c.read(); m.Type != "next" || m.ID != fmt.Sprint(i) || string(m.Payload) != fmt.Sprintf(`{"data":"v%d"}`, i) {
			t.Fatalf("subscription %d: %+v", i, m)
		}
	}
	// What handled the values ends; a goroutine per waiting subscription
	// would stay.
	waitFor(t, "no goroutine left per signalled subscription", func() bool { return runtime.NumGoroutine() <= settled+2 })

	c.send(`{"id":"fallback","type":"subscribe","payload":{"query":"{ x }"}}`)
	fallback := <-exec.opened
	fallback.ch <- "f"
	if m := c.read(); m.Type != "next" || m.ID != "fallback" {
		t.Fatalf("unclaimed subscription: %+v", m)
	}

	s := streams[0]
	s.send("a")
	s.send("b")
	s.close()
	for _, want := range []string{`next {"data":"a"}`, `next {"data":"b"}`, "complete "} {
		if m := c.read(); m.ID != "0" || m.Type+" "+string(m.Payload) != want {
			t.Fatalf("want %s, got %+v", want, m)
		}
	}
	if !s.released.Load() {
		t.Error("the response handler was not read to its end")
	}
}

// A client's complete ends a signalled subscription that waits: the
// response handler is called once more with the operation's context ended
// (which releases the operation's place), and nothing more is sent for it,
// as graphql-ws's reference server does; its id is free at once.
func TestCompleteReleasesAWaitingSubscription(t *testing.T) {
	exec := &signalExec{opened: make(chan *testStream, 1)}
	c := dialTransportWS(t, exec)
	c.send(`{"id":"1","type":"subscribe","payload":{"query":"claim"}}`)
	s := <-exec.opened
	c.send(`{"id":"1","type":"complete"}`)
	waitFor(t, "the response handler called after the client's complete", s.released.Load)
	// The id is free again, and the old operation sent nothing.
	c.send(`{"id":"1","type":"subscribe","payload":{"query":"claim"}}`)
	s = <-exec.opened
	s.send("again")
	if m := c.read(); m.ID != "1" || m.Type != "next" {
		t.Fatalf("the id after its complete: %+v", m)
	}
}

// A peer that stops answering is dropped once it has been silent for the
// peer timeout, subscriptions and all: the keep-alive timer pings it, and
// the reader's deadline ends the connection, which ends its operations.
func TestSilentPeerIsDroppedWithItsSubscriptions(t *testing.T) {
	exec := &signalExec{opened: make(chan *testStream, 1)}
	tr := TransportWS{Socket: GorillaWebsocket{KeepAlive: 20 * time.Millisecond, PeerTimeout: 200 * time.Millisecond}}
	c := dialTransport(t, tr, exec)
	c.send(`{"id":"1","type":"subscribe","payload":{"query":"claim"}}`)
	s := <-exec.opened
	// The client reads nothing from now on, so answers no ping.
	waitFor(t, "the silent peer's subscription ended", s.released.Load)
}

// A complete that arrives while values wait in the channel still releases
// the operation: gqlgen's select picks at random between a waiting value
// and the context's end, so the handler is called until it says the end,
// however many values come first.
func TestCompleteWithValuesWaitingReleasesTheSubscription(t *testing.T) {
	exec := &signalExec{opened: make(chan *testStream, 1)}
	c := dialTransportWS(t, exec)
	for i := range 40 {
		id := fmt.Sprint(i)
		c.send(`{"id":"` + id + `","type":"subscribe","payload":{"query":"claim"}}`)
		s := <-exec.opened
		for range cap(s.ch) {
			s.ch <- "waiting" // in the channel, not yet signalled
		}
		c.send(`{"id":"` + id + `","type":"complete"}`)
		waitFor(t, fmt.Sprintf("round %d: the response handler said the end, so the operation's place was freed", i), s.released.Load)
	}
}
