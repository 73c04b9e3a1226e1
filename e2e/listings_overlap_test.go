package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// paymentsCall is any call to the payments upstream: the README query's
// are its customer listing and its order listing.
func paymentsCall(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/payments/") }

// TestREADMEQueryReadsItsTwoListingsAtOnce: the README query's order
// listing does not depend on the customers (it is one listing by date,
// grouped by customer), so the gateway asks for it while the customer
// listing is still unanswered: the query waits for one upstream round trip,
// not two, and still makes exactly two calls. The gate answers neither
// listing until both are in flight; read in turn, they never are.
func TestREADMEQueryReadsItsTwoListingsAtOnce(t *testing.T) {
	t.Parallel()
	gate := &levelGate{want: 2, guard: 3 * time.Second, holds: paymentsCall} // guard: under the upstream timeout
	g := startGatewayWith(t, sandboxBehind(gate.wrap))
	g = g.as(g.signInAPI(t))
	g.resetStats(t)
	gate.arm()
	var d customersData
	g.query(t, readmeQuery, nil).decode(t, &d)
	arrived, routes, timedOut := gate.result()
	withOrders := 0
	for _, c := range d.Customers {
		if len(c.Orders) > 0 {
			withOrders++
		}
	}
	if len(d.Customers) == 0 || withOrders == 0 {
		t.Fatalf("%d customers, %d with orders: the seeded sandbox has both", len(d.Customers), withOrders)
	}
	if timedOut || arrived != 2 {
		t.Fatalf("payments calls in flight at once: %d %v (gate gave up: %v), want the two listings", arrived, routes, timedOut)
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
// starts before its customers are read are bounded (two windows, the
// resolvers' maxEarlyOrderWindows); a query that aliases more windows gets
// the rest from the batch resolver, a bounded number at a time, once the
// customers are known.
func TestCustomersStartFewOrderWindowsEarly(t *testing.T) {
	t.Parallel()
	// Without the bound the customer listing and all three order listings
	// would be in flight at once; with it, three are, and the gate gives
	// up waiting for a fourth.
	gate := &levelGate{want: 4, guard: 3 * time.Second, holds: paymentsCall}
	g := startGatewayWith(t, sandboxBehind(gate.wrap))
	g = g.as(g.signInAPI(t))
	g.resetStats(t)
	gate.arm()
	r := g.query(t, `{ customers { id
		a: orders(start: "2026-01-01", end: "2026-01-31") { id }
		b: orders(start: "2026-02-01", end: "2026-02-28") { id }
		c: orders(start: "2026-03-01", end: "2026-03-31") { id } } }`, nil)
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %+v", r.Errors)
	}
	if arrived, routes, _ := gate.result(); arrived != 1+2 {
		t.Fatalf("payments calls in flight before the customers were read: %d %v, want the customer listing and 2 order listings", arrived, routes)
	}
	if s := g.stats(t); s.Routes["GET /payments/v1/order"] != 3 || s.Total != 4 {
		t.Fatalf("upstream calls = %+v, want the customer listing and 3 order listings", s.Routes)
	}
}
