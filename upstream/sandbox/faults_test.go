package sandbox_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// TestFaultDropsTheConnection: drop_rate 1 closes the connection without an
// answer; the call is still counted, and clearing the fault restores it.
func TestFaultDropsTheConnection(t *testing.T) {
	base := start(t)
	code, _ := do(t, http.MethodPost, base+"/_sandbox/faults", `{"route": "GET /payments/v1/customer", "drop_rate": 1}`)
	require.Equal(t, http.StatusOK, code)
	req, _ := http.NewRequest(http.MethodGet, base+"/payments/v1/customer", nil)
	req.Header.Set("Authorization", "Bearer "+paymentsim.PrivateKey)
	res, err := http.DefaultClient.Do(req)
	if err == nil {
		res.Body.Close()
		t.Fatalf("a dropped connection answered %d", res.StatusCode)
	}
	// Go's transport resends an idempotent request once when the
	// connection closes before any answer, so the sandbox may count two.
	assert.GreaterOrEqual(t, getStats(t, base).Routes["GET /payments/v1/customer"], 1)
	do(t, http.MethodDelete, base+"/_sandbox/faults", "")
	code, _ = do(t, http.MethodGet, base+"/payments/v1/customer", "")
	assert.Equal(t, http.StatusOK, code)
}

// TestFaultRandomLatencyIsListed: a random latency range is accepted and
// listed as set (the delay itself is not timed here).
func TestFaultRandomLatencyIsListed(t *testing.T) {
	base := start(t)
	code, _ := do(t, http.MethodPost, base+"/_sandbox/faults", `{"route": "*", "latency_ms": 1, "latency_max_ms": 3}`)
	require.Equal(t, http.StatusOK, code)
	_, b := do(t, http.MethodGet, base+"/_sandbox/faults", "")
	var got []sandbox.Fault
	require.NoError(t, json.Unmarshal(b, &got))
	require.Len(t, got, 1)
	assert.Equal(t, 3, got[0].LatencyMaxMS)
	for range 5 {
		code, _ = do(t, http.MethodGet, base+"/payments/v1/customer", "")
		assert.Equal(t, http.StatusOK, code, "latency alone still answers")
	}
}

// TestPausedWebhooksAreHeldThenDelivered: the pause is visible, nothing is
// logged as sent while paused, and the held event arrives on resume. (That
// nothing would have been sent without the pause is not provable without a
// timing assumption; the delivery loop's wait is unit-tested by this flow.)
func TestPausedWebhooksAreHeldThenDelivered(t *testing.T) {
	got := make(chan string, 10)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b struct{ Name string }
		_ = json.NewDecoder(r.Body).Decode(&b)
		got <- b.Name
	}))
	defer recv.Close()
	sb := sandbox.New(sandbox.Config{})
	sb.Seed()
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { srv.Close(); sb.Close() })

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/payments/v1/webhooks", jsonBody(`{"url": "`+recv.URL+`"}`))
	req.Header.Set("Authorization", "Bearer "+paymentsim.AccessToken)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusCreated, res.StatusCode)

	code, _ := do(t, http.MethodPost, srv.URL+"/_sandbox/webhooks/pause", "")
	require.Equal(t, http.StatusOK, code)
	assert.True(t, sb.Payments.WebhooksPaused())
	code, _ = do(t, http.MethodPost, srv.URL+"/_sandbox/trigger", `{"name": "OrderCreated"}`)
	require.Equal(t, http.StatusOK, code)
	_, b := do(t, http.MethodGet, srv.URL+"/_sandbox/deliveries", "")
	assert.JSONEq(t, `[]`, string(b), "nothing sent while paused")

	code, _ = do(t, http.MethodPost, srv.URL+"/_sandbox/webhooks/resume", "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "OrderCreated", <-got)
}

func jsonBody(s string) io.Reader { return strings.NewReader(s) }
