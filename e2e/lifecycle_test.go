package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fingraph/fingraph/app"
)

// TestShutdownLeavesNoGoroutines starts a gateway with every long-running
// piece on (sandbox, embedded JetStream, enricher, poller, a live
// subscription), shuts it down, and counts goroutines.
func TestShutdownLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	a, g := startApp(t, "-reconcile-interval", "20ms")
	g = g.as(g.signInAPI(t))
	ws := g.dialWS(t, nil, nil)
	ws.subscribeFromNow(g, "1", `subscription($after: String) { events(names: ["IndividualActivated"], after: $after) `+liveFields+` }`, nil)
	var ev sandboxEvent
	g.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "IndividualActivated"}, &ev)
	if e := ws.next("1", "events"); e.Event.UpstreamID != ev.ID {
		t.Fatalf("live event: %+v", e)
	}
	g.http.CloseIdleConnections()

	if err := a.Shutdown(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	ws.close()
	// Goroutines end asynchronously after their contexts close; wait for
	// them, bounded, then report what is left.
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("%d goroutines before, %d after shutdown:\n%s", before, n, firstStacks(string(buf), 15))
	}
}

func firstStacks(all string, n int) string {
	parts := strings.Split(all, "\n\n")
	if len(parts) > n {
		parts = parts[:n]
	}
	return strings.Join(parts, "\n\n")
}

// TestReadinessFollowsJetStream: when the bus goes away the gateway says so
// at /readyz (and webhooks are refused for a retry), while /healthz, which
// only says the process serves, stays up.
func TestReadinessFollowsJetStream(t *testing.T) {
	a, g := startApp(t, "-register-webhook", "false", "-reconcile-interval", "0")
	t.Cleanup(func() { _ = a.Shutdown() })
	ready := func() (int, map[string]string, string) {
		resp, err := http.Get(g.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var body struct {
			Checks map[string]string `json:"checks"`
		}
		_ = json.Unmarshal(raw, &body)
		return resp.StatusCode, body.Checks, string(raw)
	}
	status := func(path string) int {
		resp, err := http.Get(g.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code, checks, _ := ready(); code != http.StatusOK || checks["payments_upstream"] != "ok" || checks["banking_upstream"] != "ok" {
		t.Fatalf("after start: %d %v", code, checks)
	}
	a.CloseEngine()
	code, checks, raw := ready()
	if code != http.StatusServiceUnavailable || checks["jetstream"] != "unavailable" {
		t.Errorf("readyz with JetStream gone: %d %v", code, checks)
	}
	for _, internal := range []string{"127.0.0.1", "nats:", "localhost", "dial"} {
		if strings.Contains(raw, internal) {
			t.Errorf("readyz names internals (%q): %s", internal, raw)
		}
	}
	if got := status("/healthz"); got != http.StatusOK {
		t.Errorf("healthz with JetStream gone: %d", got)
	}
	resp, err := http.Post(g.URL+"/webhooks/payments", "application/json",
		strings.NewReader(`{"id":"6f0c1d52-8a5e-4c1b-9a43-2f7d0e6b9c11","name":"IndividualActivated","createdAt":"2026-01-01T00:00:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a webhook with JetStream gone: %d, want 503 so the sender retries", resp.StatusCode)
	}
}

// Shutdown ends long-lived connections with a code clients reconnect
// after: websockets get 1012 Service Restart (graphql-ws reconnects; a 1000
// would be a normal end), SSE streams end, and a query in flight finishes.
// Shutdown returning without error shows that nothing held it up to its
// timeout (http.Server.Shutdown would report the deadline).
func TestShutdownClosesSocketsWith1012AndEndsStreams(t *testing.T) {
	a, g := startApp(t, "-reconcile-interval", "0", "-register-webhook", "false")
	g = g.as(g.signInAPI(t))
	const sub = `subscription($after: String) { events(after: $after) { cursor } }`
	ws := g.dialWS(t, nil, nil)
	ws.subscribeFromNow(g, "1", sub, nil)

	resp := g.openSSE(t, sub, map[string]any{"after": g.cursorNow(t)})
	streamEnded := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, resp.Body); close(streamEnded) }()

	done := make(chan error, 1)
	go func() { done <- a.Shutdown() }()
	if code, _ := ws.closeCode(); code != 1012 {
		t.Errorf("websocket closed with %d, want 1012", code)
	}
	<-streamEnded
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// startApp starts a gateway whose shutdown the test drives itself (the
// harness's startGateway shuts down at cleanup), with the in-process sandbox.
func startApp(t *testing.T, args ...string) (*app.App, *testGateway) {
	t.Helper()
	cfg, err := app.ParseConfig(append([]string{"-addr", "127.0.0.1:0", "-sandbox-addr", "127.0.0.1:0", "-data-dir", t.TempDir()}, args...),
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Start(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return a, &testGateway{URL: "http://" + a.Addr(), SandboxURL: "http://" + a.SandboxAddr(), http: &http.Client{Timeout: 10 * time.Second}}
}

// openSSE starts a subscription over server-sent events with g's session
// and returns the open stream (closed at cleanup).
func (g *testGateway) openSSE(t *testing.T, query string, vars map[string]any) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+g.bearer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("not an event stream: %s", resp.Header.Get("Content-Type"))
	}
	return resp
}
