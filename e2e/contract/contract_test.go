package contract_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/e2e/contract"
	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

func call(t *testing.T, h http.Handler, method, path, body string) int {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+paymentsim.PrivateKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}

func seeded(t *testing.T) *sandbox.Sandbox {
	sb := sandbox.New(sandbox.Config{})
	sb.Seed()
	t.Cleanup(sb.Close)
	return sb
}

// TestValidatorPassesConformingTraffic: real sandbox answers, checked.
func TestValidatorPassesConformingTraffic(t *testing.T) {
	v, err := contract.Wrap(seeded(t))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, call(t, v, "GET", "/payments/v1/customer", ""))
	assert.Equal(t, http.StatusOK, call(t, v, "GET", "/payments/v1/order?start=2020-01-01&end=2030-01-01", ""))
	assert.Equal(t, http.StatusUnauthorized, call(t, v, "GET", "/banking/v2/persons/me", ""))
	assert.Equal(t, 200, call(t, v, "GET", "/_sandbox/stats", ""))
	assert.Empty(t, v.Violations())
	assert.Equal(t, 3, v.Checked(), "the control API is not validated")
}

// TestValidatorRecordsAWrongAnswer: a sandbox answering outside its own
// document is caught.
func TestValidatorRecordsAWrongAnswer(t *testing.T) {
	sb := seeded(t)
	broken := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/payments/v1/customer" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"not": "an array"}`))
			return
		}
		sb.ServeHTTP(w, r)
	})
	v, err := contract.Wrap(broken)
	require.NoError(t, err)
	call(t, v, "GET", "/payments/v1/customer", "")
	require.Len(t, v.Violations(), 1)
	assert.Contains(t, v.Violations()[0], "listCustomers")
}

// TestValidatorRecordsAnAcceptedBadRequest: a request the document refuses
// but the sandbox accepted is a violation (one of them is wrong); the same
// request refused by the sandbox is not.
func TestValidatorRecordsAnAcceptedBadRequest(t *testing.T) {
	sb := seeded(t)
	lenient := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/payments/v1/webhooks" && r.Method == http.MethodPost {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id": "x", "url": "https://example.com", "created_at": "2020-01-01T00:00:00Z"}`))
			return
		}
		sb.ServeHTTP(w, r)
	})
	v, err := contract.Wrap(lenient)
	require.NoError(t, err)
	call(t, v, "POST", "/payments/v1/webhooks", `{"no_url": true}`)
	require.Len(t, v.Violations(), 1)
	assert.Contains(t, v.Violations()[0], "registerWebhook")

	strict, err := contract.Wrap(sb)
	require.NoError(t, err)
	code := call(t, strict, "POST", "/payments/v1/webhooks", `{"no_url": true}`)
	assert.GreaterOrEqual(t, code, 400)
	assert.Empty(t, strict.Violations())
}
