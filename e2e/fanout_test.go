package e2e

import (
	"fmt"
	"net/http"
	"runtime"
	"testing"
	"time"
)

// TestIdleSubscriptionGoroutines counts the goroutines that idle websocket
// subscriptions cost the gateway (which runs in this process): every
// subscription shares the replica's one stream consumer and the resolver
// hands events straight to the subscription's channel, signalling the
// websocket transport (gqlhttp.TransportWS), which writes each event from a
// short-lived goroutine: what is left is one goroutine per socket, its read
// loop (keep-alive runs on a timer), however many subscriptions it holds.
// Each subscription is proven live by an event before counting.
func TestIdleSubscriptionGoroutines(t *testing.T) {
	g := liveGateway(t)
	g = g.as(g.signInAPI(t))
	const query = `subscription($after: String) { events(names: ["IndividualActivated"], after: $after) ` + liveFields + ` }`

	// One socket first, so that everything shared (the fan-out's consumer,
	// HTTP machinery) already runs when counting starts.
	first := g.dialWS(t, nil, nil)
	first.subscribeFromNow(g, "0", query, nil)
	g.triggerAndReceive(t, first, "0")
	settle()
	before := runtime.NumGoroutine()

	// 19 sockets and the first: the per-session cap is 20.
	const sockets, perSocket = 19, 3
	clients := make([]*wsClient, sockets)
	for i := range clients {
		clients[i] = g.dialWS(t, nil, nil)
		for j := range perSocket {
			clients[i].subscribeFromNow(g, fmt.Sprint(j), query, nil)
		}
	}
	var ev sandboxEvent
	g.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "IndividualActivated"}, &ev)
	for _, c := range clients {
		got := map[string]bool{}
		for range perSocket {
			m := c.read()
			got[m.ID] = true
		}
		if len(got) != perSocket {
			t.Fatalf("want one event on each of %d subscriptions, got %v", perSocket, got)
		}
	}
	settle()
	added := runtime.NumGoroutine() - before
	perSub := float64(added) / float64(sockets*perSocket)
	t.Logf("%d sockets x %d subscriptions: %d goroutines (%.2f per subscription)", sockets, perSocket, added, perSub)
	// Per socket: its read loop (keep-alive runs on a timer,
	// gqlhttp.GorillaWebsocket); per subscription: none. A goroutine per
	// subscription waiting for its next event (gqlgen's transport has one,
	// and a close-on-cancel goroutine per socket) would add 57, a consumer
	// or an adapter per subscription as many. The slack is for HTTP
	// keep-alive connections (3 goroutines each) that the sandbox's webhook
	// sender and the test's client may open or close meanwhile.
	const slack = 9
	if max := sockets + slack; added > max {
		t.Fatalf("%d goroutines for %d idle subscriptions on %d sockets, want at most %d", added, sockets*perSocket, sockets, max)
	}
}

// triggerAndReceive triggers one event and reads it on subscription id.
func (g *testGateway) triggerAndReceive(t *testing.T, c *wsClient, id string) {
	t.Helper()
	var ev sandboxEvent
	g.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "IndividualActivated"}, &ev)
	if e := c.next(id, "events"); e.Event.UpstreamID != ev.ID {
		t.Fatalf("live event: %+v, want %s", e, ev.ID)
	}
}

// settle lets goroutines that are ending or starting (HTTP keep-alive
// readers, timers) get there before a count. Counting is what the test
// asserts; the pause only makes the count stable.
func settle() {
	time.Sleep(100 * time.Millisecond)
	runtime.GC()
}
