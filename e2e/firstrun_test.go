package e2e

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fingraph/fingraph/app"
	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// What a new user meets after the first command: settings that cannot be
// right are refused at start in one line naming the setting, and a
// webhook the upstream refuses for now does not stop the gateway. The
// first command itself is TestFirstCommandAsTheREADMEGivesIt (package
// main), which runs it the README's way.

// startErr starts a gateway with args and returns Start's error (nil when
// it started; it is then stopped at cleanup).
func startErr(t *testing.T, args ...string) error {
	t.Helper()
	cfg, err := app.ParseConfig(append([]string{"-addr", "127.0.0.1:0", "-sandbox-addr", "127.0.0.1:0", "-data-dir", t.TempDir(),
		"-register-webhook", "false", "-reconcile-interval", "0"}, args...), func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := app.Start(ctx, cfg, slog.New(slog.DiscardHandler))
	if err == nil {
		t.Cleanup(func() { _ = a.Shutdown() })
	}
	return err
}

func TestStartRefusesAnUpstreamURLThatCannotBeRight(t *testing.T) {
	sb := sandbox.New(sandbox.Config{})
	sb.Seed()
	up := httptest.NewServer(sb)
	t.Cleanup(func() { up.Close(); sb.Close() })
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, "<html>not here</html>")
	}))
	t.Cleanup(page.Close)
	keys := func(access string) []string {
		return []string{"-payments-private-key", paymentsim.PrivateKey, "-payments-public-key", paymentsim.PublicKey, "-payments-access-token", access}
	}
	cases := []struct {
		name       string
		args       []string
		want       []string // in the error, each
		startsFine bool
	}{
		{"both right", append([]string{"-payments-url", up.URL + "/payments", "-banking-url", up.URL + "/banking"}, keys(paymentsim.AccessToken)...), nil, true},
		{"payments is a web page", append([]string{"-payments-url", page.URL + "/payments", "-banking-url", up.URL + "/banking"}, keys(paymentsim.AccessToken)...),
			[]string{"FINGRAPH_PAYMENTS_URL", page.URL + "/payments", "does not answer as the payments interface", "404"}, false},
		{"payments is the banking interface", append([]string{"-payments-url", up.URL + "/banking", "-banking-url", up.URL + "/banking"}, keys(paymentsim.AccessToken)...),
			[]string{"FINGRAPH_PAYMENTS_URL", "does not answer as the payments interface"}, false},
		{"banking is a web page", append([]string{"-payments-url", up.URL + "/payments", "-banking-url", page.URL}, keys(paymentsim.AccessToken)...),
			[]string{"FINGRAPH_BANKING_URL", "does not answer as the banking interface"}, false},
		{"a wrong access token", append([]string{"-payments-url", up.URL + "/payments", "-banking-url", up.URL + "/banking"}, keys("at_wrong")...),
			[]string{"FINGRAPH_PAYMENTS_ACCESS_TOKEN", "refused"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := startErr(t, tc.args...)
			if tc.startsFine {
				if err != nil {
					t.Fatalf("start: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("the gateway started")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the refusal %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "at_wrong") {
				t.Errorf("the refusal shows the token: %v", err)
			}
		})
	}
}

func TestUnreachableNATSNamesTheSettingAndTheURL(t *testing.T) {
	err := startErr(t, "-nats-url", "nats://fingraph:hunter2@127.0.0.1:1")
	if err == nil {
		t.Fatal("the gateway started without its NATS")
	}
	for _, w := range []string{"FINGRAPH_NATS_URL", "nats://fingraph:", "127.0.0.1:1"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("the error shows the password: %v", err)
	}
}

func TestTwoGatewaysOnOneDataDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := startErr(t, "-data-dir", dir); err != nil {
		t.Fatal(err)
	}
	err := startErr(t, "-data-dir", dir)
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "is in use by another gateway (process ") {
		t.Fatalf("a second gateway on %s: %v", dir, err)
	}
}

// TestGatewaysOnNestedDataDirectories: a gateway is refused a data
// directory inside or around one another gateway holds, before it touches
// anything there: the one inside would run a second JetStream on the
// other's store (a sandbox-mode gateway keeps its store in sandbox/), the
// one around would empty the other's store at its sandbox-mode start.
func TestGatewaysOnNestedDataDirectories(t *testing.T) {
	d := t.TempDir()
	if err := startErr(t, "-data-dir", d); err != nil {
		t.Fatal(err)
	}
	err := startErr(t, "-data-dir", filepath.Join(d, "sandbox"))
	if err == nil || !strings.Contains(err.Error(), "FINGRAPH_DATA_DIR") || !strings.Contains(err.Error(), "is inside "+d) {
		t.Fatalf("a gateway inside another's data directory: %v", err)
	}

	e := t.TempDir()
	inner := filepath.Join(e, "sandbox")
	if err := startErr(t, "-data-dir", inner); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(filepath.Join(inner, "sandbox"))
	err = startErr(t, "-data-dir", e)
	if err == nil || !strings.Contains(err.Error(), "contains "+inner) {
		t.Fatalf("a gateway around another's data directory: %v", err)
	}
	if after, _ := os.ReadDir(filepath.Join(inner, "sandbox")); len(before) == 0 || len(after) != len(before) {
		t.Errorf("the inner gateway's store changed: %d entries, was %d", len(after), len(before))
	}
}

// TestAWebhookRefusedAtStartIsRetried: the upstream refuses the first
// registrations (503); the gateway serves anyway, and registers the
// webhook in the background once the upstream takes it, after which a
// sandbox event reaches the event history.
func TestAWebhookRefusedAtStartIsRetried(t *testing.T) {
	var refused atomic.Int32
	g := startGatewayWith(t, sandboxBehind(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/webhooks") && refused.Add(1) <= 2 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, `{"error":{"code":"unavailable","message":"try later"}}`)
				return
			}
			next.ServeHTTP(w, r)
		})
	}), "-register-webhook", "true")
	if r := g.as(g.signInAPI(t)).query(t, `{ customers { id } }`, nil); len(r.Errors) > 0 {
		t.Fatalf("the gateway does not serve after a refused registration: %+v", r.Errors)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(g.Logs.String(), `"msg":"webhook registered"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the webhook was never registered:\n%s", g.Logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := strings.Count(g.Logs.String(), "the webhook could not be registered"); n != 1 {
		t.Errorf("the refusal was reported %d times, want once", n)
	}
}
