package e2e

import (
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Under 30% upstream failures and latency, every request is answered, with
// whatever data the healthy calls produced and a per-field
// UPSTREAM_UNAVAILABLE for the rest; with an upstream down, its breaker
// opens (calls stop reaching it, /readyz says so, the replica stays
// ready); and afterwards the goroutines are back to their baseline. Not
// parallel, so that the goroutine count is this test's own.
func TestFaultsAreSurvived(t *testing.T) {
	a, g := startApp(t, "-register-webhook", "false", "-reconcile-interval", "0", "-sandbox-anonymous", "false")
	t.Cleanup(func() { _ = a.Shutdown() })
	g = g.as(g.signInAPI(t))
	const screen = `{ viewer { kind corporation { name } } customers { id orders { id } } }`
	// Warm up at the storm's concurrency, so that pools of idle workers are
	// part of the baseline (idle connections are not counted: ownGoroutines).
	storm := func(n int) {
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() { defer wg.Done(); g.query(t, screen, nil) }()
		}
		wg.Wait()
	}
	storm(8)
	g.http.CloseIdleConnections()
	baseline := ownGoroutines()

	g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": "*", "error_rate": 0.3, "latency_ms": 20}, nil)
	var (
		wg                     sync.WaitGroup
		mu                     sync.Mutex
		partial, full, refused int
	)
	sem := make(chan struct{}, 4)
	for range 40 {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			body, _ := json.Marshal(map[string]any{"query": screen})
			r := g.raw(t, http.MethodPost, "application/json", body, http.Header{"Authorization": {"Bearer " + g.bearer}})
			if r.Status != http.StatusOK {
				t.Errorf("status %d: %s", r.Status, r.Body)
				return
			}
			var resp gqlResponse
			if err := json.Unmarshal(r.Body, &resp); err != nil {
				t.Errorf("not a GraphQL response: %s", r.Body)
				return
			}
			for _, e := range resp.Errors {
				if c, _ := e.Extensions["code"].(string); c != "UPSTREAM_UNAVAILABLE" {
					t.Errorf("an upstream fault surfaced as %q: %+v", c, e)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case len(resp.Errors) == 0:
				full++
			case string(resp.Data) != "null" && len(resp.Data) > 0:
				partial++
			default:
				refused++
			}
		}()
	}
	wg.Wait()
	t.Logf("40 screens under 30%% faults: %d whole, %d partial, %d without data", full, partial, refused)
	if full+partial == 0 {
		t.Error("no screen got any data")
	}

	// The banking upstream goes down: its breaker opens after ten
	// consecutive failed attempts, and calls stop reaching it.
	g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": "*", "error_rate": 0}, nil)
	g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": "GET /banking/v2/corporations/current", "error_rate": 1}, nil)
	for range 5 { // three attempts each
		g.query(t, `{ viewer { corporation { name } } }`, nil)
	}
	g.resetStats(t)
	r := g.query(t, `{ viewer { corporation { name } } }`, nil)
	if r.code() != "UPSTREAM_UNAVAILABLE" {
		t.Errorf("with the breaker open: %+v", r.Errors)
	}
	if n := g.stats(t).Routes["GET /banking/v2/corporations/current"]; n != 0 {
		t.Errorf("with the breaker open the upstream was still called %d times", n)
	}
	resp, err := http.Get(g.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var ready struct {
		Ready  bool              `json:"ready"`
		Checks map[string]string `json:"checks"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&ready)
	resp.Body.Close()
	if !ready.Ready || ready.Checks["banking_upstream"] != "unavailable" || ready.Checks["payments_upstream"] != "ok" {
		t.Errorf("readyz with banking down: %+v", ready)
	}

	g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": "*", "error_rate": 0}, nil)
	g.http.CloseIdleConnections()
	// Read workers started while faults slowed the reads (more of them at
	// once than the warm-up needed) exit only after idling 10 s, and the
	// pool looks for idle ones every 10 s (loaders.Workers): the count may
	// take up to 20 s to come back. Beyond that it bounds a hung test only.
	deadline := time.Now().Add(25 * time.Second)
	for ownGoroutines() > baseline && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := ownGoroutines(); n > baseline {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("%d goroutines before the faults, %d after:\n%s", baseline, n, firstStacks(string(buf), 10))
	}
}

// ownGoroutines counts the goroutines of the process but those of its
// idle kept-alive HTTP connections: the gateway's pools of upstream
// connections are bounded (MaxIdleConnsPerHost) and close idle ones after
// 90 s, and how many a load leaves open depends on how its calls overlapped
// (concurrent reads share calls), not on a leak. A connection whose handler
// is still running (ServeHTTP on its stack) counts.
func ownGoroutines() int {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		pooled := strings.Contains(g, "net/http.(*persistConn).readLoop") || strings.Contains(g, "net/http.(*persistConn).writeLoop")
		idleServer := strings.Contains(g, "net/http.(*conn).serve") && !strings.Contains(g, "ServeHTTP")
		if !pooled && !idleServer {
			n++
		}
	}
	return n
}
