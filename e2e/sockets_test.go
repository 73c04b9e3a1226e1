package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// closeCode reads until the server closes the connection and returns the
// close code; any other end of the read fails the test. Events that arrive
// first are returned too, so a test can assert that none did.
func (c *wsClient) closeCode() (int, []wsMessage) {
	c.t.Helper()
	var got []wsMessage
	_ = c.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		var m wsMessage
		err := c.conn.ReadJSON(&m)
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code, got
		}
		if err != nil {
			c.t.Fatalf("want a close frame, got %v", err)
		}
		if m.Type == "ping" {
			_ = c.conn.WriteJSON(wsMessage{Type: "pong"})
			continue
		}
		got = append(got, m)
	}
}

// Defects issue, item 2: signing out over HTTP ends the session's open
// subscriptions: the socket closes with 4401, and no event reaches it after.
func TestSignOutClosesTheSessionsSockets(t *testing.T) {
	g := startGateway(t)
	token := g.signInAPI(t)
	g = g.as(token)
	ws := g.dialWS(t, nil, nil)
	ws.subscribeFromNow(g, "1", `subscription($after: String) { events(after: $after) `+liveFields+` }`, nil)
	// A second connection of another session stays open.
	other := g.as(g.signInAPI(t))
	otherWS := other.dialWS(t, nil, nil)

	var so struct {
		SignOut bool `json:"signOut"`
	}
	g.query(t, `mutation { signOut }`, nil).decode(t, &so)
	if !so.SignOut {
		t.Fatal("signOut = false")
	}
	code, before := ws.closeCode()
	if code != 4401 {
		t.Errorf("close code %d, want 4401", code)
	}
	for _, m := range before {
		if m.Type == "next" {
			t.Errorf("an event reached the socket of an ended session: %s", m.Payload)
		}
	}
	// The other session's socket still runs operations.
	otherWS.subscribe("2", `subscription($after: String) { events(after: $after) { cursor } }`, map[string]any{"after": other.cursorNow(t)})
	otherWS.subscribe("3", `{ viewer { kind } }`, nil)
	if m := otherWS.read(); m.Type != "next" || m.ID != "3" || !strings.Contains(string(m.Payload), "API_CLIENT") {
		t.Errorf("another session's socket: %s %s %s", m.Type, m.ID, m.Payload)
	}
}

// Defects issue, item 7: a connection_init with an unknown or ended session
// is refused with 4403 (graphql-transport-ws's code for a refused init, which
// graphql-ws retries only with its bounded back-off, never the tight loop a
// 1000 caused), and an accepted one is acknowledged without echoing the
// init payload, which holds the session token.
func TestWebsocketInitRefusalAndAcknowledgement(t *testing.T) {
	g := startGateway(t)
	token := g.signInAPI(t)

	c, err := g.tryDialWS(nil)
	if err != nil {
		t.Fatal(err)
	}
	c.t = t
	defer c.close()
	c.send(wsMessage{Type: "connection_init", Payload: []byte(`{"sessionToken":"` + strings.Repeat("A", 43) + `"}`)})
	code, msgs := c.closeCode()
	if code != 4403 {
		t.Errorf("unknown session: close code %d, want 4403", code)
	}
	for _, m := range msgs {
		if m.Type == "connection_ack" {
			t.Errorf("an unknown session was acknowledged")
		}
	}

	c2, err := g.tryDialWS(nil)
	if err != nil {
		t.Fatal(err)
	}
	c2.t = t
	defer c2.close()
	c2.send(wsMessage{Type: "connection_init", Payload: []byte(`{"sessionToken":"` + token + `"}`)})
	ack := c2.read()
	if ack.Type != "connection_ack" {
		t.Fatalf("want connection_ack, got %+v", ack)
	}
	if strings.Contains(string(ack.Payload), token) || (len(ack.Payload) > 0 && string(ack.Payload) != "null" && string(ack.Payload) != "{}") {
		t.Errorf("connection_ack echoes a payload: %s", ack.Payload)
	}

	// An ended session is refused the same way.
	g.as(token).query(t, `mutation { signOut }`, nil)
	c3, err := g.tryDialWS(nil)
	if err != nil {
		t.Fatal(err)
	}
	c3.t = t
	defer c3.close()
	c3.send(wsMessage{Type: "connection_init", Payload: []byte(`{"sessionToken":"` + token + `"}`)})
	if code, _ := c3.closeCode(); code != 4403 {
		t.Errorf("ended session: close code %d, want 4403", code)
	}
}

// Defects issue, item 2, on a cookie-authenticated socket: the session that
// the upgrade's cookie carried ends its socket too.
func TestSignOutClosesCookieSockets(t *testing.T) {
	g := startGateway(t)
	token := g.signInAPI(t)
	h := http.Header{"Cookie": {"fingraph_session=" + token}}
	ws := g.dialWS(t, h, map[string]any{})
	ws.subscribeFromNow(g.as(token), "1", `subscription($after: String) { events(after: $after) `+liveFields+` }`, nil)
	g.as(token).query(t, `mutation { signOut }`, nil)
	if code, _ := ws.closeCode(); code != 4401 {
		t.Errorf("close code %d, want 4401", code)
	}
}

// Defects issue, item 10, through GraphQL: a cursor the stream has not
// reached, or one of another stream, is refused with BAD_USER_INPUT instead
// of a subscription that never receives anything.
func TestSubscriptionCursorsAreChecked(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	now := g.cursorNow(t)
	_, epoch, _ := strings.Cut(now, ".")
	ws := g.dialWS(t, nil, nil)
	for i, after := range []string{"99999999999", "99999999999." + epoch, "1.zzzzzz", "not-a-cursor"} {
		id := fmt.Sprint(i + 1)
		ws.subscribe(id, `subscription($after: String) { events(after: $after) { cursor } }`, map[string]any{"after": after})
		m := ws.read()
		if m.ID != id || (m.Type != "error" && m.Type != "next") || !strings.Contains(string(m.Payload), "BAD_USER_INPUT") {
			t.Errorf("after %q: %s %s", after, m.Type, m.Payload)
		}
		if m.Type == "next" {
			if c := ws.read(); c.Type != "complete" {
				t.Errorf("after %q: want complete, got %s", after, c.Type)
			}
		}
	}
}

// Abuse caps on websockets: one session's connections (20 per replica),
// the operations in flight on one connection (50), and one address's
// connections (200), each refused with a code the client can act on, while
// what is under the cap keeps working.
func TestWebsocketCapsPerSessionConnectionAndAddress(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	var open []*wsClient
	for range 20 {
		open = append(open, g.dialWS(t, nil, nil))
	}
	c, err := g.tryDialWS(nil)
	if err != nil {
		t.Fatal(err)
	}
	c.t = t
	c.send(wsMessage{Type: "connection_init", Payload: []byte(`{"sessionToken":"` + g.bearer + `"}`)})
	if code, _ := c.closeCode(); code != 4429 {
		t.Errorf("21st connection of one session: close %d, want 4429", code)
	}
	c.close()

	// 51 subscriptions on one connection: each takes its place as it is
	// read, so the 51st is refused, with an error message for its id.
	ws := open[0]
	after := g.cursorNow(t)
	for i := range 51 {
		ws.subscribe(fmt.Sprint(i), `subscription($after: String) { events(after: $after) { cursor } }`, map[string]any{"after": after})
	}
	m := ws.read()
	if m.ID != "50" || m.Type != "error" || !strings.Contains(string(m.Payload), "RATE_LIMITED") {
		t.Errorf("51 operations on one connection: %s %s %s", m.ID, m.Type, m.Payload)
	}
	// Completing one frees its place once it has wound down (nothing is
	// sent for it after the client's complete): a refused subscribe is
	// cheap, so the client may try again.
	ws.send(wsMessage{ID: "0", Type: "complete"})
	for try := 0; ; try++ {
		id := fmt.Sprint("again", try)
		ws.subscribe(id, `{ viewer { kind } }`, nil)
		r := ws.read()
		if r.ID != id {
			t.Fatalf("a message for another operation: %s %s %s", r.ID, r.Type, r.Payload)
		}
		if r.Type == "error" && strings.Contains(string(r.Payload), "RATE_LIMITED") && try < 1000 {
			continue
		}
		if r.Type != "next" || !strings.Contains(string(r.Payload), "API_CLIENT") {
			t.Errorf("an operation after one completed: %s %s", r.Type, r.Payload)
		}
		break
	}
	for _, c := range open {
		c.close()
	}

	// One address: 200 signed-in connections, and apart from them 50
	// anonymous ones and 64 waiting for a connection_init that signs them
	// in (see gqlhttp/admission.go).
	anon := startGateway(t)
	bearer := http.Header{"Authorization": {"Bearer " + anon.signInAPI(t)}}
	var conns []*wsClient
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	for _, budget := range []struct {
		what   string
		header http.Header
		n      int
	}{{"anonymous", nil, 50 + 64}, {"signed-in", bearer, 200}} {
		for i := range budget.n {
			c, err := anon.tryDialWS(budget.header)
			if err != nil {
				t.Fatalf("%s connection %d under the cap: %v", budget.what, i+1, err)
			}
			conns = append(conns, c)
		}
		if _, err := anon.tryDialWS(budget.header); err == nil || !strings.Contains(err.Error(), "bad handshake") {
			t.Errorf("%s connection over the cap from one address: %v", budget.what, err)
		}
	}
}

// The close codes graphql-transport-ws gives a client that breaks the
// protocol: a subscribe before connection_ack (4401), a second
// connection_init (4429), an id that is already running (4409), a message
// that is not the protocol's (4400), no connection_init in time (4408). A
// ping is answered with a pong, before connection_init too.
func TestWebsocketProtocolCloseCodes(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	raw := func() *wsClient {
		c, err := g.tryDialWS(nil)
		if err != nil {
			t.Fatal(err)
		}
		c.t = t
		t.Cleanup(c.close)
		return c
	}
	want := func(what string, c *wsClient, code int) {
		t.Helper()
		if got, _ := c.closeCode(); got != code {
			t.Errorf("%s: close code %d, want %d", what, got, code)
		}
	}

	c := raw()
	c.send(wsMessage{Type: "ping"})
	var m wsMessage
	_ = c.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	if err := c.conn.ReadJSON(&m); err != nil || m.Type != "pong" {
		t.Errorf("a ping before connection_init: %+v %v, want a pong", m, err)
	}
	c.subscribe("1", `{ viewer { kind } }`, nil)
	want("subscribe before connection_init", c, 4401)

	c = g.dialWS(t, nil, nil)
	c.send(wsMessage{Type: "connection_init", Payload: []byte(`{"sessionToken":"` + g.bearer + `"}`)})
	want("a second connection_init", c, 4429)

	c = g.dialWS(t, nil, nil)
	after := g.cursorNow(t)
	sub := `subscription($after: String) { events(after: $after) { cursor } }`
	c.subscribe("1", sub, map[string]any{"after": after})
	c.subscribe("1", sub, map[string]any{"after": after})
	want("an id already running", c, 4409)

	c = g.dialWS(t, nil, nil)
	c.send(wsMessage{ID: "1", Type: "next"})
	want("a server's message type from the client", c, 4400)

	c = g.dialWS(t, nil, nil)
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(`{"type":`)); err != nil {
		t.Fatal(err)
	}
	want("a message that is not JSON", c, 4400)

	want("no connection_init", raw(), 4408)
}

// A legacy client (subscriptions-transport-ws, subprotocol graphql-ws) is
// still served, by gqlgen's transport, with the same session and answers.
func TestLegacyGraphQLWSClientIsServed(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	d := websocket.Dialer{Subprotocols: []string{"graphql-ws"}, HandshakeTimeout: 5 * time.Second}
	conn, resp, err := d.Dial(strings.Replace(g.URL, "http://", "ws://", 1)+"/graphql", nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.Subprotocol(); p != "graphql-ws" {
		t.Fatalf("negotiated %q, want graphql-ws", p)
	}
	c := &wsClient{t: t, conn: conn}
	c.send(wsMessage{Type: "connection_init", Payload: []byte(`{"sessionToken":"` + g.bearer + `"}`)})
	c.send(wsMessage{ID: "1", Type: "start", Payload: []byte(`{"query":"{ viewer { kind } }"}`)})
	for {
		m := c.read()
		if m.Type == "connection_ack" || m.Type == "ka" {
			continue
		}
		if m.Type != "data" || m.ID != "1" || !strings.Contains(string(m.Payload), "API_CLIENT") {
			t.Fatalf("want the query's data, got %s %s %s", m.Type, m.ID, m.Payload)
		}
		break
	}
}
