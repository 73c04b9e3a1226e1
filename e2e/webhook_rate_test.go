package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FINGRAPH_WEBHOOK_RATE_LIMIT reaches the intake: at 1 webhook per second
// (burst 2) from one address, ten quick webhooks cannot all be accepted, and
// the refused ones are told when to retry. At most 2 + the seconds the posts
// took can pass, so the count holds however slow the machine is.
func TestWebhookRateLimitIsConfigurable(t *testing.T) {
	g := startGateway(t, "-webhook-rate-limit", "1")
	accepted, limited := 0, 0
	t0 := time.Now()
	for i := range 10 {
		resp, err := http.Post(g.URL+"/webhooks/payments", "application/json",
			strings.NewReader(fmt.Sprintf(`{"id":"evt_rate_%d","name":"OrderCreated","createdAt":"2026-01-01T00:00:00Z"}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusAccepted:
			accepted++
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
	if limited == 0 || accepted > allowed {
		t.Fatalf("at 1/s with a burst of 2: %d accepted, %d limited; want at most %d accepted", accepted, limited, allowed)
	}
}
