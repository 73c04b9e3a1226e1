// Command idlesubs holds many idle, authenticated websocket subscriptions
// against a running gateway, then reads the gateway's goroutines and memory
// from its /metrics, and measures how long one event takes to reach every
// subscriber. It is a measuring tool, run by hand (docs/performance-events.md, "Live events").
// It opens every socket on one session, so the gateway's socket caps (20
// per session by default) must be raised for a large -n:
//
//	go build -o /tmp/fingraph . && FINGRAPH_PPROF_ADDR=127.0.0.1:18473 \
//	  FINGRAPH_LIMITS=socketsPerAddress=20000,socketsPerSession=20000 \
//	  /tmp/fingraph -addr 127.0.0.1:18471 -sandbox-addr 127.0.0.1:18472 -data-dir /tmp/fg-data \
//	  -log-level warn -register-webhook true &
//	go run ./bench/idlesubs -url http://127.0.0.1:18471 -sandbox http://127.0.0.1:18472 \
//	  -pprof http://127.0.0.1:18473 -n 10000
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/fingraph/fingraph/bench/internal/benchkit"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:18080", "the gateway")
	sandbox := flag.String("sandbox", "", "the gateway's in-process sandbox (for /_sandbox/trigger); read from the gateway's log line, or empty to skip the event")
	n := flag.Int("n", 10000, "subscriptions to hold, one per websocket")
	parallel := flag.Int("parallel", 50, "sockets opened at once")
	hold := flag.Duration("hold", 0, "keep the subscriptions open this long after measuring (to profile the gateway meanwhile)")
	pprof := flag.String("pprof", "", "the gateway's FINGRAPH_PPROF_ADDR as a URL; when set, the gateway collects its garbage twice before each reading, and the live heap and stacks per subscription are printed too")
	flag.Parse()
	if err := run(*url, *sandbox, *pprof, *n, *parallel, *hold); err != nil {
		fmt.Fprintln(os.Stderr, "idlesubs:", err)
		os.Exit(1)
	}
}

// metrics are the gateway's figures from /metrics: heapAlloc the live heap
// (after a collection, what is reachable), stacks the goroutines' stacks
// (outside the heap figures), heapInuse the heap's spans in use.
type metrics struct{ goroutines, heapAlloc, heapInuse, stacks, rss float64 }

func (m metrics) String() string {
	return fmt.Sprintf("goroutines %.0f, live heap %.1f MB, stacks %.1f MB, heap in use %.1f MB, resident %.1f MB",
		m.goroutines, m.heapAlloc/1e6, m.stacks/1e6, m.heapInuse/1e6, m.rss/1e6)
}

func run(url, sandbox, pprof string, n, parallel int, hold time.Duration) error {
	token, err := signIn(url)
	if err != nil {
		return err
	}
	base, err := readMetrics(url, pprof)
	if err != nil {
		return err
	}
	fmt.Println("before:", base)

	wsURL := strings.Replace(url, "http", "ws", 1) + "/graphql"
	conns := make([]*websocket.Conn, n)
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr atomic.Value
	start := time.Now()
	for i := range conns {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			c, err := subscribe(wsURL, token, fmt.Sprint(i))
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
				return
			}
			conns[i] = c
		}()
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		return fmt.Errorf("%d of %d subscriptions failed, first: %v", f, n, firstErr.Load())
	}
	fmt.Printf("opened %d subscriptions in %s\n", n, time.Since(start).Round(time.Millisecond))
	time.Sleep(2 * time.Second) // let the server's side finish setting up
	held, err := readMetrics(url, pprof)
	if err != nil {
		return err
	}
	fmt.Println("holding:", held)
	per := func(a, b float64) float64 { return (a - b) / float64(n) / 1e3 }
	fmt.Printf("per subscription: %.2f goroutines, %.1f KB heap, %.1f KB resident\n",
		(held.goroutines-base.goroutines)/float64(n), per(held.heapInuse, base.heapInuse), per(held.rss, base.rss))
	if pprof != "" {
		fmt.Printf("per subscription after two collections: %.1f KB held (live heap %.1f KB + stacks %.1f KB)\n",
			per(held.heapAlloc+held.stacks, base.heapAlloc+base.stacks), per(held.heapAlloc, base.heapAlloc), per(held.stacks, base.stacks))
	}

	time.Sleep(hold)
	if sandbox != "" {
		if err := oneEvent(sandbox, conns); err != nil {
			return err
		}
	}
	for _, c := range conns {
		c.Close()
	}
	return nil
}

// oneEvent triggers one upstream event and times its arrival on every socket.
func oneEvent(sandbox string, conns []*websocket.Conn) error {
	arrived := make([]time.Duration, len(conns))
	var wg sync.WaitGroup
	t0 := time.Now()
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
			for {
				var m struct{ Type string }
				if err := c.ReadJSON(&m); err != nil {
					arrived[i] = -1
					return
				}
				if m.Type == "ping" {
					continue
				}
				arrived[i] = time.Since(t0)
				return
			}
		}()
	}
	resp, err := http.Post(sandbox+"/_sandbox/trigger", "application/json", strings.NewReader(`{"name":"IndividualActivated"}`))
	if err != nil {
		return err
	}
	resp.Body.Close()
	wg.Wait()
	sort.Slice(arrived, func(i, j int) bool { return arrived[i] < arrived[j] })
	if arrived[0] < 0 {
		return errors.New("some subscribers got no event")
	}
	fmt.Printf("one event reached: first %s, median %s, last %s after the trigger\n",
		arrived[0].Round(time.Microsecond), arrived[len(arrived)/2].Round(time.Microsecond), arrived[len(arrived)-1].Round(time.Microsecond))
	return nil
}

func signIn(url string) (string, error) {
	body, _ := json.Marshal(map[string]any{
		"query":     `mutation($input: SignInInput!) { signIn(input: $input) { __typename ... on SignedIn { sessionToken } } }`,
		"variables": map[string]any{"input": map[string]any{"kind": "API_KEY", "apiKey": "demo-api-key"}},
	})
	resp, err := http.Post(url+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			SignIn struct{ SessionToken string } `json:"signIn"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Data.SignIn.SessionToken == "" {
		return "", fmt.Errorf("sign-in: %v (status %d)", err, resp.StatusCode)
	}
	return out.Data.SignIn.SessionToken, nil
}

// subscribe opens one websocket with one events subscription on it.
func subscribe(wsURL, token, id string) (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	c, resp, err := d.DialContext(ctx, wsURL, nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return nil, err
	}
	init, _ := json.Marshal(map[string]any{"sessionToken": token})
	if err := c.WriteJSON(map[string]any{"type": "connection_init", "payload": json.RawMessage(init)}); err != nil {
		return nil, err
	}
	var ack struct{ Type string }
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if err := c.ReadJSON(&ack); err != nil || ack.Type != "connection_ack" {
		c.Close()
		return nil, fmt.Errorf("connection_init: %v %q", err, ack.Type)
	}
	payload, _ := json.Marshal(map[string]any{"query": `subscription { events(names: ["IndividualActivated"]) { cursor event { id name } } }`})
	if err := c.WriteJSON(map[string]any{"id": id, "type": "subscribe", "payload": json.RawMessage(payload)}); err != nil {
		return nil, err
	}
	return c, nil
}

// readMetrics reads the gateway's Go runtime figures from /metrics; with
// pprof set it first has the gateway collect garbage twice (GET
// /debug/pprof/heap?gc=1): what sync.Pools hold survives one collection,
// and the second also shrinks goroutine stacks grown deep once and idle
// since.
func readMetrics(url, pprof string) (metrics, error) {
	for i := 0; pprof != "" && i < 2; i++ {
		res, err := http.Get(pprof + "/debug/pprof/heap?gc=1")
		if err != nil {
			return metrics{}, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	v, err := benchkit.Metrics(http.DefaultClient, url)
	return metrics{goroutines: v["go_goroutines"], heapAlloc: v["go_memstats_heap_alloc_bytes"], heapInuse: v["go_memstats_heap_inuse_bytes"],
		stacks: v["go_memstats_stack_inuse_bytes"], rss: v["process_resident_memory_bytes"]}, err
}
