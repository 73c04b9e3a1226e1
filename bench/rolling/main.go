// Command rolling records a rolling restart: two gateway replicas on one
// JetStream behind a small load balancer (bench/lb), under steady load
// (README queries, live subscribers on websockets, a stream of sandbox
// events), and each replica stopped with SIGTERM and started again in turn.
// It reports failed requests, websocket closes by code (1012 is the
// gateway's "restart": each client subscribes again with after: its last
// cursor), events lost or repeated per subscriber, and the latency tail in
// the restart windows against the steady one. It is a recorded run, not a
// test: figures depend on the machine (docs/performance-events.md, "Rolling
// restart").
//
//	go run ./bench/rolling -d 5s -c 8 -subs 20
//
// Everything runs on loopback: a NATS server in this process, the sandbox,
// the two gateways and the balancer as processes built from this tree.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/fingraph/fingraph/bench/internal/benchkit"
)

func main() {
	steady := flag.Duration("d", 5*time.Second, "steady load before, between and after the restarts")
	clients := flag.Int("c", 8, "clients sending the README query in a loop")
	subs := flag.Int("subs", 20, "live subscribers (graphql-transport-ws, resuming after their last cursor)")
	drain := flag.Duration("drain", 2*time.Second, "FINGRAPH_SHUTDOWN_DRAIN of the replicas (the balancer checks every 250ms)")
	flag.Parse()
	if err := run(*steady, *clients, *subs, *drain); err != nil {
		fmt.Fprintln(os.Stderr, "rolling:", err)
		os.Exit(1)
	}
}

// sample is one request's outcome.
type sample struct {
	at      time.Time
	latency time.Duration
	failed  bool
}

func run(steady time.Duration, clients, nsubs int, drain time.Duration) error {
	dir, err := os.MkdirTemp("", "fingraph-rolling-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Println("building the gateway and the balancer …")
	bin, lbBin := filepath.Join(dir, "fingraph"), filepath.Join(dir, "lb")
	for _, b := range [][2]string{{bin, "."}, {lbBin, "./bench/lb"}} {
		if out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", b[1], err, out)
		}
	}

	ns, err := benchkit.StartNATS(dir)
	if err != nil {
		return err
	}
	defer ns.Shutdown()
	sb, sandboxURL, err := benchkit.StartSandbox(bin, dir)
	if err != nil {
		return err
	}
	defer sb.Stop(syscall.SIGTERM)
	shared := []string{
		"FINGRAPH_NATS_URL=" + ns.ClientURL(),
		"FINGRAPH_PAYMENTS_URL=" + sandboxURL + "/payments", "FINGRAPH_BANKING_URL=" + sandboxURL + "/banking",
		"FINGRAPH_PAYMENTS_PUBLIC_KEY=pk_sandbox_demo", "FINGRAPH_PAYMENTS_PRIVATE_KEY=sk_sandbox_demo",
		"FINGRAPH_PAYMENTS_ACCESS_TOKEN=at_sandbox_demo", "FINGRAPH_DOWNLOAD_KEY=rolling-restart-run",
		"FINGRAPH_SHUTDOWN_DRAIN=" + drain.String(), "FINGRAPH_LOG_LEVEL=warn", "FINGRAPH_TRUSTED_PROXIES=127.0.0.1",
		"FINGRAPH_RECONCILE_INTERVAL=1s", "FINGRAPH_PUBLIC_RATE_LIMIT=100000",
		"FINGRAPH_LIMITS=socketsPerAddress=10000,socketsPerSession=10000",
	}
	replicas, urls, err := benchkit.StartReplicas(bin, dir, 2, shared)
	if err != nil {
		return err
	}
	for _, p := range replicas {
		defer p.Stop(syscall.SIGTERM)
	}
	lbAddr, err := benchkit.FreePort()
	if err != nil {
		return err
	}
	lb := &benchkit.Proc{Name: "lb", Args: []string{lbBin, "-listen", lbAddr, "-backends", strings.Join(urls, ",")}}
	if err := lb.Start(dir); err != nil {
		return err
	}
	defer lb.Stop(syscall.SIGTERM)
	base := "http://" + lbAddr
	if err := benchkit.WaitOK(base + "/readyz"); err != nil {
		return err
	}
	// The upstream's webhook points at the balancer: any replica takes it.
	if err := post(sandboxURL+"/payments/v1/webhooks", "at_sandbox_demo", map[string]string{"url": base + "/webhooks/payments"}, nil); err != nil {
		return fmt.Errorf("registering the webhook: %w", err)
	}
	var signIn struct {
		Data struct {
			SignIn struct {
				SessionToken string `json:"sessionToken"`
			} `json:"signIn"`
		} `json:"data"`
	}
	if err := post(base+"/graphql", "", map[string]any{"query": `mutation { signIn(input: {kind: API_KEY, apiKey: "demo-api-key"}) { ... on SignedIn { sessionToken } } }`}, &signIn); err != nil {
		return err
	}
	token := signIn.Data.SignIn.SessionToken
	var cursor struct {
		Data struct {
			EventsCursor string `json:"eventsCursor"`
		} `json:"data"`
	}
	if err := post(base+"/graphql", token, map[string]any{"query": `{ eventsCursor }`}, &cursor); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var samples []sample
	var load sync.WaitGroup
	query := map[string]any{"query": `{ customers { id number contact { name email } orders { id status amount { amount currency } } } }`}
	for range clients {
		load.Add(1)
		go func() {
			defer load.Done()
			for ctx.Err() == nil {
				t0 := time.Now()
				var out struct {
					Errors []json.RawMessage `json:"errors"`
				}
				err := post(base+"/graphql", token, query, &out)
				s := sample{at: t0, latency: time.Since(t0), failed: err != nil || len(out.Errors) > 0}
				mu.Lock()
				samples = append(samples, s)
				mu.Unlock()
			}
		}()
	}
	subscribers := make([]*subscriber, nsubs)
	for i := range subscribers {
		subscribers[i] = &subscriber{base: base, token: token, after: cursor.Data.EventsCursor, seen: map[string]int{}, closes: map[int]int{}}
		go subscribers[i].run(ctx)
	}
	var fired []string
	var firing sync.WaitGroup
	fireCtx, stopFiring := context.WithCancel(ctx)
	defer stopFiring()
	firing.Add(1)
	go func() {
		defer firing.Done()
		for fireCtx.Err() == nil {
			var ev struct {
				ID string `json:"id"`
			}
			if post(sandboxURL+"/_sandbox/trigger", "", map[string]string{"name": "OrderCreated"}, &ev) == nil && ev.ID != "" {
				mu.Lock()
				fired = append(fired, ev.ID)
				mu.Unlock()
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()

	var windows [][2]time.Time
	fmt.Printf("steady load for %v …\n", steady)
	time.Sleep(steady)
	for i, p := range replicas {
		t0 := time.Now()
		fmt.Printf("restarting %s (SIGTERM, drain %v) …\n", p.Name, drain)
		p.Stop(syscall.SIGTERM)
		if err := p.Start(dir); err != nil {
			return err
		}
		if err := benchkit.WaitOK(urls[i] + "/readyz"); err != nil {
			return err
		}
		// The balancer sees it ready at its next check.
		time.Sleep(500 * time.Millisecond)
		windows = append(windows, [2]time.Time{t0, time.Now()})
		fmt.Printf("%s back after %v\n", p.Name, time.Since(t0).Round(time.Millisecond))
		time.Sleep(steady)
	}
	stopFiring()
	firing.Wait()
	// Let the subscribers catch up with the last events.
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && !allSeen(subscribers, fired, &mu) {
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	load.Wait()

	report(samples, windows, subscribers, fired, &mu)
	return nil
}

func allSeen(subs []*subscriber, fired []string, mu *sync.Mutex) bool {
	mu.Lock()
	ids := slices.Clone(fired)
	mu.Unlock()
	for _, s := range subs {
		s.mu.Lock()
		for _, id := range ids {
			if s.seen[id] == 0 {
				s.mu.Unlock()
				return false
			}
		}
		s.mu.Unlock()
	}
	return true
}

func report(samples []sample, windows [][2]time.Time, subs []*subscriber, fired []string, mu *sync.Mutex) {
	mu.Lock()
	defer mu.Unlock()
	var all, restart []time.Duration
	failed, failedRestart := 0, 0
	for _, s := range samples {
		in := false
		for _, w := range windows {
			if !s.at.Before(w[0]) && s.at.Before(w[1]) {
				in = true
			}
		}
		all = append(all, s.latency)
		if s.failed {
			failed++
		}
		if in {
			restart = append(restart, s.latency)
			if s.failed {
				failedRestart++
			}
		}
	}
	fmt.Printf("\nrequests: %d, failed %d (%d of %d in the restart windows)\n", len(samples), failed, failedRestart, len(restart))
	fmt.Printf("latency, whole run:       %s\n", percentiles(all))
	fmt.Printf("latency, restart windows: %s\n", percentiles(restart))
	closes := map[int]int{}
	lost, dup, resumes := 0, 0, 0
	for _, s := range subs {
		s.mu.Lock()
		for code, n := range s.closes {
			closes[code] += n
		}
		resumes += s.resumes
		for _, id := range fired {
			switch n := s.seen[id]; {
			case n == 0:
				lost++
			case n > 1:
				dup += n - 1
			}
		}
		s.mu.Unlock()
	}
	fmt.Printf("subscribers: %d, events fired %d; lost %d, repeated %d (over all subscribers)\n", len(subs), len(fired), lost, dup)
	fmt.Printf("websocket closes by code: %v; subscriptions resumed with after: %d\n", closes, resumes)
}

func percentiles(d []time.Duration) string {
	if len(d) == 0 {
		return "no requests"
	}
	slices.Sort(d)
	at := func(p float64) time.Duration {
		return d[min(len(d)-1, int(p*float64(len(d))))].Round(10 * time.Microsecond)
	}
	return fmt.Sprintf("p50 %v, p99 %v, p99.9 %v, max %v (n=%d)", at(0.5), at(0.99), at(0.999), d[len(d)-1].Round(10*time.Microsecond), len(d))
}

var client = &http.Client{Timeout: 10 * time.Second}

// post sends a JSON body (with a bearer when token is set) and decodes a
// 2xx answer into out.
func post(u, token string, body, out any) error {
	return benchkit.PostJSON(client, u, token, body, out)
}

// subscriber is a dashboard's live feed through the balancer: on a closed
// socket it subscribes again after its last cursor.
type subscriber struct {
	base, token string
	mu          sync.Mutex
	after       string
	seen        map[string]int
	closes      map[int]int
	resumes     int
}

func (s *subscriber) run(ctx context.Context) {
	for ctx.Err() == nil {
		code := s.once(ctx)
		if ctx.Err() != nil {
			return // the run's end, not the gateway's
		}
		s.mu.Lock()
		s.closes[code]++
		s.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
		s.mu.Lock()
		s.resumes++
		s.mu.Unlock()
	}
}

// once holds one socket until it ends and returns its close code (0 when
// it ended without a close frame, -1 when it could not connect).
func (s *subscriber) once(ctx context.Context) int {
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 5 * time.Second}
	conn, res, err := d.DialContext(ctx, strings.Replace(s.base, "http://", "ws://", 1)+"/graphql", nil)
	if res != nil && res.Body != nil {
		res.Body.Close()
	}
	if err != nil {
		return -1
	}
	defer conn.Close()
	go func() { <-ctx.Done(); conn.Close() }()
	_ = conn.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]string{"sessionToken": s.token}})
	s.mu.Lock()
	after := s.after
	s.mu.Unlock()
	_ = conn.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
		"query":     `subscription($after: String) { events(names: ["OrderCreated"], after: $after) { cursor event { upstreamId } } }`,
		"variables": map[string]any{"after": after},
	}})
	for {
		var m struct {
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := conn.ReadJSON(&m); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code
			}
			return 0
		}
		switch m.Type {
		case "ping":
			_ = conn.WriteJSON(map[string]string{"type": "pong"})
		case "next":
			var p struct {
				Data struct {
					Events *struct {
						Cursor string `json:"cursor"`
						Event  struct {
							UpstreamID string `json:"upstreamId"`
						} `json:"event"`
					} `json:"events"`
				} `json:"data"`
			}
			if json.Unmarshal(m.Payload, &p) != nil || p.Data.Events == nil {
				return 0
			}
			s.mu.Lock()
			s.seen[p.Data.Events.Event.UpstreamID]++
			s.after = p.Data.Events.Cursor
			s.mu.Unlock()
		case "error", "complete":
			return 0
		}
	}
}
