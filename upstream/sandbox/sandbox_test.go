package sandbox_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

func start(t *testing.T) string {
	t.Helper()
	sb := sandbox.New(sandbox.Config{})
	sb.Seed()
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { srv.Close(); sb.Close() })
	return srv.URL
}

func do(t *testing.T, method, url, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+paymentsim.PrivateKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

type stats struct {
	Routes map[string]int `json:"routes"`
	Total  int            `json:"total"`
}

func getStats(t *testing.T, base string) stats {
	t.Helper()
	code, b := do(t, http.MethodGet, base+"/_sandbox/stats", "")
	require.Equal(t, http.StatusOK, code)
	var s stats
	require.NoError(t, json.Unmarshal(b, &s))
	return s
}

func TestStatsCountCallsPerRoutePattern(t *testing.T) {
	base := start(t)
	do(t, http.MethodGet, base+"/payments/v1/customer", "")
	do(t, http.MethodGet, base+"/payments/v1/customer/a", "")
	do(t, http.MethodGet, base+"/payments/v1/customer/b", "")
	do(t, http.MethodGet, base+"/banking/v2/persons/me", "") // refused (no token), still a call

	s := getStats(t, base)
	assert.Equal(t, 1, s.Routes["GET /payments/v1/customer"])
	assert.Equal(t, 2, s.Routes["GET /payments/v1/customer/{customer_id}"], "counted under the pattern, not the path")
	assert.Equal(t, 1, s.Routes["GET /banking/v2/persons/me"])
	assert.Equal(t, 4, s.Total)
	assert.NotContains(t, s.Routes, "GET /_sandbox/stats", "the control API is not an upstream call")

	code, _ := do(t, http.MethodPost, base+"/_sandbox/stats/reset", "")
	assert.Equal(t, http.StatusNoContent, code)
	assert.Zero(t, getStats(t, base).Total)
}

func TestFaultsInjectErrorsPerRoute(t *testing.T) {
	base := start(t)
	code, _ := do(t, http.MethodPost, base+"/_sandbox/faults", `{"route": "GET /payments/v1/customer", "error_rate": 1, "status": 502}`)
	require.Equal(t, http.StatusOK, code)

	code, b := do(t, http.MethodGet, base+"/payments/v1/customer", "")
	assert.Equal(t, http.StatusBadGateway, code)
	assert.Contains(t, string(b), "injected_fault")
	code, _ = do(t, http.MethodGet, base+"/payments/v1/customer/whatever", "")
	assert.Equal(t, http.StatusNotFound, code, "other routes are untouched")

	code, _ = do(t, http.MethodPost, base+"/_sandbox/faults", `{"route": "*", "error_rate": 1}`)
	require.Equal(t, http.StatusOK, code)
	code, _ = do(t, http.MethodGet, base+"/banking/v2/corporations", "")
	assert.Equal(t, http.StatusServiceUnavailable, code, "\"*\" matches every route; 503 by default")

	code, _ = do(t, http.MethodDelete, base+"/_sandbox/faults", "")
	require.Equal(t, http.StatusNoContent, code)
	code, _ = do(t, http.MethodGet, base+"/payments/v1/customer", "")
	assert.Equal(t, http.StatusOK, code)
}

func TestFaultValidation(t *testing.T) {
	base := start(t)
	for _, body := range []string{
		`{"route": "", "error_rate": 1}`,
		`{"route": "*", "error_rate": 1.5}`,
		`{"route": "*", "error_rate": -0.1}`,
		`{"route": "*", "latency_ms": -1}`,
		`{"route": "*", "latency_ms": 50, "latency_max_ms": 10}`,
		`{"route": "*", "drop_rate": 2}`,
		`{"route": "*", "error_rate": 1, "status": 200}`,
		`{"route": "*", "colour": "red"}`,
		`not json`,
	} {
		code, _ := do(t, http.MethodPost, base+"/_sandbox/faults", body)
		assert.Equal(t, http.StatusBadRequest, code, body)
	}
	// A fault with neither latency nor errors removes the route's fault.
	do(t, http.MethodPost, base+"/_sandbox/faults", `{"route": "*", "error_rate": 1}`)
	do(t, http.MethodPost, base+"/_sandbox/faults", `{"route": "*"}`)
	code, b := do(t, http.MethodGet, base+"/_sandbox/faults", "")
	require.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `[]`, string(b))
}
