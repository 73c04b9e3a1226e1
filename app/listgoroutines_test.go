package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	runtimemetrics "runtime/metrics"
	"testing"
)

// The README query marshals its lists (the customers, each customer's
// orders) on the request's goroutine: gqlgen's goroutine per list element
// is rewritten away where no element waits on I/O (internal/gqlinline).
// Counted with the runtime's count of goroutines started, over requests
// served straight by the handler with the upstream answers replayed from
// memory, so that nothing but the gateway's own work starts goroutines.
func TestReadmeQueryStartsNoGoroutinePerListElement(t *testing.T) {
	canned := &cannedTransport{recorded: map[string]*cannedResponse{}}
	cfg, err := ParseConfig([]string{"-addr", "127.0.0.1:0", "-sandbox-addr", "127.0.0.1:0", "-data-dir", t.TempDir(),
		"-log-level", "warn", "-register-webhook", "false", "-reconcile-interval", "0"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a, err := start(context.Background(), cfg, slog.New(slog.DiscardHandler),
		func(_ string, rt http.RoundTripper) http.RoundTripper { canned.inner = rt; return canned })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	h := a.server.Handler
	query := `{ customers { id number contact { name email } orders { id status amount { amount currency } } } }`
	var answer struct {
		Data struct {
			Customers []struct{ Orders []struct{ ID string } }
		}
	}
	if err := json.Unmarshal(serveT(t, h, query), &answer); err != nil {
		t.Fatal(err)
	}
	lists := 0
	for _, c := range answer.Data.Customers {
		if len(c.Orders) > 1 {
			lists++
		}
	}
	if len(answer.Data.Customers) < 2 || lists < 2 {
		t.Fatalf("the seeded data has no lists to marshal: %+v", answer.Data.Customers)
	}
	canned.replay.Store(true)
	serveT(t, h, query)

	const requests = 20
	created := []runtimemetrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	runtimemetrics.Read(created)
	before := created[0].Value.Uint64()
	for range requests {
		serveT(t, h, query)
	}
	runtimemetrics.Read(created)
	if n := created[0].Value.Uint64() - before; n >= requests {
		t.Errorf("%d goroutines started for %d requests of %d customers (%d with several orders): want fewer than one per request",
			n, requests, len(answer.Data.Customers), lists)
	}
	if m := canned.misses.Load(); m > 0 {
		t.Fatalf("%d upstream calls were not recorded", m)
	}
}

// serveT is serveBody for a test.
func serveT(t *testing.T, h http.Handler, query string) []byte {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	return serveBody(t, h, "", body)
}
