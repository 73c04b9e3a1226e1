package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fingraph/fingraph/app"
	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// gatewayProcessEnv, set to 1, makes the test binary run a gateway (with
// its arguments as the gateway's flags) instead of the tests: the restart
// test kills that process with SIGKILL, which it cannot do to itself.
const gatewayProcessEnv = "FINGRAPH_E2E_GATEWAY_PROCESS"

// init runs before TestMain, so a gateway process never runs a test.
func init() {
	if os.Getenv(gatewayProcessEnv) != "1" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The test holds the other end of stdin: when it ends, however it ends,
	// so does the gateway, rather than outliving it on a shared machine.
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	err := app.Run(ctx, append([]string{"fingraph"}, os.Args[1:]...), os.Getenv, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// gatewayProcess is a gateway running as a process of its own, on a fixed
// address and data directory, so that a restart is the same gateway.
type gatewayProcess struct {
	t       *testing.T
	args    []string
	logs    string
	cmd     *exec.Cmd
	exited  chan struct{}
	stdin   io.WriteCloser
	started int
}

func (p *gatewayProcess) start() {
	p.t.Helper()
	p.started++
	logs, err := os.Create(filepath.Join(p.logs, fmt.Sprintf("gateway-%d.log", p.started)))
	if err != nil {
		p.t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], p.args...)
	cmd.Env = append(os.Environ(), gatewayProcessEnv+"=1")
	cmd.Stdout, cmd.Stderr = logs, logs
	// Never written to: it closes when the test process ends. It is kept
	// referenced, or the garbage collector would close it.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	p.stdin = stdin
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logs.Close(); close(exited) }()
	p.cmd, p.exited = cmd, exited
}

// kill ends the process with SIGKILL and waits for it to be gone.
func (p *gatewayProcess) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// Every event is delivered once across three kill -9 restarts in a row of
// a gateway process, each in the middle of a burst of 50 webhooks, with the
// subscriber resuming from the last cursor it got each time: the cursors
// stay valid, nothing is lost, nothing is duplicated. The upstream (the
// sandbox, in the test process) outlives the gateway and resends webhooks
// that found it down. Event reads are slowed, so that each kill finds
// webhooks stored and not yet enriched.
//
// With polling (every 200 ms, the upstream resending at 0.1-1.6 s), the
// listing finds what the webhooks did not bring. Without it (the upstream
// resending at 1-16 s, as the spec says), the webhooks alone must: the
// restarted gateway takes up the webhooks it had stored and not enriched
// once their delivery to the killed process times out (10 s).
func TestKilledGatewayLosesAndRepeatsNoEvent(t *testing.T) {
	t.Run("webhooks and polling", func(t *testing.T) { killAndRestart(t, 100*time.Millisecond, "200ms") })
	t.Run("webhooks alone", func(t *testing.T) { killAndRestart(t, time.Second, "0") })
}

// killAndRestart runs the kill -9 scenario with the sandbox's webhook retry
// unit and the gateway's reconcile interval.
func killAndRestart(t *testing.T, retryUnit time.Duration, reconcile string) {
	sb := sandbox.New(sandbox.Config{RetryUnit: retryUnit})
	sb.Seed()
	// Event reads take 20 ms, so that a kill finds webhooks stored but not
	// yet enriched: the restarted gateway must take them up again. The
	// delay is in front of the contract validator: a read whose caller was
	// killed during it never reaches the sandbox, instead of being answered
	// with nothing.
	slow := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/payments/v3/events/") {
				select {
				case <-time.After(20 * time.Millisecond):
				case <-r.Context().Done():
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	up := httptest.NewServer(slow(validated(t, sb)))
	t.Cleanup(func() { up.Close(); sb.Close() })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := &gatewayProcess{t: t, logs: t.TempDir(), args: []string{
		"-addr", addr, "-data-dir", t.TempDir(),
		"-payments-url", up.URL + "/payments", "-banking-url", up.URL + "/banking", "-payments-corporations", demoCorpID,
		"-payments-private-key", paymentsim.PrivateKey, "-payments-public-key", paymentsim.PublicKey,
		"-payments-access-token", paymentsim.AccessToken,
		"-register-webhook", "false", "-reconcile-interval", reconcile,
		"-log-format", "json", "-log-level", "info",
	}}
	t.Cleanup(func() {
		if p.cmd != nil {
			p.kill()
		}
		if t.Failed() {
			for i := 1; i <= p.started; i++ {
				b, _ := os.ReadFile(filepath.Join(p.logs, fmt.Sprintf("gateway-%d.log", i)))
				t.Logf("gateway run %d logged:\n%s", i, tail(b, 4000))
			}
		}
	})
	g := &testGateway{URL: "http://" + addr, SandboxURL: up.URL, Logs: &syncBuffer{}, http: &http.Client{Timeout: 20 * time.Second}}
	ready := func() {
		t.Helper()
		pollUntil(t, "the gateway to be ready", 60*time.Second, func() bool {
			select {
			case <-p.exited:
				t.Fatalf("the gateway process exited")
			default:
			}
			resp, err := http.Get(g.URL + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
	}
	p.start()
	ready()

	registerWebhook(t, up.URL, g.URL)
	g = g.as(g.signInAPI(t))

	c := newTally()
	cursor := g.cursorNow(t)
	var fired []string
	const restarts, burst = 3, 50
	for round := 0; ; round++ {
		reading := following(g.dialWS(t, nil, nil), cursor, c)
		if round == restarts {
			fired = append(fired, g.fire(t, burst)...)
			lost, dup := settleAndCount(t, g, c, fired, 120*time.Second, reading)
			resent := 0
			for _, d := range g.deliveries(t) {
				if d.Attempt > 1 {
					resent++
				}
			}
			t.Logf("%d gateway processes, %d killed with SIGKILL during bursts, %d events, %d webhook deliveries resent: %d lost, %d duplicated",
				p.started, restarts, len(fired), resent, lost, dup)
			if lost != 0 || dup != 0 {
				t.Fatalf("across %d kill -9 restarts: %d of %d events lost, %d duplicated", restarts, lost, len(fired), dup)
			}
			return
		}
		// Half the burst reaches the running gateway, which delivers it
		// (so the resumed subscription works); it is killed while the
		// other half is fired, and restarted.
		ids := g.fire(t, burst/2)
		pollUntil(t, "the resumed subscription to deliver", 60*time.Second, func() bool {
			select {
			case err := <-reading:
				t.Fatalf("round %d: the subscription stopped: %v", round, err)
			default:
			}
			return c.has(ids[0])
		})
		var wg sync.WaitGroup
		var fireErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range burst - burst/2 {
				id, err := triggerOrder(up.URL)
				if err != nil {
					fireErr = err
					return
				}
				ids = append(ids, id)
			}
		}()
		p.kill()
		<-reading // the connection died with the gateway
		p.start()
		wg.Wait()
		if fireErr != nil {
			t.Fatalf("firing events upstream: %v", fireErr)
		}
		fired = append(fired, ids...)
		ready()
		if last := c.last(); last != "" {
			cursor = last
		}
	}
}

// triggerOrder fires one OrderCreated event at the sandbox and returns its
// id.
func triggerOrder(sandboxURL string) (string, error) {
	resp, err := http.Post(sandboxURL+"/_sandbox/trigger", "application/json", bytes.NewReader([]byte(`{"name":"OrderCreated"}`)))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var ev sandboxEvent
	if err := json.NewDecoder(resp.Body).Decode(&ev); err != nil || resp.StatusCode != http.StatusOK || ev.ID == "" {
		return "", fmt.Errorf("trigger: %d %v", resp.StatusCode, err)
	}
	return ev.ID, nil
}

// tail is the end of b, at most n bytes.
func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
