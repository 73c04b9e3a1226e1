package e2e

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// One failing group of upstream routes opens its own circuit breaker, not
// the upstream's: with every payments order route answering 503 until the
// order breaker opens, the payments event read (what webhook enrichment
// and the event field call) still reaches the upstream and answers.
func TestFailingOrderRoutesDoNotOpenTheEventReadsBreaker(t *testing.T) {
	var failing atomic.Bool
	var orderCalls, eventCalls atomic.Int64
	g := startGatewayWith(t, sandboxBehind(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case strings.HasPrefix(r.URL.Path, "/payments/v1/order"):
				orderCalls.Add(1)
				if failing.Load() {
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
			case strings.Contains(r.URL.Path, "/events/"):
				eventCalls.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	}))
	api := g.as(g.signInAPI(t))
	failing.Store(true)

	// Listing orders until a listing fails without reaching the upstream:
	// the order routes' breaker is open. 10 consecutive failures open it;
	// a listing is tried 3 times, so 4 listings do.
	open := false
	for i := 0; i < 20 && !open; i++ {
		before := orderCalls.Load()
		r := api.query(t, `{ orders { id } }`, nil)
		if r.code() != "UPSTREAM_UNAVAILABLE" {
			t.Fatalf("a failing order listing: %s %+v", r.Data, r.Errors)
		}
		open = orderCalls.Load() == before
	}
	if !open {
		t.Fatalf("the order breaker never opened (%d order calls)", orderCalls.Load())
	}

	// The event read is another group: it is still asked, and answers.
	before := eventCalls.Load()
	r := api.query(t, `query($id: ID!) { event(id: $id) { id } }`, map[string]any{"id": "00000000-0000-0000-0000-000000000000"})
	if len(r.Errors) > 0 {
		t.Fatalf("the event read failed while only order routes failed: %+v", r.Errors)
	}
	if eventCalls.Load() == before {
		t.Fatal("the event read never reached the upstream")
	}
	// Another payments group (customers) is untouched too; the order
	// group stays open.
	if r := api.query(t, `{ customers { id } }`, nil); len(r.Errors) > 0 {
		t.Fatalf("the customer listing failed while only order routes failed: %+v", r.Errors)
	}
	before = orderCalls.Load()
	if r := api.query(t, `{ orders { id } }`, nil); r.code() != "UPSTREAM_UNAVAILABLE" || orderCalls.Load() != before {
		t.Fatalf("the order breaker closed: %+v (%d new calls)", r.Errors, orderCalls.Load()-before)
	}
}
