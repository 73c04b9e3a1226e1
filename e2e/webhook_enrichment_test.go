package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// heldEventReads counts the upstream's event reads (GET /payments/v?/events/{id})
// in flight and holds each until release.
type heldEventReads struct {
	inFlight, max atomic.Int64
	once          sync.Once
	gate          chan struct{}
}

func (h *heldEventReads) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/payments/v") && strings.Contains(r.URL.Path, "/events/") {
			n := h.inFlight.Add(1)
			for m := h.max.Load(); n > m && !h.max.CompareAndSwap(m, n); m = h.max.Load() {
			}
			<-h.gate
			defer h.inFlight.Add(-1)
		}
		next.ServeHTTP(w, r)
	})
}

func (h *heldEventReads) release() { h.once.Do(func() { close(h.gate) }) }

// FINGRAPH_ENRICHER_WORKERS reaches the enricher: with 3, the gateway
// reads at most 3 events from the upstream at once, and reaches 3 when 8
// webhooks wait (the held reads cannot finish, so a fourth would show).
// Once released, every event is enriched and its lag is on /metrics.
func TestEnricherWorkersSettingBoundsUpstreamReads(t *testing.T) {
	held := &heldEventReads{gate: make(chan struct{})}
	g := startGatewayWith(t, sandboxBehind(held.wrap), "-enricher-workers", "3", "-enricher-busy-workers", "3")
	t.Cleanup(held.release) // before shutdown, which waits for the reads in hand
	// waitUntil polls cond; the deadline only ends a broken run.
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("gave up waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	const n = 8
	for range n {
		var ev struct {
			ID        string `json:"id"`
			Name      string `json:"name"`
			CreatedAt string `json:"created_at"`
		}
		g.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "OrderCreated"}, &ev)
		if code := g.postWebhook(t, map[string]string{"id": ev.ID, "name": ev.Name, "createdAt": ev.CreatedAt}); code != http.StatusAccepted {
			t.Fatalf("webhook: %d", code)
		}
	}
	waitUntil("3 event reads in flight", func() bool { return held.inFlight.Load() >= 3 })
	time.Sleep(200 * time.Millisecond) // room for a fourth read to show
	if m := held.max.Load(); m != 3 {
		t.Fatalf("event reads in flight: at most %d, want 3", m)
	}
	held.release()
	want := fmt.Sprintf("fingraph_event_enrichment_lag_seconds_count %d\n", n)
	waitUntil("the lag of every event on /metrics", func() bool {
		resp, err := http.Get(g.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(body), want)
	})
}
