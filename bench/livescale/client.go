package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/fingraph/fingraph/bench/internal/benchkit"
)

var client = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// post sends a JSON body (with a bearer when token is set) and decodes a
// 2xx answer into out.
func post(u, token string, body, out any) error { return postWith(client, u, token, body, out) }

func postWith(client *http.Client, u, token string, body, out any) error {
	return benchkit.PostJSON(client, u, token, body, out)
}

// bulk is the sandbox's answer to POST /_sandbox/banking/bulk.
type bulk struct {
	Password     string `json:"password"`
	Corporations []struct {
		ID       string `json:"id"`
		WalletID string `json:"wallet_id"`
		Persons  []struct {
			ID    string `json:"id"`
			Email string `json:"email"`
		} `json:"persons"`
	} `json:"corporations"`
}

func seed(sandbox string, corps, persons int) (*bulk, error) {
	var b bulk
	err := post(sandbox+"/_sandbox/banking/bulk", "", map[string]any{"corporations": corps, "persons": persons}, &b)
	return &b, err
}

// person is one bulk person with its gateway session.
type person struct {
	corp, wallet, email, token string
}

// signInAll signs every bulk person in through the gateway's ordinary
// signIn mutation (PERSON: e-mail, password, device fingerprint) and
// returns them in the seed's order. Each of parallel workers signs in one
// person at a time from a loopback address of its own (127.0.1.w), as
// persons come from many addresses.
func signInAll(gateway string, b *bulk, parallel int) ([]*person, error) {
	var all []*person
	for _, c := range b.Corporations {
		for _, p := range c.Persons {
			all = append(all, &person{corp: c.ID, wallet: c.WalletID, email: p.Email})
		}
	}
	parallel = min(parallel, 250)
	next := make(chan int)
	errs := make(chan error, parallel)
	for w := range parallel {
		local := &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(w+1))}
		c := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
			DialContext: (&net.Dialer{LocalAddr: local}).DialContext, MaxIdleConnsPerHost: 1}}
		go func() {
			var first error
			for i := range next {
				if first != nil {
					continue
				}
				all[i].token, first = signIn(c, gateway, all[i].email, b.Password)
			}
			errs <- first
		}()
	}
	for i := range all {
		next <- i
	}
	close(next)
	var err error
	for range parallel {
		err = cmp.Or(err, <-errs)
	}
	return all, err
}

// gqlError is one GraphQL error of an answer.
type gqlError struct {
	Message    string `json:"message"`
	Extensions struct {
		Code       string  `json:"code"`
		RetryAfter float64 `json:"retryAfter"`
	} `json:"extensions"`
}

// signIn signs one person in; it waits and tries again as long as the
// gateway answers RATE_LIMITED.
func signIn(c *http.Client, gateway, email, password string) (string, error) {
	for {
		var out struct {
			Data struct {
				SignIn struct {
					SessionToken string `json:"sessionToken"`
				} `json:"signIn"`
			} `json:"data"`
			Errors []gqlError `json:"errors"`
		}
		err := postWith(c, gateway+"/graphql", "", map[string]any{
			"query": `mutation($in: SignInInput!) { signIn(input: $in) { ... on SignedIn { sessionToken } } }`,
			"variables": map[string]any{"in": map[string]any{"kind": "PERSON", "email": email, "password": password,
				"deviceFingerprint": 42}},
		}, &out)
		switch {
		case err != nil:
			return "", err
		case out.Data.SignIn.SessionToken != "":
			return out.Data.SignIn.SessionToken, nil
		case len(out.Errors) > 0 && out.Errors[0].Extensions.Code == "RATE_LIMITED":
			time.Sleep(time.Duration(max(out.Errors[0].Extensions.RetryAfter, 1) * float64(time.Second)))
		case len(out.Errors) > 0:
			return "", fmt.Errorf("sign-in of %s: %s (%s)", email, out.Errors[0].Message, out.Errors[0].Extensions.Code)
		default:
			return "", fmt.Errorf("sign-in of %s: no session and no error", email)
		}
	}
}

// forEach runs f(0..n-1), parallel at a time, and returns the first error.
func forEach(n, parallel int, f func(int) error) error {
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	var first atomic.Value
	var failed atomic.Int64
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := f(i); err != nil {
				failed.Add(1)
				first.CompareAndSwap(nil, err)
			}
		}()
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return fmt.Errorf("%d of %d failed, first: %w", failed.Load(), n, err)
	}
	return nil
}

// arrival is one event as a subscriber received it.
type arrival struct {
	at                    time.Time
	created               time.Time // the event's createdAt: when it was announced
	id, name, corporation string
	cursor                string
}

// sub is one person's live feed: a graphql-transport-ws socket with one
// events subscription. On a closed socket it subscribes again, on the
// next of its gateways, after its last cursor (a dashboard's resumption),
// until its context ends.
type sub struct {
	p        *person
	gateways []string // ws URLs, tried in turn
	query    string

	mu       sync.Mutex
	events   []arrival
	after    string
	resumes  int
	ready    chan struct{} // closed when the first subscription is acknowledged by a first read
	readyErr error
	refused  string // the server's error, which ends the feed
}

func newSub(p *person, gateways []string, query string) *sub {
	return &sub{p: p, gateways: gateways, query: query, ready: make(chan struct{})}
}

// received returns a copy of the events so far.
func (s *sub) received() []arrival {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// open dials and subscribes on gateway g; it returns once the server
// acknowledged the connection and took the subscribe message.
func (s *sub) open(ctx context.Context, g string) (*websocket.Conn, error) {
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 30 * time.Second}
	c, res, err := d.DialContext(ctx, g, nil)
	if res != nil && res.Body != nil {
		res.Body.Close()
	}
	if err != nil {
		return nil, err
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if err := c.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]string{"sessionToken": s.p.token}}); err != nil {
		c.Close()
		return nil, err
	}
	var ack struct{ Type string }
	if err := c.ReadJSON(&ack); err != nil || ack.Type != "connection_ack" {
		c.Close()
		return nil, fmt.Errorf("connection_init: %v %q", err, ack.Type)
	}
	_ = c.SetReadDeadline(time.Time{})
	s.mu.Lock()
	vars := map[string]any{}
	if s.after != "" {
		vars["after"] = s.after
	}
	s.mu.Unlock()
	if err := c.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": s.query, "variables": vars}}); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// run holds the subscription until ctx ends. The first open's outcome is
// reported through ready.
func (s *sub) run(ctx context.Context) {
	first := true
	for g := 0; ctx.Err() == nil; g = (g + 1) % len(s.gateways) {
		c, err := s.open(ctx, s.gateways[g])
		if first {
			s.readyErr = err
			close(s.ready)
			first = false
			if err != nil {
				return
			}
		}
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		stop := context.AfterFunc(ctx, func() { c.Close() })
		refused := s.read(c)
		stop()
		c.Close()
		if refused {
			return
		}
		if ctx.Err() == nil {
			s.mu.Lock()
			s.resumes++
			s.mu.Unlock()
		}
	}
}

// read records every event until the socket ends; refused is true when
// the server ended the subscription with an error.
func (s *sub) read(c *websocket.Conn) (refused bool) {
	refuse := func(raw []byte) bool {
		s.mu.Lock()
		s.refused = string(raw)
		s.mu.Unlock()
		return true
	}
	for {
		_, raw, err := c.ReadMessage()
		if err != nil {
			return false
		}
		at := time.Now()
		var m struct {
			Type    string `json:"type"`
			Payload struct {
				Data struct {
					Events *struct {
						Cursor string `json:"cursor"`
						Event  struct {
							ID        string         `json:"id"`
							Name      string         `json:"name"`
							CreatedAt time.Time      `json:"createdAt"`
							Payload   map[string]any `json:"payload"`
						} `json:"event"`
					} `json:"events"`
				} `json:"data"`
			} `json:"payload"`
		}
		if json.Unmarshal(raw, &m) != nil {
			return refuse(raw)
		}
		switch m.Type {
		case "ping":
			_ = c.WriteJSON(map[string]string{"type": "pong"})
		case "next":
			ev := m.Payload.Data.Events
			if ev == nil {
				return refuse(raw)
			}
			corp, _ := ev.Event.Payload["corporation_id"].(string)
			s.mu.Lock()
			s.events = append(s.events, arrival{at: at, created: ev.Event.CreatedAt, id: ev.Event.ID, name: ev.Event.Name, corporation: corp, cursor: ev.Cursor})
			s.after = ev.Cursor
			s.mu.Unlock()
		case "error", "complete":
			return refuse(raw)
		}
	}
}

// subscribeAll opens one subscription per person, parallel at a time, on
// the first of gateways (the others are where it resumes when its socket
// closes), and waits until each socket is open and subscribed.
func subscribeAll(ctx context.Context, persons []*person, gateways []string, query string, parallel int) ([]*sub, error) {
	subs := make([]*sub, len(persons))
	err := forEach(len(persons), parallel, func(i int) error {
		s := newSub(persons[i], gateways, query)
		subs[i] = s
		go s.run(ctx)
		<-s.ready
		return s.readyErr
	})
	if err != nil {
		return subs, err
	}
	// A refusal comes after the subscribe message; give it a moment.
	time.Sleep(time.Second)
	refused := 0
	var first string
	for _, s := range subs {
		s.mu.Lock()
		if s.refused != "" {
			refused++
			first = cmp.Or(first, s.refused)
		}
		s.mu.Unlock()
	}
	if refused > 0 {
		return subs, fmt.Errorf("%d of %d subscriptions refused, first: %s", refused, len(subs), first)
	}
	return subs, nil
}

func wsURL(u string) string { return strings.Replace(u, "http", "ws", 1) + "/graphql" }

// metrics are the gateway's Go runtime figures from its /metrics.
// metrics are the gateway's figures from /metrics. heapAlloc is the
// live heap (after a collection, what is reachable), stacks the
// goroutines' stacks (outside the heap figures), heapInuse the heap's
// spans in use: a span stays in use while any object in it lives, so after
// a collection it also counts the free slots among the survivors, which
// the runtime fills with later allocations of their size.
type metrics struct{ goroutines, heapAlloc, heapInuse, stacks, rss, polls float64 }

func (m metrics) String() string {
	return fmt.Sprintf("goroutines %.0f, live heap %.1f MB, stacks %.1f MB, heap in use %.1f MB, resident %.1f MB",
		m.goroutines, m.heapAlloc/1e6, m.stacks/1e6, m.heapInuse/1e6, m.rss/1e6)
}

// readMetrics reads /metrics; with pprof set it first has the gateway
// collect garbage (GET /debug/pprof/heap?gc=1), so that the heap figure
// is what is live rather than what the collector has not reached yet. It
// collects twice: what sync.Pools hold survives one collection (in their
// victim caches) and is a pool's, not a subscription's; the second
// collection also shrinks goroutine stacks grown deep once and idle since.
func readMetrics(gateway, pprof, profile string) (metrics, error) {
	for i := 0; pprof != "" && i < 2; i++ {
		res, err := client.Get(pprof + "/debug/pprof/heap?gc=1")
		if err != nil {
			return metrics{}, err
		}
		data, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if profile != "" && i == 1 {
			if err := os.WriteFile(profile, data, 0o644); err != nil {
				return metrics{}, err
			}
		}
	}
	v, err := benchkit.Metrics(client, gateway)
	if err != nil {
		return metrics{}, err
	}
	m := metrics{goroutines: v["go_goroutines"], heapAlloc: v["go_memstats_heap_alloc_bytes"], heapInuse: v["go_memstats_heap_inuse_bytes"],
		stacks: v["go_memstats_stack_inuse_bytes"], rss: v["process_resident_memory_bytes"], polls: v["fingraph_live_polls_total"]}
	if m.heapInuse == 0 {
		return m, errors.New("/metrics: no go_memstats_heap_inuse_bytes")
	}
	return m, nil
}

// stats reads the sandbox's upstream call counters.
func stats(sandbox string) (map[string]int, error) {
	res, err := client.Get(sandbox + "/_sandbox/stats")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var out struct {
		Routes map[string]int `json:"routes"`
	}
	return out.Routes, json.NewDecoder(res.Body).Decode(&out)
}

// credit posts an incoming transfer to a wallet through the sandbox's
// control API: a change made outside the gateway.
func credit(sandbox, wallet string, cents int64, desc string) error {
	return post(sandbox+"/_sandbox/banking/wallets/"+wallet+"/credit", "", map[string]any{"amount": cents, "description": desc}, nil)
}

// percentile of sorted durations.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(p*float64(len(d))))]
}
