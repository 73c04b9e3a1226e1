package e2e

import (
	"context"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"
)

// TestMeasureIncrementalDelivery is the recorded run of docs/performance.md
// ("Incremental delivery"), not a check: with 20 ms on the dashboard's
// banking routes and 200 ms on the card transaction reads, it times the
// undeferred dashboard, the deferred one's first part and whole answer over
// multipart/mixed, and the first part's own query alone, and logs their
// medians. It runs only when FINGRAPH_MEASURE_DEFER is set.
func TestMeasureIncrementalDelivery(t *testing.T) {
	if os.Getenv("FINGRAPH_MEASURE_DEFER") == "" {
		t.Skip("a measurement: set FINGRAPH_MEASURE_DEFER=1")
	}
	g := startGateway(t)
	anna := dashboardSetup(t, g)
	for _, route := range []string{routeCurrentCorporation, routeWallets, routeCards, routePersons, routeInvoices} {
		g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": route, "latency_ms": 20}, nil)
	}
	g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": routeCardTransactions, "latency_ms": 200}, nil)

	undeferred := screenQuery(t, "corporation_dashboard")
	deferred := screenQuery(t, "corporation_dashboard_deferred")
	// The first part alone: the deferred dashboard without its fragment.
	const firstOnly = `{ currentCorporation { id name
	  wallets { id name currency balance { amount currency } requisites { id number code type } }
	  persons { id firstName lastName }
	  invoices { id type isPaid amount { amount currency } createdAt } } }`
	const rounds = 30
	var whole, part, all, alone []time.Duration
	for range rounds {
		start := time.Now()
		if r := anna.query(t, undeferred, nil); len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
		whole = append(whole, time.Since(start))

		start = time.Now()
		if r := anna.query(t, firstOnly, nil); len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
		alone = append(alone, time.Since(start))

		start = time.Now()
		s := anna.postMultipart(t, context.Background(), deferred, nil)
		if _, ok := s.next(t); !ok {
			t.Fatal("no first part")
		}
		part = append(part, time.Since(start))
		s.rest(t)
		all = append(all, time.Since(start))
		s.resp.Body.Close()
	}
	p50 := func(d []time.Duration) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[len(s)/2].Round(100 * time.Microsecond)
	}
	t.Logf("%d rounds, p50: undeferred dashboard %v; deferred over multipart/mixed: first part %v, whole %v; the first part's query alone %v",
		rounds, p50(whole), p50(part), p50(all), p50(alone))
}
