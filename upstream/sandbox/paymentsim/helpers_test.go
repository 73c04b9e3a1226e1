package paymentsim_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// env is a payments sandbox behind a real HTTP server, mounted as the root
// sandbox mounts it.
type env struct {
	t   *testing.T
	sim *paymentsim.Sim
	srv *httptest.Server
}

func newEnv(t *testing.T, seed bool) *env {
	t.Helper()
	sim := paymentsim.New(paymentsim.Options{RetryUnit: 5 * time.Millisecond})
	r := chi.NewRouter()
	r.Route("/payments", sim.Routes)
	r.Route("/_sandbox", sim.Control)
	srv := httptest.NewServer(r)
	t.Cleanup(func() {
		sim.Close()
		srv.Close()
	})
	if seed {
		sim.Seed()
	}
	return &env{t: t, sim: sim, srv: srv}
}

type resp struct {
	status int
	body   []byte
	header http.Header
}

// json decodes the body into v and returns it.
func (r resp) json(t *testing.T, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.body, v), "body: %s", r.body)
}

// errBody is the error shape of the contract.
type errBody struct {
	Error struct {
		Code            string `json:"code"`
		Message         string `json:"message"`
		Field           string `json:"field"`
		OrderID         string `json:"order_id"`
		VerificationURL string `json:"verification_url"`
	} `json:"error"`
}

func (r resp) err(t *testing.T) errBody {
	t.Helper()
	var e errBody
	r.json(t, &e)
	require.NotEmpty(t, e.Error.Code, "body: %s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	return e
}

// call sends body (a string is sent as is, anything else as JSON) with the
// key as Bearer and Accept: application/json.
func (e *env) call(method, path, key string, body any) resp {
	e.t.Helper()
	return e.callH(method, path, key, body, map[string]string{"Accept": "application/json"})
}

func (e *env) callH(method, path, key string, body any, hdr map[string]string) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	default:
		buf, err := json.Marshal(b)
		require.NoError(e.t, err)
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	require.NoError(e.t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	return resp{status: res.StatusCode, body: b, header: res.Header}
}

type methodJSON struct {
	Type     string `json:"type"`
	Scheme   string `json:"scheme"`
	IIN      string `json:"iin"`
	Last4    string `json:"last4"`
	Expires  [2]int `json:"expires"`
	Acquirer string `json:"acquirer"`
	Created  string `json:"created"`
	Token    string `json:"token"`
}

type customerJSON struct {
	ID       string          `json:"id"`
	Number   string          `json:"number"`
	Contact  json.RawMessage `json:"contact"`
	Method   []methodJSON    `json:"method"`
	Status   string          `json:"status"`
	Total    int64           `json:"total"`
	Balance  []any           `json:"balance"`
	Currency string          `json:"currency"`
	Order    json.RawMessage `json:"order"`
}

type orderJSON struct {
	ID             string          `json:"id"`
	Created        string          `json:"created"`
	Number         string          `json:"number"`
	Customer       json.RawMessage `json:"customer"`
	Items          json.RawMessage `json:"items"`
	Currency       string          `json:"currency"`
	Charge         string          `json:"charge"`
	Payment        map[string]any  `json:"payment"`
	Status         string          `json:"status"`
	Amount         int64           `json:"amount"`
	CapturedAmount int64           `json:"captured_amount"`
	RefundedAmount int64           `json:"refunded_amount"`
}

type eventJSON struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Payload   map[string]any `json:"payload"`
	CreatedAt string         `json:"created_at"`
}

var browser = map[string]any{"browser": map[string]any{"user_agent": "test"}}

func cardPayment(tok string) map[string]any {
	return map[string]any{"type": "card", "card": tok, "client": browser}
}

func methodCreatable(tok string) map[string]any {
	return map[string]any{"type": "token", "card": tok, "client": browser}
}

// newCustomer creates a customer with one stored method (from tok) via the
// public key and returns it.
func (e *env) newCustomer(number, tok string) customerJSON {
	e.t.Helper()
	methods := []any{}
	if tok != "" {
		methods = append(methods, methodCreatable(tok))
	}
	r := e.call("POST", "/payments/v1/customer", paymentsim.PublicKey, map[string]any{
		"number":  number,
		"contact": map[string]any{"name": "Test Person", "email": "test@example.com"},
		"method":  methods,
	})
	require.Equal(e.t, http.StatusCreated, r.status, "%s", r.body)
	var c customerJSON
	r.json(e.t, &c)
	return c
}

// order creates an order with the private key and decodes the JSON answer.
func (e *env) order(body map[string]any) (resp, orderJSON) {
	e.t.Helper()
	r := e.call("POST", "/payments/v1/order", paymentsim.PrivateKey, body)
	var o orderJSON
	if r.status == http.StatusCreated {
		r.json(e.t, &o)
	}
	return r, o
}

// events returns all stored events, oldest first.
func (e *env) events() []eventJSON {
	e.t.Helper()
	var out []eventJSON
	after := ""
	for {
		path := "/payments/v1/events?limit=500"
		if after != "" {
			path += "&after=" + after
		}
		r := e.call("GET", path, paymentsim.AccessToken, nil)
		require.Equal(e.t, http.StatusOK, r.status, "%s", r.body)
		var page struct {
			Events  []eventJSON `json:"events"`
			HasMore bool        `json:"has_more"`
		}
		r.json(e.t, &page)
		out = append(out, page.Events...)
		if !page.HasMore {
			return out
		}
		after = page.Events[len(page.Events)-1].ID
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
