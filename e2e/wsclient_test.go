package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// wsClient is a graphql-transport-ws client over a real gorilla websocket,
// the way a dashboard subscribes.
type wsClient struct {
	t    *testing.T
	conn *websocket.Conn
}

type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// dialWS opens a websocket to /graphql and completes connection_init.
func (g *testGateway) dialWS(t *testing.T, header http.Header, initPayload map[string]any) *wsClient {
	t.Helper()
	c, err := g.tryDialWS(header)
	if err != nil {
		t.Fatalf("websocket dial: %v", err)
	}
	c.t = t
	t.Cleanup(c.close)
	if initPayload == nil && g.bearer != "" {
		initPayload = map[string]any{"sessionToken": g.bearer}
	}
	init, _ := json.Marshal(initPayload)
	c.send(wsMessage{Type: "connection_init", Payload: init})
	if m := c.read(); m.Type != "connection_ack" {
		t.Fatalf("want connection_ack, got %+v", m)
	}
	return c
}

func (g *testGateway) tryDialWS(header http.Header) (*wsClient, error) {
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 5 * time.Second}
	conn, resp, err := d.Dial(strings.Replace(g.URL, "http://", "ws://", 1)+"/graphql", header)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return nil, err
	}
	return &wsClient{conn: conn}, nil
}

func (c *wsClient) send(m wsMessage) {
	c.t.Helper()
	if err := c.conn.WriteJSON(m); err != nil {
		c.t.Fatalf("websocket write: %v", err)
	}
}

// read returns the next message that is not a keep-alive ping. The deadline
// only bounds a hung test (pings must not extend it); no assertion depends
// on timing.
func (c *wsClient) read() wsMessage {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_ = c.conn.SetReadDeadline(deadline)
		var m wsMessage
		if err := c.conn.ReadJSON(&m); err != nil {
			c.t.Fatalf("websocket read: %v", err)
		}
		if m.Type == "ping" {
			c.send(wsMessage{Type: "pong"})
			continue
		}
		return m
	}
}

func (c *wsClient) subscribe(id, query string, vars map[string]any) {
	c.t.Helper()
	p, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	c.send(wsMessage{ID: id, Type: "subscribe", Payload: p})
}

// liveEvent is one streamed event.
type liveEvent struct {
	Cursor string `json:"cursor"`
	Source string `json:"source"`
	Event  struct {
		ID             string         `json:"id"`
		UpstreamID     string         `json:"upstreamId"`
		Name           string         `json:"name"`
		Payload        map[string]any `json:"payload"`
		IndividualID   string         `json:"individualId"`
		OrderID        string         `json:"orderId"`
		PendingActions []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"pendingActions"`
	} `json:"event"`
}

const liveFields = `{ cursor source event { id upstreamId name payload individualId orderId pendingActions { id status } } }`

// next reads the next event of subscription id (field is the root field).
func (c *wsClient) next(id, field string) liveEvent {
	c.t.Helper()
	m := c.read()
	if m.Type != "next" || m.ID != id {
		c.t.Fatalf("want next for %s, got %s %s %s", id, m.Type, m.ID, m.Payload)
	}
	var p struct {
		Data   map[string]liveEvent `json:"data"`
		Errors []gqlError           `json:"errors"`
	}
	if err := json.Unmarshal(m.Payload, &p); err != nil || len(p.Errors) > 0 {
		c.t.Fatalf("subscription payload %s: %v %+v", m.Payload, err, p.Errors)
	}
	return p.Data[field]
}

func (c *wsClient) close() { _ = c.conn.Close() }

// cursorNow reads the newest event's cursor, so that a subscription with
// after: it misses nothing that happens once the test goes on: the server
// sets a subscription up asynchronously to the subscribe message.
func (g *testGateway) cursorNow(t *testing.T) string {
	t.Helper()
	var d struct {
		EventsCursor string `json:"eventsCursor"`
	}
	g.query(t, `{ eventsCursor }`, nil).decode(t, &d)
	return d.EventsCursor
}

// subscribeFromNow subscribes with $after set to the current cursor.
func (c *wsClient) subscribeFromNow(g *testGateway, id, query string, vars map[string]any) {
	c.t.Helper()
	if vars == nil {
		vars = map[string]any{}
	}
	vars["after"] = g.cursorNow(c.t)
	c.subscribe(id, query, vars)
}
