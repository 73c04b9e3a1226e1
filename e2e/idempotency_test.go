package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// TestConcurrentCreateOrderWithOneKeyOnTwoReplicasIsOneOrder sends the
// same createOrder, with one idempotency key, eight times at once through
// two replicas sharing one JetStream, while the upstream is slow: the
// upstream must see one order, and every caller must get that order.
func TestConcurrentCreateOrderWithOneKeyOnTwoReplicasIsOneOrder(t *testing.T) {
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS did not start")
	}
	sb := sandbox.New(sandbox.Config{})
	sb.Seed()
	up := httptest.NewServer(validated(t, sb))
	t.Cleanup(func() { up.Close(); sb.Close() })
	replica := func() *testGateway {
		g := startGateway(t, "-nats-url", ns.ClientURL(),
			"-payments-url", up.URL+"/payments", "-banking-url", up.URL+"/banking",
			"-payments-private-key", paymentsim.PrivateKey, "-payments-public-key", paymentsim.PublicKey,
			"-payments-access-token", paymentsim.AccessToken)
		g.SandboxURL = up.URL
		return g
	}
	a, b := replica(), replica()
	token := a.signInAPI(t)
	a, b = a.as(token), b.as(token)

	// A slow upstream keeps the first call in flight while the others arrive.
	a.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": "POST /payments/v1/order", "latency_ms": 300}, nil)
	a.resetStats(t)

	input := map[string]any{"idempotencyKey": uniq("concurrent-"), "currency": "EUR", "items": map[string]any{"amount": 1500},
		"payment": map[string]any{"card": map[string]any{"token": uniq("tok_ok_")}}}
	const calls = 8
	results := make([]gqlResponse, calls)
	var wg sync.WaitGroup
	for i := range calls {
		g := a
		if i%2 == 1 {
			g = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = g.query(t, createOrderMutation, map[string]any{"input": input})
		}()
	}
	wg.Wait()

	if n := a.stats(t).Routes["POST /payments/v1/order"]; n != 1 {
		t.Errorf("%d upstream orders for one idempotency key, want 1", n)
	}
	var first string
	for i, r := range results {
		var d struct {
			CreateOrder orderResult `json:"createOrder"`
		}
		if len(r.Errors) > 0 {
			t.Fatalf("call %d: %+v", i, r.Errors)
		}
		if err := json.Unmarshal(r.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.CreateOrder.Typename != "Order" || d.CreateOrder.ID == "" {
			t.Fatalf("call %d: got %+v, want an Order", i, d.CreateOrder)
		}
		if first == "" {
			first = d.CreateOrder.ID
		}
		if d.CreateOrder.ID != first {
			t.Errorf("call %d got order %s, call 0 got %s", i, d.CreateOrder.ID, first)
		}
	}
}
