package bankingsim_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// clock is a settable time source for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is a seeded banking emulator behind a real HTTP server.
type env struct {
	t     *testing.T
	srv   *httptest.Server
	clock *clock
}

func newEnv(t *testing.T) *env {
	t.Helper()
	c := &clock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	sim := bankingsim.New(bankingsim.Options{TokenGrace: 10 * time.Second, Now: c.Now})
	sim.Seed()
	srv := httptest.NewServer(sandboxRouter(sim))
	t.Cleanup(srv.Close)
	return &env{t: t, srv: srv, clock: c}
}

// resp is a decoded answer.
type resp struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

func (r resp) err0() map[string]any {
	errs, _ := r.body["errors"].([]any)
	if len(errs) == 0 {
		return nil
	}
	m, _ := errs[0].(map[string]any)
	return m
}

// hasErr reports whether the errors array holds field with code.
func (r resp) hasErr(field string, code int) bool {
	errs, _ := r.body["errors"].([]any)
	for _, e := range errs {
		m, _ := e.(map[string]any)
		c, _ := m["code"].(float64)
		if m["field"] == field && int(c) == code {
			return true
		}
	}
	return false
}

func (e *env) do(method, path, token string, body any) resp {
	e.t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(e.t, err)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("x-access-token", token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	out := resp{status: res.StatusCode, header: res.Header, raw: buf.Bytes()}
	if len(bytes.TrimSpace(out.raw)) > 0 && out.raw[0] == '{' {
		require.NoError(e.t, json.Unmarshal(out.raw, &out.body), string(out.raw))
	}
	return out
}

// list decodes a JSON array answer (the outboxes).
func (e *env) list(path string) []map[string]any {
	e.t.Helper()
	res, err := http.Get(e.srv.URL + path)
	require.NoError(e.t, err)
	defer res.Body.Close()
	var out []map[string]any
	require.NoError(e.t, json.NewDecoder(res.Body).Decode(&out))
	return out
}

// lastCode is the code of the newest message of an outbox sent to `to`.
func (e *env) lastCode(outbox, to string) string {
	e.t.Helper()
	for _, m := range e.list("/_sandbox/" + outbox) {
		if m["to"] == to {
			c, _ := m["code"].(string)
			return c
		}
	}
	e.t.Fatalf("no %s to %s", outbox, to)
	return ""
}

func fp() map[string]any {
	return map[string]any{"identifiers": map[string]any{"id_fingerprint": 42}}
}

// signInPerson signs in a person without two-factor.
func (e *env) signInPerson(email string) string {
	e.t.Helper()
	r := e.do("POST", "/banking/v2/person/signin", "", map[string]any{"email": email, "password": bankingsim.DemoPassword, "fp_client_data": fp()})
	require.Equal(e.t, 200, r.status, string(r.raw))
	tok, _ := r.body["token"].(string)
	require.NotEmpty(e.t, tok)
	return tok
}

// signInStaff runs the staff two-factor flow (v2 shape).
func (e *env) signInStaff() string {
	e.t.Helper()
	body := map[string]any{"email": bankingsim.StaffEmail, "password": bankingsim.DemoPassword}
	r := e.do("POST", "/banking/v2/staff/signin", "", body)
	require.Equal(e.t, 200, r.status, string(r.raw))
	body["two_fa_code"] = e.lastCode("sms", bankingsim.StaffPhone)
	r = e.do("POST", "/banking/v2/staff/signin", "", body)
	require.Equal(e.t, 200, r.status, string(r.raw))
	return r.body["token"].(string)
}

func (e *env) signInAPI(key string) string {
	e.t.Helper()
	r := e.do("POST", "/banking/v2/api/signin", "", map[string]any{"apiKey": key})
	require.Equal(e.t, 200, r.status, string(r.raw))
	return r.body["token"].(string)
}

// sandboxRouter mounts a Sim the way the root sandbox does.
func sandboxRouter(sim *bankingsim.Sim) http.Handler {
	r := chi.NewRouter()
	r.Route("/banking", sim.Routes)
	r.Route("/_sandbox", sim.Control)
	return r
}
