package e2e

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
)

// TestConcurrentCreateOrderWithOneKeyOnTwoReplicasIsOneOrder sends the
// same createOrder, with one idempotency key, eight times at once through
// two replicas sharing one JetStream, while the upstream is slow: the
// upstream must see one order, and every caller must get that order.
func TestConcurrentCreateOrderWithOneKeyOnTwoReplicasIsOneOrder(t *testing.T) {
	a, b := twoReplicas(t)
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
