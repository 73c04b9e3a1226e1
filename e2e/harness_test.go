package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/fingraph/fingraph/app"
	"github.com/fingraph/fingraph/e2e/contract"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// This file is the test harness: a real gateway, in front of a real sandbox,
// both listening on loopback, driven over HTTP.

// syncBuffer collects log output written from many goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// allLogs gathers what every test gateway logged, so that one test can
// search the whole suite's output for secrets.
var allLogs = &syncBuffer{}

type testGateway struct {
	URL        string
	SandboxURL string
	Logs       *syncBuffer
	http       *http.Client
	// bearer, when set, is the session token g.query sends.
	bearer string
}

// as returns a copy of g whose query calls carry the session token.
func (g *testGateway) as(token string) *testGateway {
	c := *g
	c.bearer = token
	return &c
}

// startGateway starts a gateway with the sandbox in-process and embedded
// JetStream under a temporary directory; it stops when the test ends.
// extraArgs override the defaults (the flag parser keeps the last value).
func startGateway(t testing.TB, extraArgs ...string) *testGateway {
	t.Helper()
	return startGatewayWith(t, nil, extraArgs...)
}

// sandboxBehind is a configure for startGatewayWith that puts wrap in front
// of the sandbox, after the contract validator: for tests that watch, gate
// or hold the gateway's upstream calls.
func sandboxBehind(wrap func(http.Handler) http.Handler) func(*app.Config) {
	return func(c *app.Config) {
		validate := c.SandboxMiddleware
		c.SandboxMiddleware = func(next http.Handler) http.Handler { return wrap(validate(next)) }
	}
}

// startGatewayWith is startGateway with configure, when not nil, applied to
// the parsed configuration before the gateway starts: for tests that need
// what no flag sets, such as a tracer provider or a wrapper around the
// sandbox (configure wraps cfg.SandboxMiddleware, the contract validator).
// What a flag sets is given as a flag, in extraArgs. app.Start validates
// the configuration as configure leaves it, so a change no flag could make
// passes the same checks.
func startGatewayWith(t testing.TB, configure func(*app.Config), extraArgs ...string) *testGateway {
	t.Helper()
	args := append([]string{
		"-addr", "127.0.0.1:0",
		"-sandbox-addr", "127.0.0.1:0",
		"-data-dir", t.TempDir(),
		"-log-level", "debug",
		"-log-format", "json",
		// Live events off unless a test asks for them: webhooks and polling
		// call the upstream in the background, and most tests count calls.
		"-register-webhook", "false",
		"-reconcile-interval", "0",
		// No poll after a live subscriber's baseline unless a test asks
		// for polling (livePollArgs): a poll that reads a change before
		// the mutation that made it announces it names it first, with
		// its own source, and tests of the gateway's own announcements
		// would depend on when polls happen to run.
		// TestAPollThatReadsTheBlockFirstNamesItAsTheMutationDoes covers
		// that race on purpose.
		"-bank-poll-interval", "1h",
		// Tests sign in as they need; the anonymous demo session is tested
		// on its own.
		"-sandbox-anonymous", "false",
	}, extraArgs...)
	cfg, err := app.ParseConfig(args, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	// Every upstream exchange of the test is checked against the sandbox's
	// OpenAPI documents; a violation fails the test that caused it. The
	// check runs after shutdown (cleanups run last-in first-out), when all
	// of the test's traffic is done. Benchmarks skip it: they measure the
	// gateway and the sandbox, not the validator.
	var validator *contract.Validator
	_, benchmark := t.(*testing.B)
	cfg.SandboxMiddleware = func(next http.Handler) http.Handler {
		if benchmark {
			return next
		}
		v, err := contract.Wrap(next)
		if err != nil {
			t.Fatalf("contract validator: %v", err)
		}
		validator = v
		return v
	}
	if configure != nil {
		configure(&cfg)
	}
	t.Cleanup(func() {
		if validator == nil {
			return
		}
		t.Logf("contract: %d upstream exchanges validated", validator.Checked())
		for _, v := range validator.Violations() {
			t.Errorf("contract: %s", v)
		}
	})
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(io.MultiWriter(logs, allLogs), &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := app.Start(ctx, cfg, logger)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		if err := a.Shutdown(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return &testGateway{
		URL:        "http://" + a.Addr(),
		SandboxURL: "http://" + a.SandboxAddr(),
		Logs:       logs,
		http:       &http.Client{Timeout: 20 * time.Second},
	}
}

// validated puts the contract validator in front of a sandbox a test starts
// on its own (replicas, real-upstream setups): its traffic is checked like
// the in-process sandbox's, and a violation fails the test.
func validated(t testing.TB, sandbox http.Handler) http.Handler {
	t.Helper()
	v, err := contract.Wrap(sandbox)
	if err != nil {
		t.Fatalf("contract validator: %v", err)
	}
	t.Cleanup(func() {
		for _, msg := range v.Violations() {
			t.Errorf("contract: %s", msg)
		}
	})
	return v
}

type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

type gqlResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

// code returns extensions.code of the first error, or "".
func (r gqlResponse) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// decode unmarshals data into v, failing the test on GraphQL errors.
func (r gqlResponse) decode(t *testing.T, v any) {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("unexpected GraphQL errors: %+v", r.Errors)
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("decode data %s: %v", r.Data, err)
	}
}

// query POSTs a GraphQL request (with g's session token, if any) and
// returns the decoded response.
func (g *testGateway) query(t *testing.T, query string, vars map[string]any) gqlResponse {
	t.Helper()
	return g.queryAs(t, g.bearer, query, vars)
}

// queryAs POSTs a GraphQL request as a mobile-style client: the session
// token, when not empty, travels as Authorization: Bearer.
func (g *testGateway) queryAs(t *testing.T, token, query string, vars map[string]any) gqlResponse {
	t.Helper()
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	out, _ := g.post(t, h, query, vars)
	return out
}

// post sends a GraphQL POST with extra headers and returns the decoded
// response and the HTTP response (body consumed).
func (g *testGateway) post(t *testing.T, h http.Header, query string, vars map[string]any) (gqlResponse, *http.Response) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := g.http.Do(req)
	if err != nil {
		t.Fatalf("POST /graphql: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	noteResponse(raw)
	var out gqlResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("POST /graphql answered %d %q: %v", resp.StatusCode, raw, err)
	}
	return out, resp
}

const signInMutation = `mutation($input: SignInInput!) { signIn(input: $input) {
  __typename
  ... on SignedIn { sessionToken csrfToken viewer { kind } }
  ... on TwoFactorChallenge { maskedPhone challengeId expiresAt }
} }`

// signInAPI signs in with the demo API key (an API client, allowed to
// operate payments by default) and returns the bearer session token.
func (g *testGateway) signInAPI(t *testing.T) string {
	t.Helper()
	var d struct {
		SignIn struct {
			Typename     string `json:"__typename"`
			SessionToken string `json:"sessionToken"`
		} `json:"signIn"`
	}
	g.queryAs(t, "", signInMutation, map[string]any{"input": map[string]any{"kind": "API_KEY", "apiKey": "demo-api-key"}}).decode(t, &d)
	if d.SignIn.Typename != "SignedIn" || d.SignIn.SessionToken == "" {
		t.Fatalf("API key sign-in gave %+v", d.SignIn)
	}
	return d.SignIn.SessionToken
}

// sandbox calls the sandbox's control API and decodes its JSON answer.
func (g *testGateway) sandbox(t *testing.T, method, path string, body, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, g.SandboxURL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
}

type sandboxStats struct {
	Routes map[string]int `json:"routes"`
	Total  int            `json:"total"`
}

func (g *testGateway) resetStats(t *testing.T) {
	t.Helper()
	g.sandbox(t, http.MethodPost, "/_sandbox/stats/reset", nil, nil)
}

func (g *testGateway) stats(t *testing.T) sandboxStats {
	t.Helper()
	var s sandboxStats
	g.sandbox(t, http.MethodGet, "/_sandbox/stats", nil, &s)
	return s
}

// uniq returns a name no other test run uses.
func uniq(prefix string) string {
	return fmt.Sprintf("%s%d", prefix, time.Now().UnixNano())
}

func mustContain(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("%q does not contain %q", s, sub)
	}
}
