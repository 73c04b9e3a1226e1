package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FINGRAPH_WEBHOOK_RATE_LIMIT reaches the intake: at 1 refused delivery
// per second (burst 2) from one address, ten quick malformed webhooks cannot
// all be answered 400, and the limited ones are told when to retry. At most
// 2 + the seconds the posts took can pass, so the count holds however slow
// the machine is. (Well-formed webhooks are never limited:
// TestWebhookLimitAppliesToRefusedDeliveriesOnly.)
func TestWebhookRateLimitIsConfigurable(t *testing.T) {
	g := startGateway(t, "-webhook-rate-limit", "1")
	refused, limited := 0, 0
	t0 := time.Now()
	for i := range 10 {
		resp, err := http.Post(g.URL+"/webhooks/payments", "application/json",
			strings.NewReader(fmt.Sprintf(`{"id":"evt_rate_%d","name":"OrderCreated","createdAt":"2026-01-01T00:00:00Z"}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusBadRequest:
			refused++
		case http.StatusTooManyRequests:
			limited++
			if resp.Header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
		default:
			t.Fatalf("webhook %d: status %d", i, resp.StatusCode)
		}
	}
	allowed := 2 + int(time.Since(t0)/time.Second)
	if limited == 0 || refused > allowed {
		t.Fatalf("at 1/s with a burst of 2: %d refused, %d limited; want at most %d refused", refused, limited, allowed)
	}
}

// Behind a trusted proxy every sender's TCP peer is the proxy, so the
// per-sender limit is kept for the client the proxy forwarded for, as the
// other per-address limits are; a forwarding header from an untrusted peer
// names nobody, so it cannot be used to escape the limit.
func TestWebhookRateLimitFollowsTrustedProxies(t *testing.T) {
	post := func(g *testGateway, id, forwardedFor string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/webhooks/payments",
			strings.NewReader(fmt.Sprintf(`{"id":%q,"name":"OrderCreated","createdAt":"2026-01-01T00:00:00Z"}`, id)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", forwardedFor)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// A burst of 2 at 1/s: exhausting one client's burst of refusals leaves
	// its next malformed webhook limited, not another client's. (The ids
	// are not event ids: these deliveries are refused.)
	exhaust := func(g *testGateway, prefix, client string) {
		t.Helper()
		for i := range 10 {
			if post(g, fmt.Sprintf("%s_%d", prefix, i), client) == http.StatusTooManyRequests {
				return
			}
		}
		t.Fatalf("%s: ten webhooks from %s, none limited", prefix, client)
	}

	behind := startGateway(t, "-webhook-rate-limit", "1", "-trusted-proxies", "127.0.0.1")
	exhaust(behind, "evt_proxy_a", "203.0.113.1")
	if code := post(behind, "evt_proxy_b", "203.0.113.2"); code != http.StatusBadRequest {
		t.Errorf("another client behind the trusted proxy: status %d, want 400", code)
	}

	direct := startGateway(t, "-webhook-rate-limit", "1")
	exhaust(direct, "evt_direct_a", "203.0.113.1")
	if code := post(direct, "evt_direct_b", "203.0.113.2"); code != http.StatusTooManyRequests {
		t.Errorf("a forged X-Forwarded-For from an untrusted peer: status %d, want 429", code)
	}
}
