package e2e

import (
	"net/http"
	"sync"
	"testing"
	"time"
)

// listingsGate sits in front of the sandbox and holds the customer
// listing's answer until want order listings have been asked for, or until
// its guard passes. A gateway that reads the two in turn asks for the order
// listing only after the customer listing has answered, so the customer
// listing then waits out the guard.
type listingsGate struct {
	want  int
	guard time.Duration

	mu      sync.Mutex
	orders  int           // order listings asked for so far
	arrived chan struct{} // closed when orders reaches want
	before  int           // order listings asked for before the customer listing was released
	waited  bool          // the customer listing waited out the guard
}

func newListingsGate(want int, guard time.Duration) *listingsGate {
	return &listingsGate{want: want, guard: guard, arrived: make(chan struct{})}
}

func (g *listingsGate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			switch r.URL.Path {
			case "/payments/v1/order":
				g.mu.Lock()
				g.orders++
				if g.orders == g.want {
					close(g.arrived)
				}
				g.mu.Unlock()
			case "/payments/v1/customer":
				waited := false
				select {
				case <-g.arrived:
				case <-time.After(g.guard):
					waited = true
				}
				g.mu.Lock()
				g.before, g.waited = g.orders, waited
				g.mu.Unlock()
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (g *listingsGate) seen() (before int, waited bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.before, g.waited
}

// TestREADMEQueryReadsItsTwoListingsAtOnce: the README query's order
// listing does not depend on the customers (it is one listing by date,
// grouped by customer), so the gateway asks for it while the customer
// listing is still unanswered: the query waits for one upstream round trip,
// not two, and still makes exactly two calls.
func TestREADMEQueryReadsItsTwoListingsAtOnce(t *testing.T) {
	t.Parallel()
	gate := newListingsGate(1, 10*time.Second) // the guard only ends a deadlock
	g := startGatewayWith(t, sandboxBehind(gate.wrap))
	g = g.as(g.signInAPI(t))
	g.resetStats(t)
	var d customersData
	g.query(t, readmeQuery, nil).decode(t, &d)
	withOrders := 0
	for _, c := range d.Customers {
		if len(c.Orders) > 0 {
			withOrders++
		}
	}
	if len(d.Customers) == 0 || withOrders == 0 {
		t.Fatalf("%d customers, %d with orders: the seeded sandbox has both", len(d.Customers), withOrders)
	}
	if before, waited := gate.seen(); waited || before != 1 {
		t.Fatalf("order listings asked for while the customer listing was unanswered: %d (guard passed: %v), want 1", before, waited)
	}
	if s := g.stats(t); s.Total != 2 {
		t.Fatalf("upstream calls = %+v, want 2", s.Routes)
	}
}

// TestCustomersOrdersWithABadWindowReadNoOrders: a window the orders field
// refuses (a non-date, or an end before its start) starts no order listing
// beside the customer listing: the field's error is all that comes of it.
func TestCustomersOrdersWithABadWindowReadNoOrders(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	for _, q := range []string{
		`{ customers { id orders(start: "2026-13-01") { id } } }`,
		`{ customers { id orders(start: "2026-11-20", end: "2026-11-01") { id } } }`,
	} {
		g.resetStats(t)
		r := g.query(t, q, nil)
		if len(r.Errors) == 0 {
			t.Fatalf("%s: no error", q)
		}
		if s := g.stats(t); s.Routes["GET /payments/v1/order"] != 0 {
			t.Fatalf("%s: upstream calls = %+v, want no order listing", q, s.Routes)
		}
	}
}

// TestCustomersStartFewOrderWindowsEarly: the order listings a customer list
// starts before its customers are read are bounded (two windows); a query
// that aliases more windows gets the rest from the batch resolver, a bounded
// number at a time, once the customers are known.
func TestCustomersStartFewOrderWindowsEarly(t *testing.T) {
	t.Parallel()
	// Three windows would reach the gate at once without the bound; with
	// it, the customer listing waits out the guard with two.
	gate := newListingsGate(3, 3*time.Second)
	g := startGatewayWith(t, sandboxBehind(gate.wrap))
	g = g.as(g.signInAPI(t))
	g.resetStats(t)
	r := g.query(t, `{ customers { id
		a: orders(start: "2026-01-01", end: "2026-01-31") { id }
		b: orders(start: "2026-02-01", end: "2026-02-28") { id }
		c: orders(start: "2026-03-01", end: "2026-03-31") { id } } }`, nil)
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %+v", r.Errors)
	}
	if before, _ := gate.seen(); before != maxEarlyOrderWindows {
		t.Fatalf("%d order listings started before the customers were read, want %d", before, maxEarlyOrderWindows)
	}
	if s := g.stats(t); s.Routes["GET /payments/v1/order"] != 3 || s.Total != 4 {
		t.Fatalf("upstream calls = %+v, want the customer listing and 3 order listings", s.Routes)
	}
}

// maxEarlyOrderWindows is resolvers.maxEarlyOrderWindows.
const maxEarlyOrderWindows = 2
