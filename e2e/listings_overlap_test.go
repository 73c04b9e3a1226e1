package e2e

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/fingraph/fingraph/app"
)

// listingsGate sits in front of the sandbox and holds the customer
// listing's answer until the order listing has been asked for. A gateway
// that reads the two in turn asks for the order listing only after the
// customer listing has answered, so the customer listing then waits out the
// guard and is counted as not overlapped.
type listingsGate struct {
	once   sync.Once
	orders chan struct{}

	mu                sync.Mutex
	overlapped, alone int
}

func newListingsGate() *listingsGate { return &listingsGate{orders: make(chan struct{})} }

func (g *listingsGate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			switch r.URL.Path {
			case "/payments/v1/order":
				g.once.Do(func() { close(g.orders) })
			case "/payments/v1/customer":
				select {
				case <-g.orders:
					g.count(&g.overlapped)
				case <-time.After(5 * time.Second): // guard: the listings were read in turn
					g.count(&g.alone)
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (g *listingsGate) count(n *int) {
	g.mu.Lock()
	*n++
	g.mu.Unlock()
}

// TestREADMEQueryReadsItsTwoListingsAtOnce: the README query's order
// listing does not depend on the customers (it is one listing by date,
// grouped by customer), so the gateway asks for it while the customer
// listing is still unanswered: the query waits for one upstream round trip,
// not two, and still makes exactly two calls.
func TestREADMEQueryReadsItsTwoListingsAtOnce(t *testing.T) {
	t.Parallel()
	gate := newListingsGate()
	g := startGatewayWith(t, func(c *app.Config) {
		validate := c.SandboxMiddleware
		c.SandboxMiddleware = func(next http.Handler) http.Handler { return gate.wrap(validate(next)) }
	})
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
	gate.mu.Lock()
	overlapped, alone := gate.overlapped, gate.alone
	gate.mu.Unlock()
	if overlapped != 1 || alone != 0 {
		t.Fatalf("customer listings answered while the order listing was asked for: %d, alone: %d; want 1 and 0", overlapped, alone)
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
