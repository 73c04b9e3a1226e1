package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fingraph/fingraph/app"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestRunServesAndShutsDownOnCancel drives run the way main does.
func TestRunServesAndShutsDownOnCancel(t *testing.T) {
	addr := freeAddr(t)
	env := map[string]string{
		"FINGRAPH_ADDR":         addr,
		"FINGRAPH_SANDBOX_ADDR": "127.0.0.1:0",
		"FINGRAPH_DATA_DIR":     t.TempDir(),
		"FINGRAPH_LOG_FORMAT":   "json",
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	logs := &syncBuffer{}
	go func() { done <- app.Run(ctx, []string{"fingraph"}, func(k string) string { return env[k] }, logs) }()

	var resp *http.Response
	var err error
	for i := 0; i < 200; i++ {
		if resp, err = http.Get("http://" + addr + "/readyz"); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("gateway never answered: %v\n%s", err, logs)
	}
	var ready struct {
		Ready  bool              `json:"ready"`
		Checks map[string]string `json:"checks"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&ready)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !ready.Ready || ready.Checks["jetstream"] != "ok" {
		t.Fatalf("readyz: %d %+v", resp.StatusCode, ready)
	}
	// The README's query, signed out: sandbox mode's demo session answers.
	qresp, err := http.Post("http://"+addr+"/graphql", "application/json", strings.NewReader(`{"query":"`+readmeQuery+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	qbody, _ := io.ReadAll(qresp.Body)
	qresp.Body.Close()
	if !strings.Contains(string(qbody), `"number":"C-1001"`) || strings.Contains(string(qbody), `"errors"`) {
		t.Fatalf("README query on a fresh start: %s", qbody)
	}
	for path, want := range map[string]string{"/healthz": `"ok"`, "/": "<html", "/metrics": `fingraph_upstream_requests_total{code="200",method="get",upstream="payments"}`} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d, body lacks %q", path, resp.StatusCode, want)
		}
	}
	// Out of the box: the sandbox, JetStream, and live events through the
	// gateway's own webhook.
	for _, want := range []string{"sandbox", "gateway listening", "embedded JetStream", "webhook registered"} {
		mustContain(t, logs.String(), want)
	}
	// The start-up line gives every page a newcomer opens.
	mustContain(t, logs.String(), `"dashboard":"http://`+addr+`/dashboard"`)

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run returned %v on shutdown", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Error("gateway still answers after shutdown")
	}
}

func TestQueryShapeLimits(t *testing.T) {
	g := startGateway(t)
	deep := "{ customers { orders { customer { orders { customer { orders { customer { orders { customer { orders { customer { orders { customer { id } } } } } } } } } } } } }"
	aliases := "{ " + strings.Repeat("a: ok ", 1) + func() string {
		var b strings.Builder
		for i := 0; i < 40; i++ {
			b.WriteString("x" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ": ok ")
		}
		return b.String()
	}() + "}"
	for name, q := range map[string]string{"too deep": deep, "too many aliases": aliases} {
		t.Run(name, func(t *testing.T) {
			g.resetStats(t)
			resp := g.query(t, q, nil)
			if resp.code() != "BAD_USER_INPUT" {
				t.Fatalf("want BAD_USER_INPUT, got %+v", resp.Errors)
			}
			if s := g.stats(t); s.Total != 0 {
				t.Errorf("refused query still called the upstream: %v", s.Routes)
			}
		})
	}
}

// TestSandboxModeAnswersTheReadmeQueryWithoutSigningIn is the first
// experience of `go run .`: in sandbox mode a request without a session
// acts as the demo API client, so the README's query answers at once.
func TestSandboxModeAnswersTheReadmeQueryWithoutSigningIn(t *testing.T) {
	g := startGateway(t, "-sandbox-anonymous", "true")
	var d customersData
	g.query(t, readmeQuery, nil).decode(t, &d)
	if len(d.Customers) < 5 {
		t.Fatalf("want the seeded customers, got %+v", d)
	}
	var v struct {
		Viewer struct {
			Kind string `json:"kind"`
		} `json:"viewer"`
	}
	g.query(t, `{ viewer { kind } }`, nil).decode(t, &v)
	if v.Viewer.Kind != "API_CLIENT" {
		t.Errorf("anonymous viewer: %+v", v)
	}
	// Signing out of the shared session ends nothing for the next request.
	g.query(t, `mutation { signOut }`, nil)
	g.query(t, readmeQuery, nil).decode(t, &d)
	if len(d.Customers) < 5 {
		t.Fatalf("after signOut: %+v", d)
	}
	// A real sign-in still gives the client its own session.
	person := g.signInPerson(t, "anna@demo.test")
	if resp := g.queryAs(t, person, `{ customers { id } }`, nil); resp.code() != "FORBIDDEN" {
		t.Errorf("a signed-in person is not the anonymous operator: %+v", resp.Errors)
	}
}
