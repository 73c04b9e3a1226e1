package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"
)

// Faults of the live event pipeline: the upstream's event read fails during
// a burst of webhooks, the upstream answers that it does not know events it
// announced, and forged deliveries share an address with the upstream. In
// each, every event reaches a live subscriber once, and the counts say so.

// eventReadRoute is the sandbox route the enricher reads events from.
const eventReadRoute = "GET /payments/v3/events/{id}"

// orderEvents subscribes to OrderCreated events, the ones the tests fire.
const orderEvents = `subscription($after: String) { events(names: ["OrderCreated"], after: $after) ` + liveFields + ` }`

// fire triggers n OrderCreated events upstream and returns their ids.
func (g *testGateway) fire(t *testing.T, n int) []string {
	t.Helper()
	ids := make([]string, 0, n)
	for range n {
		var ev sandboxEvent
		g.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "OrderCreated"}, &ev)
		ids = append(ids, ev.ID)
	}
	return ids
}

// delivery is one webhook delivery attempt as the sandbox recorded it.
type delivery struct {
	EventID string `json:"event_id"`
	Attempt int    `json:"attempt"`
	Status  int    `json:"status"`
}

func (g *testGateway) deliveries(t *testing.T) []delivery {
	t.Helper()
	var d []delivery
	g.sandbox(t, http.MethodGet, "/_sandbox/deliveries", nil, &d)
	return d
}

// awaitStored polls the sandbox's record of deliveries until each of ids
// was answered 202 (stored) at least once.
func (g *testGateway) awaitStored(t *testing.T, what string, ids []string) {
	t.Helper()
	pollUntil(t, what, 60*time.Second, func() bool {
		stored := map[string]bool{}
		for _, d := range g.deliveries(t) {
			if d.Status == http.StatusAccepted {
				stored[d.EventID] = true
			}
		}
		for _, id := range ids {
			if !stored[id] {
				return false
			}
		}
		return true
	})
}

// pollUntil polls cond; the deadline only ends a broken run.
func pollUntil(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tally counts deliveries to one subscriber by upstream event id.
type tally struct {
	mu     sync.Mutex
	seen   map[string]int
	cursor string
}

func newTally() *tally { return &tally{seen: map[string]int{}} }

func (c *tally) add(e liveEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[e.Event.UpstreamID]++
	c.cursor = e.Cursor
}

func (c *tally) last() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cursor
}

// lostAndDuplicated counts the ids of want never delivered, and the
// deliveries beyond the first of any id.
func (c *tally) lostAndDuplicated(want []string) (lost, dup int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range want {
		if c.seen[id] == 0 {
			lost++
		}
	}
	for _, n := range c.seen {
		dup += max(n-1, 0)
	}
	return lost, dup
}

func (c *tally) has(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[id] > 0
}

// readLive reads subscription sub's events from conn into c until the
// connection ends or fails (a killed gateway); it answers pings. It returns
// why it stopped.
func readLive(conn *websocket.Conn, sub, field string, c *tally) error {
	for {
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Minute)) // only bounds a hung run
		var m wsMessage
		if err := conn.ReadJSON(&m); err != nil {
			return err
		}
		switch m.Type {
		case "ping":
			_ = conn.WriteJSON(wsMessage{Type: "pong"})
		case "next":
			var p struct {
				Data   map[string]liveEvent `json:"data"`
				Errors []gqlError           `json:"errors"`
			}
			if err := json.Unmarshal(m.Payload, &p); err != nil || len(p.Errors) > 0 || m.ID != sub {
				return fmt.Errorf("subscription payload %s: %v", m.Payload, err)
			}
			c.add(p.Data[field])
		case "error", "complete":
			return fmt.Errorf("subscription ended: %s %s", m.Type, m.Payload)
		}
	}
}

// following subscribes ws to OrderCreated after cursor and counts what it
// delivers in the background; the returned channel says why reading
// stopped.
func following(ws *wsClient, cursor string, c *tally) <-chan error {
	ws.subscribe("1", orderEvents, map[string]any{"after": cursor})
	done := make(chan error, 1)
	go func() { done <- readLive(ws.conn, "1", "events", c) }()
	return done
}

// followingGateway starts a live gateway with flags, signed in as the API
// client, and one subscriber counting OrderCreated events from now on.
func followingGateway(t *testing.T, flags ...string) (*testGateway, *tally, <-chan error) {
	t.Helper()
	g := liveGateway(t, flags...)
	g = g.as(g.signInAPI(t))
	c := newTally()
	return g, c, following(g.dialWS(t, nil, nil), g.cursorNow(t), c)
}

// settleAndCount waits until every id of want was delivered, then fires one
// more event and waits for it too: whatever would arrive twice has arrived
// before it. It reports the lost and duplicated events.
func settleAndCount(t *testing.T, g *testGateway, c *tally, want []string, limit time.Duration, reading <-chan error) (lost, dup int) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		lost, _ = c.lostAndDuplicated(want)
		if lost == 0 || time.Now().After(deadline) {
			break
		}
		select {
		case err := <-reading:
			t.Fatalf("the subscription stopped with %d of %d events missing: %v", lost, len(want), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if lost > 0 {
		return c.lostAndDuplicated(want)
	}
	sentinel := g.fire(t, 1)[0]
	pollUntil(t, "the sentinel event", limit, func() bool { return c.has(sentinel) })
	return c.lostAndDuplicated(want)
}

// During an outage of the upstream's event read (every GET of an event
// answered 503) a burst of 50 webhooks is stored; once the outage ends,
// every event reaches the live subscriber exactly once. Polling is off:
// the webhooks alone must not lose an event. The outage lasts until every
// webhook was stored and the enricher failed at least 10 reads (enough to
// open the breaker); redeliveries wait along a back-off and for the
// breaker, so none of them is spent in the outage.
func TestEventReadOutageLosesNoWebhook(t *testing.T) {
	g, c, reading := followingGateway(t)

	g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": eventReadRoute, "error_rate": 1, "status": 503}, nil)
	g.resetStats(t)
	const n = 50
	ids := g.fire(t, n)
	g.awaitStored(t, "every webhook stored", ids)
	pollUntil(t, "the enricher to fail its reads", 60*time.Second, func() bool { return g.stats(t).Routes[eventReadRoute] >= 10 })
	failed := g.stats(t).Routes[eventReadRoute]
	g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": eventReadRoute}, nil)

	lost, dup := settleAndCount(t, g, c, ids, 90*time.Second, reading)
	t.Logf("outage of the event read: %d webhooks, %d failed reads, %d lost, %d duplicated", n, failed, lost, dup)
	if lost != 0 || dup != 0 {
		t.Fatalf("after an outage of the event read: %d of %d events lost, %d duplicated", lost, n, dup)
	}
}

// The upstream announces 20 events and then, for a while, answers that it
// does not know them (404 on the event read): the enricher drops each as
// unknown. The event listing still shows them, and the reconciler restores
// every one, although its id is within the duplicate window of the stored
// webhook.
func TestReconcilerRestoresEventsTheEnricherDropped(t *testing.T) {
	g, c, reading := followingGateway(t, "-reconcile-interval", "100ms")

	g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": eventReadRoute, "error_rate": 1, "status": 404}, nil)
	g.resetStats(t)
	const n = 20
	ids := g.fire(t, n)
	g.awaitStored(t, "every webhook stored", ids)
	g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": eventReadRoute}, nil)

	lost, dup := settleAndCount(t, g, c, ids, 60*time.Second, reading)
	t.Logf("events the upstream briefly did not know: %d, %d lost, %d duplicated", n, lost, dup)
	if lost != 0 || dup != 0 {
		t.Fatalf("events dropped as unknown and listed later: %d of %d lost, %d duplicated", lost, n, dup)
	}
}

// A flood of forged deliveries from the upstream's own address (malformed
// ids, ids the gateway already stored) while the upstream sends a burst of
// 20 real events, with the per-sender limit at 1 a second: the forgeries
// are refused or acknowledged without being stored, and none of the
// upstream's deliveries is answered 429 or has to be resent; every event
// reaches the subscriber once.
func TestForgedFloodNeverDelaysTheUpstream(t *testing.T) {
	g, c, reading := followingGateway(t, "-webhook-rate-limit", "1")
	first := g.fire(t, 1)[0]
	pollUntil(t, "the first event", 30*time.Second, func() bool { return c.has(first) })

	stop := make(chan struct{})
	var forged, forgedStored atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		client := &http.Client{Timeout: 10 * time.Second}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			body := fmt.Sprintf(`{"id":"forged-%d","name":"OrderCreated"}`, i)
			if i%2 == 1 {
				body = fmt.Sprintf(`{"id":%q,"name":"OrderCreated"}`, first) // already stored
			}
			resp, err := client.Post(g.URL+"/webhooks/payments", "application/json", strings.NewReader(body))
			if err != nil {
				continue
			}
			resp.Body.Close()
			forged.Add(1)
			if i%2 == 0 && resp.StatusCode == http.StatusAccepted {
				forgedStored.Add(1)
			}
		}
	}()
	pollUntil(t, "the flood to start", 30*time.Second, func() bool { return forged.Load() >= 20 })
	const n = 20
	ids := g.fire(t, n)
	g.awaitStored(t, "every real webhook acknowledged", append([]string{first}, ids...))
	close(stop)
	wg.Wait()

	limited, resent := 0, 0
	for _, d := range g.deliveries(t) {
		if d.Status == http.StatusTooManyRequests {
			limited++
		}
		if d.Attempt > 1 {
			resent++
		}
	}
	lost, dup := settleAndCount(t, g, c, ids, 60*time.Second, reading)
	t.Logf("%d forged deliveries (%d malformed stored), %d real events: %d upstream deliveries limited, %d resent, %d lost, %d duplicated",
		forged.Load(), forgedStored.Load(), n, limited, resent, lost, dup)
	if limited != 0 || resent != 0 {
		t.Errorf("the upstream's deliveries: %d answered 429, %d had to be resent", limited, resent)
	}
	if forgedStored.Load() != 0 {
		t.Errorf("%d malformed forged deliveries were stored", forgedStored.Load())
	}
	if lost != 0 || dup != 0 {
		t.Errorf("real events during a forged flood: %d of %d lost, %d duplicated", lost, n, dup)
	}
}

// Only what fails the intake's checks is limited: at 1 a second (burst 2),
// ten malformed deliveries from one address get 429 past the burst, while
// ten new well-formed event ids from the same address are all stored.
func TestWebhookLimitAppliesToRefusedDeliveriesOnly(t *testing.T) {
	g := startGateway(t, "-webhook-rate-limit", "1")
	post := func(body string) *http.Response {
		resp, err := http.Post(g.URL+"/webhooks/payments", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	limited := 0
	t0 := time.Now()
	for i := range 10 {
		resp := post(fmt.Sprintf(`{"id":"evt_rate_%d","name":"OrderCreated"}`, i))
		switch resp.StatusCode {
		case http.StatusBadRequest:
		case http.StatusTooManyRequests:
			limited++
			if resp.Header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
		default:
			t.Fatalf("malformed webhook %d: status %d", i, resp.StatusCode)
		}
	}
	if allowed := 2 + int(time.Since(t0)/time.Second); 10-limited > allowed {
		t.Errorf("at 1/s with a burst of 2: %d of 10 malformed deliveries refused without a limit, want at most %d", 10-limited, allowed)
	}
	for i := range 10 {
		body := fmt.Sprintf(`{"id":%q,"name":"OrderCreated","createdAt":"2026-01-01T00:00:00Z"}`, uuid.NewString())
		if code := post(body).StatusCode; code != http.StatusAccepted {
			t.Errorf("well-formed webhook %d after the limit was reached: status %d, want 202", i, code)
		}
	}
}
