package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// @live queries (docs/live.md) over graphql-transport-ws, server-sent events
// and Apollo's multipart subscriptions, and subscriptions over the latter.

const liveWallets = `query @live { currentCorporation { wallets { id balance { amount } } } }`

// liveWait bounds the wait for a live answer after a change: a deadline on
// a wait for a condition, not a timing assertion (poll interval 1 s).
const liveWait = 6 * time.Second

type liveWalletsData struct {
	CurrentCorporation struct {
		Wallets []struct {
			ID      string `json:"id"`
			Balance struct {
				Amount int64 `json:"amount"`
			} `json:"balance"`
		} `json:"wallets"`
	} `json:"currentCorporation"`
}

func (d liveWalletsData) balance(t *testing.T, corp, wallet string) int64 {
	t.Helper()
	id := relay.ID(relay.Wallet, corp, wallet)
	for _, w := range d.CurrentCorporation.Wallets {
		if w.ID == id {
			return w.Balance.Amount
		}
	}
	t.Fatalf("wallet %s not in the answer %+v", wallet, d)
	return 0
}

// readWithin is read with the wait bounded by d; ok is false when nothing
// came.
func (c *wsClient) readWithin(d time.Duration) (wsMessage, bool) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		_ = c.conn.SetReadDeadline(deadline)
		var m wsMessage
		if err := c.conn.ReadJSON(&m); err != nil {
			if ne, ok := err.(interface{ Timeout() bool }); ok && ne.Timeout() {
				return m, false
			}
			c.t.Fatalf("websocket read: %v", err)
		}
		if m.Type == "ping" {
			c.send(wsMessage{Type: "pong"})
			continue
		}
		return m, true
	}
}

// answer reads the next answer of operation id within d into v.
func (c *wsClient) answer(id string, d time.Duration, v any) {
	c.t.Helper()
	m, ok := c.readWithin(d)
	if !ok {
		c.t.Fatalf("no answer for %s within %v", id, d)
	}
	if m.Type != "next" || m.ID != id {
		c.t.Fatalf("want next for %s, got %s %s %s", id, m.Type, m.ID, m.Payload)
	}
	var p struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	}
	if err := json.Unmarshal(m.Payload, &p); err != nil || len(p.Errors) > 0 {
		c.t.Fatalf("live answer %s: %v %+v", m.Payload, err, p.Errors)
	}
	if err := json.Unmarshal(p.Data, v); err != nil {
		c.t.Fatalf("live answer data %s: %v", p.Data, err)
	}
}

// waitBothPolled waits until the poller watches both demo corporations and
// took its baselines: a change after it is one the poller finds.
func (g *testGateway) waitBothPolled(t *testing.T) {
	t.Helper()
	g.waitMetric(t, "fingraph_live_corporations_polled", equal(2))
	g.waitMetric(t, "fingraph_live_polls_total", atLeast(2))
}

// TestLiveQueryOverWebsocketFollowsOutsideCredit: Anna's live wallets
// answer at once and, after a transfer credited to her USD wallet outside
// the gateway, again with the new balance; Ben, of another corporation,
// gets nothing of it: his next answer is his own credit's.
func TestLiveQueryOverWebsocketFollowsOutsideCredit(t *testing.T) {
	g := startGateway(t, livePollArgs...)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	annaWS := anna.dialWS(t, nil, nil)
	annaWS.subscribe("1", liveWallets, nil)
	benWS := ben.dialWS(t, nil, nil)
	benWS.subscribe("1", liveWallets, nil)

	var first, benFirst liveWalletsData
	annaWS.answer("1", 30*time.Second, &first)
	benWS.answer("1", 30*time.Second, &benFirst)
	usd := first.balance(t, bankingsim.DemoCorporationID, demoUSDWalletID)
	// A live query registers demand as a subscription does: both
	// corporations are polled.
	g.waitBothPolled(t)

	credited := g.credit(t, demoUSDWalletID, 4321)
	if credited != usd+4321 {
		t.Fatalf("credited balance %d, want %d", credited, usd+4321)
	}
	var next liveWalletsData
	annaWS.answer("1", liveWait, &next)
	if got := next.balance(t, bankingsim.DemoCorporationID, demoUSDWalletID); got != credited {
		t.Errorf("live answer after the credit: USD balance %d, want %d", got, credited)
	}

	benBalance := g.credit(t, secondEURWalletID, 700)
	var benNext liveWalletsData
	benWS.answer("1", liveWait, &benNext)
	if got := benNext.balance(t, bankingsim.SecondCorporationID, secondEURWalletID); got != benBalance {
		t.Errorf("ben's next answer shows EUR balance %d, want his own credit's %d (an earlier answer came from another corporation's change)", got, benBalance)
	}
	for _, w := range benNext.CurrentCorporation.Wallets {
		if strings.Contains(w.ID, bankingsim.DemoCorporationID) {
			t.Errorf("ben's answer holds another corporation's wallet %s", w.ID)
		}
	}
}

// TestLiveQueryFollowsGatewayMutation: a conversion through the gateway
// updates the live answer (its announcement names the source wallet).
func TestLiveQueryFollowsGatewayMutation(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	liveAnswerFollowsConversion(t, anna, anna)
}

// liveAnswerFollowsConversion holds liveWallets @live on watcher's socket,
// converts from the demo USD wallet through converter, and checks that the
// next answer shows the USD balance lower.
func liveAnswerFollowsConversion(t *testing.T, watcher, converter *testGateway) {
	t.Helper()
	ws := watcher.dialWS(t, nil, nil)
	ws.subscribe("1", liveWallets, nil)
	var first liveWalletsData
	ws.answer("1", 30*time.Second, &first)
	usd := first.balance(t, bankingsim.DemoCorporationID, demoUSDWalletID)

	res, r := converter.convert(t, map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 10000, "currency": "EUR"})
	if res.Typename != "Conversion" {
		t.Fatalf("conversion: %+v %+v", res, r.Errors)
	}
	var next liveWalletsData
	ws.answer("1", liveWait, &next)
	if got := next.balance(t, bankingsim.DemoCorporationID, demoUSDWalletID); got >= usd {
		t.Errorf("USD balance after converting from it: %d, want below %d", got, usd)
	}
}

// TestLiveQueryUnchangedAnswerSendsNothing: a change to a watched Node
// that leaves the answer as it was runs the query again but sends nothing;
// the next message is the answer a later change made differ.
func TestLiveQueryUnchangedAnswerSendsNothing(t *testing.T) {
	g := startGateway(t, livePollArgs...)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	eur := relay.ID(relay.Wallet, bankingsim.DemoCorporationID, demoEURWalletID)
	usd := relay.ID(relay.Wallet, bankingsim.DemoCorporationID, demoUSDWalletID)
	// Watches both wallets, shows only the EUR balance.
	const q = `query($eur: ID!, $usd: ID!) @live {
  eur: node(id: $eur) { ... on Wallet { balance { amount } } }
  usd: node(id: $usd) { id }
}`
	type data struct {
		EUR struct {
			Balance struct {
				Amount int64 `json:"amount"`
			} `json:"balance"`
		} `json:"eur"`
	}
	ws := anna.dialWS(t, nil, nil)
	p, _ := json.Marshal(map[string]any{"query": q, "variables": map[string]any{"eur": eur, "usd": usd}})
	ws.send(wsMessage{ID: "1", Type: "subscribe", Payload: p})
	var first data
	ws.answer("1", 30*time.Second, &first)
	g.waitMetric(t, "fingraph_live_polls_total", atLeast(1))

	runs := g.metric(t, "fingraph_live_query_runs_total")
	answers := g.metric(t, "fingraph_live_query_answers_total")
	g.credit(t, demoUSDWalletID, 100)
	// The change to the USD wallet ran the query again...
	g.waitMetric(t, "fingraph_live_query_runs_total", atLeast(runs+1))
	if a := g.metric(t, "fingraph_live_query_answers_total"); a != answers {
		t.Errorf("an unchanged answer was counted as sent: answers %v, want %v", a, answers)
	}
	// ...and the next message is the EUR credit's, not a repeat.
	credited := g.credit(t, demoEURWalletID, 250)
	var next data
	ws.answer("1", liveWait, &next)
	if next.EUR.Balance.Amount != credited {
		t.Errorf("next message shows EUR %d, want %d: an unchanged answer was sent", next.EUR.Balance.Amount, credited)
	}
}

// sseStream reads server-sent events of one POSTed operation.
type sseStream struct {
	t    *testing.T
	resp *http.Response
	data chan json.RawMessage
}

// postStream POSTs an operation with accept and returns the response, its
// body still open (closed when the test ends).
func (g *testGateway) postStream(t *testing.T, accept, query string, vars map[string]any) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	if g.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+g.bearer)
	}
	// The headers of a stream come at once; a server that holds them
	// (answering a subscription's first event as JSON) fails the test
	// instead of hanging it.
	client := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 30 * time.Second}}
	t.Cleanup(client.CloseIdleConnections)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST /graphql: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func (g *testGateway) sse(t *testing.T, query string) *sseStream {
	t.Helper()
	resp := g.postStream(t, "text/event-stream", query, nil)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("want an event stream, got %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	s := &sseStream{t: t, resp: resp, data: make(chan json.RawMessage, 16)}
	go func() {
		defer close(s.data)
		readSSE(resp.Body, func(data string) { s.data <- json.RawMessage(data) })
	}()
	return s
}

// readSSE reads a graphql-sse stream to its end, calling next with the
// data of each next event, and returns the last event's name (complete
// when the server ended the stream).
func readSSE(body io.Reader, next func(data string)) (event string) {
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "next":
			next(strings.TrimPrefix(line, "data: "))
		}
	}
	return event
}

// next reads the next answer within d into v.
func (s *sseStream) next(d time.Duration, v any) {
	s.t.Helper()
	select {
	case raw, ok := <-s.data:
		if !ok {
			s.t.Fatalf("the stream ended")
		}
		var p struct {
			Data   json.RawMessage `json:"data"`
			Errors []gqlError      `json:"errors"`
		}
		if err := json.Unmarshal(raw, &p); err != nil || len(p.Errors) > 0 {
			s.t.Fatalf("answer %s: %v", raw, err)
		}
		if err := json.Unmarshal(p.Data, v); err != nil {
			s.t.Fatalf("answer data %s: %v", p.Data, err)
		}
	case <-time.After(d):
		s.t.Fatalf("no answer within %v", d)
	}
}

// TestLiveQueryOverSSEFollowsOutsideCredit is the websocket test over
// server-sent events.
func TestLiveQueryOverSSEFollowsOutsideCredit(t *testing.T) {
	g := startGateway(t, livePollArgs...)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	annaS := anna.sse(t, liveWallets)
	benS := ben.sse(t, liveWallets)
	var first, benFirst liveWalletsData
	annaS.next(30*time.Second, &first)
	benS.next(30*time.Second, &benFirst)
	g.waitBothPolled(t)

	credited := g.credit(t, demoUSDWalletID, 999)
	var next liveWalletsData
	annaS.next(liveWait, &next)
	if got := next.balance(t, bankingsim.DemoCorporationID, demoUSDWalletID); got != credited {
		t.Errorf("live answer over SSE: USD balance %d, want %d", got, credited)
	}
	benBalance := g.credit(t, secondEURWalletID, 300)
	var benNext liveWalletsData
	benS.next(liveWait, &benNext)
	if got := benNext.balance(t, bankingsim.SecondCorporationID, secondEURWalletID); got != benBalance {
		t.Errorf("ben's next answer over SSE shows %d, want his own credit's %d", got, benBalance)
	}
}

// TestLiveQueryOverPOSTAnswersOnce: without a streaming transport a live
// query is answered once, as a query.
func TestLiveQueryOverPOSTAnswersOnce(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	var d liveWalletsData
	anna.query(t, liveWallets, nil).decode(t, &d)
	if len(d.CurrentCorporation.Wallets) == 0 {
		t.Fatalf("no wallets in the answer: %+v", d)
	}
	if n := g.metric(t, "fingraph_live_queries"); n != 0 {
		t.Errorf("a POSTed live query left %v live queries running", n)
	}
}

// multipartParts reads the JSON parts of a multipart subscription response.
func multipartParts(t *testing.T, resp *http.Response) <-chan json.RawMessage {
	t.Helper()
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" || params["boundary"] == "" || params["subscriptionspec"] != "1.0" { // mime lowercases parameter names
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096)) // an answer, or the stream's start
		t.Fatalf("want multipart/mixed with a boundary and subscriptionSpec 1.0, got %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	out := make(chan json.RawMessage, 16)
	go func() {
		defer close(out)
		mr := multipart.NewReader(resp.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				return
			}
			b, err := io.ReadAll(p)
			if err != nil {
				return
			}
			out <- b
		}
	}()
	return out
}

// payloadPart is one part of a multipart subscription.
type payloadPart struct {
	Payload *struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	} `json:"payload"`
	Errors []gqlError `json:"errors"`
}

// nextPayload reads parts until one with a payload, within d.
func nextPayload(t *testing.T, parts <-chan json.RawMessage, d time.Duration) payloadPart {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case raw, ok := <-parts:
			if !ok {
				t.Fatalf("the multipart stream ended")
			}
			if string(bytes.TrimSpace(raw)) == "{}" {
				continue // heartbeat
			}
			var p payloadPart
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatalf("part %s: %v", raw, err)
			}
			if p.Payload == nil {
				t.Fatalf("part without payload: %s", raw)
			}
			return p
		case <-timeout:
			t.Fatalf("no payload part within %v", d)
		}
	}
}

// apolloAccept is the Accept header Apollo Client sends with a subscription.
const apolloAccept = `multipart/mixed;boundary="graphql";subscriptionSpec=1.0,application/json`

// TestEventsOverMultipartSubscription: a subscription to events over
// Apollo's multipart HTTP protocol delivers a sandbox event as a
// {"payload": ...} part, after a first heartbeat part.
func TestEventsOverMultipartSubscription(t *testing.T) {
	g := liveGateway(t)
	api := g.as(g.signInAPI(t))
	resp := api.postStream(t, apolloAccept, allEvents, map[string]any{"after": api.cursorNow(t)})
	parts := multipartParts(t, resp)
	select {
	case raw := <-parts:
		if string(raw) != "{}" {
			t.Errorf("first part %s, want the heartbeat {}", raw)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no first part")
	}
	var ev struct {
		ID string `json:"id"`
	}
	api.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "OrderCreated"}, &ev)
	for {
		p := nextPayload(t, parts, 30*time.Second)
		if len(p.Payload.Errors) > 0 {
			t.Fatalf("payload errors: %+v", p.Payload.Errors)
		}
		var d struct {
			Events liveEvent `json:"events"`
		}
		if err := json.Unmarshal(p.Payload.Data, &d); err != nil {
			t.Fatalf("payload data %s: %v", p.Payload.Data, err)
		}
		if d.Events.Event.UpstreamID == ev.ID {
			if d.Events.Event.Name != "OrderCreated" {
				t.Errorf("event %+v", d.Events)
			}
			return
		}
	}
}

// TestMultipartSubscriptionRefusalIsTransportError: a subscription refused
// (a payments customer has no events) ends the stream with a part
// {"payload": null, "errors": [...]} carrying the code.
func TestMultipartSubscriptionRefusalIsTransportError(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	resp := anna.postStream(t, apolloAccept, `subscription { orderUpdates(orderId: "o-1") { cursor } }`, nil)
	parts := multipartParts(t, resp)
	var last json.RawMessage
	for raw := range parts {
		last = raw
	}
	var p struct {
		Payload json.RawMessage `json:"payload"`
		Errors  []gqlError      `json:"errors"`
	}
	if err := json.Unmarshal(last, &p); err != nil || string(p.Payload) != "null" || len(p.Errors) == 0 {
		t.Fatalf("last part %s, want {\"payload\": null, \"errors\": [...]}", last)
	}
	if p.Errors[0].Extensions["code"] != "FORBIDDEN" {
		t.Errorf("code %v, want FORBIDDEN", p.Errors[0].Extensions["code"])
	}
}

// TestLiveQueryOverMultipart: @live over Apollo's multipart protocol.
func TestLiveQueryOverMultipart(t *testing.T) {
	g := startGateway(t, livePollArgs...)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	parts := multipartParts(t, anna.postStream(t, apolloAccept, liveWallets, nil))
	decode := func(p payloadPart) liveWalletsData {
		var d liveWalletsData
		if len(p.Payload.Errors) > 0 || json.Unmarshal(p.Payload.Data, &d) != nil {
			t.Fatalf("payload %s %+v", p.Payload.Data, p.Payload.Errors)
		}
		return d
	}
	decode(nextPayload(t, parts, 30*time.Second))
	g.waitMetric(t, "fingraph_live_polls_total", atLeast(1))
	credited := g.credit(t, demoUSDWalletID, 77)
	d := decode(nextPayload(t, parts, liveWait))
	if got := d.balance(t, bankingsim.DemoCorporationID, demoUSDWalletID); got != credited {
		t.Errorf("live answer over multipart: USD %d, want %d", got, credited)
	}
}

// TestLiveQueriesCappedPerSession: live queries of one session beyond the
// cap are refused with RATE_LIMITED, and a refused one frees nothing.
func TestLiveQueriesCappedPerSession(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	const q = `query @live { ok }`
	ws := anna.dialWS(t, nil, nil)
	// The cap is livequery.DefaultMaxPerSession; one socket holds at most
	// MaxOperationsPerSocket operations, so two sockets.
	ws2 := anna.dialWS(t, nil, nil)
	refused := 0
	for i := range 51 {
		c := ws
		if i >= 30 {
			c = ws2
		}
		id := string(rune('a'+i/26)) + string(rune('a'+i%26))
		p, _ := json.Marshal(map[string]any{"query": q})
		c.send(wsMessage{ID: id, Type: "subscribe", Payload: p})
		m := c.read()
		var resp struct {
			Errors []gqlError `json:"errors"`
		}
		_ = json.Unmarshal(m.Payload, &resp)
		if len(resp.Errors) > 0 {
			if resp.Errors[0].Extensions["code"] != "RATE_LIMITED" {
				t.Fatalf("refusal %s", m.Payload)
			}
			refused++
			if c.read().Type != "complete" {
				t.Fatal("a refused live query did not complete")
			}
		}
	}
	if refused != 1 {
		t.Errorf("%d of 51 live queries refused, want 1 (cap 50)", refused)
	}
	if n := g.metric(t, "fingraph_live_queries"); n != 50 {
		t.Errorf("%v live queries running, want 50", n)
	}
	// Their sockets closed, nothing of them stays.
	ws.close()
	ws2.close()
	g.waitMetric(t, "fingraph_live_queries", equal(0))
}

// TestLiveQueryAcrossReplicas: a live query on one replica follows a
// mutation served by another (the change feed is in JetStream).
func TestLiveQueryAcrossReplicas(t *testing.T) {
	a, b := twoReplicas(t)
	token := a.signInPerson(t, "anna@demo.test")
	liveAnswerFollowsConversion(t, b.as(token), a.as(token))
}
