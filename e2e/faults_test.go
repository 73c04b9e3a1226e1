package e2e

import (
	"net/http"
	"testing"
)

// TestSandboxFaultsFromTheFlagAndControlAPI: a random latency set by
// -sandbox-faults still loads the screen; an injected error status and a
// dropped connection set through the control API reach the client as
// UPSTREAM_UNAVAILABLE, never INTERNAL. (Failures come last, each on a
// fresh gateway: they open the gateway's circuit breaker.)
func TestSandboxFaultsFromTheFlagAndControlAPI(t *testing.T) {
	g := startGateway(t, "-sandbox-faults", `[{"route": "GET /payments/v1/customer", "latency_ms": 1, "latency_max_ms": 5}]`)
	g = g.as(g.signInAPI(t))
	var faults []map[string]any
	g.sandbox(t, http.MethodGet, "/_sandbox/faults", nil, &faults)
	if len(faults) != 1 || faults[0]["latency_max_ms"] != float64(5) {
		t.Fatalf("the flag's fault is not installed: %+v", faults)
	}
	const q = `{ customers { id } }`
	var d struct {
		Customers []struct{ ID string } `json:"customers"`
	}
	g.query(t, q, nil).decode(t, &d)
	if len(d.Customers) == 0 {
		t.Fatal("with latency only, the customers still load")
	}

	g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": "GET /payments/v1/customer", "error_rate": 1, "status": 503}, nil)
	if r := g.query(t, q, nil); r.code() != "UPSTREAM_UNAVAILABLE" {
		t.Fatalf("injected 503: %+v", r.Errors)
	}
	// A gateway of its own, so that its breaker is closed when the
	// connection drops.
	h := startGateway(t)
	h = h.as(h.signInAPI(t))
	h.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": "GET /payments/v1/customer", "drop_rate": 1}, nil)
	if r := h.query(t, q, nil); r.code() != "UPSTREAM_UNAVAILABLE" {
		t.Fatalf("dropped connection: %+v", r.Errors)
	}
	if n := h.stats(t).Routes["GET /payments/v1/customer"]; n == 0 {
		t.Fatal("the dropped call never reached the sandbox")
	}
}
