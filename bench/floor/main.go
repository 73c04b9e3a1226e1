// Command floor measures the gateway's latency for the corporation dashboard
// against the floor set by the upstream calls themselves. It is a measuring
// tool, run by hand against a separately running gateway in sandbox mode
// (docs/performance.md, "The corporation dashboard against the floor"):
//
//	go build -o /tmp/fingraph . && /tmp/fingraph -addr 127.0.0.1:18481 \
//	  -sandbox-addr 127.0.0.1:18482 -data-dir /tmp/fg-floor -log-level warn &
//	go run ./bench/floor -url http://127.0.0.1:18481 -sandbox http://127.0.0.1:18482
//
// It sets a fixed latency on every upstream route of the sandbox (POST
// /_sandbox/faults {"route":"*","latency_ms":N}), then runs two phases with
// the same number of concurrent clients for the same duration:
//
//   - gateway: each client signs in to the gateway as the demo person and
//     runs the dashboard query (bench/floor/dashboard.graphql) in a loop;
//   - rest: each client signs in to the banking upstream directly as the
//     same person, learns its corporation's id once (GET /persons/me, as a
//     frontend does at sign-in), and fetches the same screen as an optimal
//     REST frontend would: all 5 calls at once (the corporation, its
//     settings, its wallets, which carry their requisites, the person
//     listing and the card listing; cardholders are joined in memory).
//
// The rest phase is the floor: its latency is the critical path of upstream
// calls (1 level x the injected latency) plus what a minimal client costs.
// Both phases report p50/p95/p99 and throughput, and the upstream calls
// each screen cost (from the sandbox's /_sandbox/stats); the overhead ratio
// is the REST client's throughput over the gateway's. The latency fault is
// cleared at the end.
//
// On shared cores a phase run a minute after another can differ by more
// than the gateway's overhead, so -rounds N runs the phases in turn N
// times (each client signs in once) and pools each phase's rounds; it also
// prints the gateway's p50 over the floor for each round and their median:
//
//	go run ./bench/floor -c 16 -rounds 8 -d 5s -warmup 1s
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
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	var o options
	flag.StringVar(&o.url, "url", "http://127.0.0.1:18481", "the gateway")
	flag.StringVar(&o.sandbox, "sandbox", "http://127.0.0.1:18482", "the gateway's sandbox (control API and upstreams)")
	flag.StringVar(&o.queryFile, "query", "bench/floor/dashboard.graphql", "the dashboard query")
	flag.StringVar(&o.email, "email", "anna@demo.test", "the demo person (two-factor off)")
	flag.StringVar(&o.password, "password", "demo-password", "the demo person's password")
	flag.IntVar(&o.clients, "c", 16, "concurrent clients")
	flag.DurationVar(&o.duration, "d", 20*time.Second, "how long each phase measures")
	flag.DurationVar(&o.warmup, "warmup", 2*time.Second, "how long each phase runs before measuring")
	flag.IntVar(&o.latencyMS, "latency", 20, "latency injected on every upstream call, in ms")
	flag.StringVar(&o.phases, "phases", "rest,gateway", "phases to run, in order")
	flag.IntVar(&o.rounds, "rounds", 1, "how many times the phases run in turn (each for -d after -warmup); "+
		"figures pool the rounds, and the gateway's p50 over the floor is also given per round")
	flag.Parse()
	if o.rounds < 1 || o.clients < 1 {
		fmt.Fprintln(os.Stderr, "floor: -rounds and -c must be at least 1")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

type options struct {
	url, sandbox, queryFile, email, password, phases string
	clients, latencyMS, rounds                       int
	duration, warmup                                 time.Duration
}

// client is shared by every worker, with enough idle connections per host
// that 16 concurrent clients never open a connection per request (the
// default keeps 2).
var client = &http.Client{
	Timeout:   30 * time.Second,
	Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 128, IdleConnTimeout: time.Minute},
}

func run(o options) error {
	query, err := os.ReadFile(o.queryFile)
	if err != nil {
		return err
	}
	if err := setLatency(o.sandbox, o.latencyMS); err != nil {
		return err
	}
	defer func() { _ = setLatency(o.sandbox, 0) }()
	fmt.Printf("%d clients, %s per phase (after %s warm-up), %d round(s), %d ms on every upstream call\n",
		o.clients, o.duration, o.warmup, o.rounds, o.latencyMS)

	// Every phase's clients sign in once; the rounds reuse their sessions.
	phases := strings.Split(o.phases, ",")
	clients := map[string][]screen{}
	for _, phase := range phases {
		var mk func() (screen, error)
		switch phase {
		case "gateway":
			mk = func() (screen, error) { return newGatewayScreen(o, query) }
		case "rest":
			mk = func() (screen, error) { return newRESTScreen(o) }
		default:
			return fmt.Errorf("unknown phase %q", phase)
		}
		screens := make([]screen, o.clients)
		for i := range screens {
			if screens[i], err = mk(); err != nil {
				return fmt.Errorf("%s: sign-in: %w", phase, err)
			}
		}
		clients[phase] = screens
	}

	// The phases run in turn, round after round, so that both see the
	// same machine: on shared cores a phase run minutes after another can
	// differ by more than what is measured.
	pooled := map[string]*sample{}
	var overP50 []float64 // per round, ms
	for round := 1; round <= o.rounds; round++ {
		this := map[string]*sample{}
		for _, phase := range phases {
			sm, err := measure(o, clients[phase])
			if err != nil {
				return fmt.Errorf("%s: %w", phase, err)
			}
			this[phase] = sm
			if pooled[phase] == nil {
				pooled[phase] = &sample{}
			}
			pooled[phase].add(sm)
		}
		gw, rest := this["gateway"], this["rest"]
		if gw != nil && rest != nil {
			g, r := gw.result("gateway"), rest.result("rest")
			overP50 = append(overP50, over(g.p50, r.p50))
			if o.rounds > 1 {
				fmt.Printf("round %d: floor p50 %s, gateway p50 %s (%+.2f ms), p99 %+.2f ms\n",
					round, ms(r.p50), ms(g.p50), over(g.p50, r.p50), over(g.p99, r.p99))
			}
		}
	}
	for _, phase := range phases {
		fmt.Println(pooled[phase].result(phase))
	}
	if pooled["gateway"] != nil && pooled["rest"] != nil {
		gw, rest := pooled["gateway"].result("gateway"), pooled["rest"].result("rest")
		fmt.Printf("floor (REST p50/p99): %s / %s; gateway over the floor: p50 %+.2f ms, p99 %+.2f ms\n",
			ms(rest.p50), ms(rest.p99), over(gw.p50, rest.p50), over(gw.p99, rest.p99))
		if len(overP50) > 1 {
			slices.Sort(overP50)
			fmt.Printf("gateway p50 over the floor per round: median %+.2f ms (%+.2f to %+.2f)\n",
				median(overP50), overP50[0], overP50[len(overP50)-1])
		}
		fmt.Printf("overhead ratio (REST throughput / gateway throughput): %.3f\n", rest.rps/gw.rps)
	}
	return nil
}

// median is the middle of sorted values, or the mean of the two middle
// ones when there is an even number of them.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// screen fetches the dashboard once.
type screen func(ctx context.Context) error

type result struct {
	name               string
	n                  int
	rps                float64
	p50, p95, p99, max time.Duration
	upstreamPerScreen  float64
}

func (r result) String() string {
	return fmt.Sprintf("%-8s %6d screens, %7.1f/s, p50 %s, p95 %s, p99 %s, max %s, %.2f upstream calls/screen",
		r.name, r.n, r.rps, ms(r.p50), ms(r.p95), ms(r.p99), ms(r.max), r.upstreamPerScreen)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

// over is how far the gateway's figure is above the floor's, in ms.
func over(gateway, floor time.Duration) float64 { return float64(gateway-floor) / 1e6 }

// sample is what one or more runs of a phase measured (a run with a
// failed screen is an error, not a sample).
type sample struct {
	latencies []time.Duration
	elapsed   time.Duration
	calls     int // upstream calls, from the sandbox's counters
}

func (s *sample) add(o *sample) {
	s.latencies = append(s.latencies, o.latencies...)
	s.elapsed += o.elapsed
	s.calls += o.calls
}

func (s *sample) result(name string) result {
	all := slices.Sorted(slices.Values(s.latencies))
	pct := func(p float64) time.Duration { return all[min(len(all)-1, int(p*float64(len(all))))] }
	// Screens in flight when a run stopped were counted by the sandbox but
	// not here: at most one per client, a bias of under 0.1%.
	return result{name: name, n: len(all), rps: float64(len(all)) / s.elapsed.Seconds(),
		p50: pct(0.50), p95: pct(0.95), p99: pct(0.99), max: all[len(all)-1],
		upstreamPerScreen: float64(s.calls) / float64(len(all))}
}

// measure runs the clients' screens for the warm-up, then counts for the
// duration. Errors are counted and the first one returned: a screen that
// failed says nothing about latency.
func measure(o options, screens []screen) (*sample, error) {
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		all       []time.Duration
		errCount  int
		firstErr  error
		measuring = make(chan struct{})
		stop      = make(chan struct{})
	)
	for _, s := range screens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var own []time.Duration
			var ownErrs int
			var ownErr error
			counting := false
			for {
				select {
				case <-stop:
					mu.Lock()
					all = append(all, own...)
					errCount += ownErrs
					if firstErr == nil {
						firstErr = ownErr
					}
					mu.Unlock()
					return
				default:
				}
				if !counting {
					select {
					case <-measuring:
						counting = true
					default:
					}
				}
				t0 := time.Now()
				err := s(context.Background())
				d := time.Since(t0)
				if !counting {
					continue
				}
				if err != nil {
					ownErrs++
					if ownErr == nil {
						ownErr = err
					}
					continue
				}
				own = append(own, d)
			}
		}()
	}
	time.Sleep(o.warmup)
	if err := resetStats(o.sandbox); err != nil {
		return nil, err
	}
	close(measuring)
	t0 := time.Now()
	time.Sleep(o.duration)
	close(stop)
	wg.Wait()
	elapsed := time.Since(t0)
	calls, err := statsTotal(o.sandbox)
	if err != nil {
		return nil, err
	}
	if firstErr != nil {
		return nil, fmt.Errorf("%d screens failed, first: %w", errCount, firstErr)
	}
	if len(all) == 0 {
		return nil, errors.New("no screen completed")
	}
	return &sample{latencies: all, elapsed: elapsed, calls: calls}, nil
}

// newGatewayScreen signs in to the gateway as the demo person and returns
// the dashboard query over that session.
func newGatewayScreen(o options, query []byte) (screen, error) {
	var signIn struct {
		Data struct {
			SignIn struct{ SessionToken string }
		}
	}
	// The gateway limits sign-ins per account (a burst of 10, then one
	// every 6 s): past the burst, wait as told and try again.
	for {
		err := gql(context.Background(), o.url, "", `mutation($input: SignInInput!) { signIn(input: $input) { ... on SignedIn { sessionToken } } }`,
			map[string]any{"input": map[string]any{"kind": "PERSON", "email": o.email, "password": o.password, "deviceFingerprint": 1}}, &signIn)
		var rl *rateLimited
		if errors.As(err, &rl) {
			fmt.Printf("sign-in rate limited; waiting %ds\n", rl.retryAfter)
			time.Sleep(time.Duration(rl.retryAfter) * time.Second)
			continue
		}
		if err != nil {
			return nil, err
		}
		break
	}
	token := signIn.Data.SignIn.SessionToken
	if token == "" {
		return nil, errors.New("gateway sign-in gave no session (is two-factor off for this person?)")
	}
	q := string(query)
	return func(ctx context.Context) error {
		var d struct {
			Data struct {
				CurrentCorporation *struct {
					ID      string
					Wallets []json.RawMessage
					Cards   []struct{ Cardholder *struct{ ID string } }
				}
			}
		}
		if err := gql(ctx, o.url, token, q, nil, &d); err != nil {
			return err
		}
		c := d.Data.CurrentCorporation
		if c == nil || c.ID == "" || len(c.Wallets) == 0 {
			return errors.New("dashboard came back without a corporation or wallets")
		}
		return nil
	}, nil
}

// gql posts one GraphQL request and decodes its data into out; any error
// in the answer fails it.
func gql(ctx context.Context, url, token, query string, vars map[string]any, out any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("gateway: status %d: %.300s", resp.StatusCode, raw)
	}
	var errs struct {
		Errors []struct {
			Extensions struct {
				Code       string
				RetryAfter int
			}
		}
	}
	if err := json.Unmarshal(raw, &errs); err != nil {
		return err
	}
	if len(errs.Errors) > 0 {
		if e := errs.Errors[0].Extensions; e.Code == "RATE_LIMITED" && e.RetryAfter > 0 {
			return &rateLimited{e.RetryAfter}
		}
		return fmt.Errorf("gateway: %.300s", raw)
	}
	return json.Unmarshal(raw, out)
}

// rateLimited is a RATE_LIMITED answer, with its retryAfter in seconds.
type rateLimited struct{ retryAfter int }

func (e *rateLimited) Error() string {
	return fmt.Sprintf("rate limited; retry after %ds", e.retryAfter)
}

// restClient is one optimal REST frontend: it keeps its sign-in's newest
// token (the banking upstream rotates it on every answer; a superseded one
// stays valid for a grace period, so parallel calls may use the same one)
// and the signed-in person's corporation id, learnt once at sign-in.
type restClient struct {
	base          string
	corporationID string
	mu            sync.Mutex
	token         string
}

func newRESTScreen(o options) (screen, error) {
	c := &restClient{base: o.sandbox + "/banking/v2"}
	var tok struct{ Token string }
	if err := c.call(context.Background(), http.MethodPost, "/person/signin", map[string]any{
		"email": o.email, "password": o.password,
		"fp_client_data": map[string]any{"identifiers": map[string]any{"id_fingerprint": 1}},
	}, &tok); err != nil {
		return nil, err
	}
	if tok.Token == "" {
		return nil, errors.New("banking sign-in gave no token (is two-factor off for this person?)")
	}
	c.token = tok.Token
	// Who signed in, once per client: the person's corporation, which every
	// screen's corporation calls are addressed to (the gateway's session
	// learns it the same way).
	var me struct {
		Account struct {
			ID            string
			CorporationID string `json:"corporation_id"`
		}
	}
	if err := c.call(context.Background(), http.MethodGet, "/persons/me", nil, &me); err != nil {
		return nil, err
	}
	if c.corporationID = me.Account.CorporationID; c.corporationID == "" {
		c.corporationID = me.Account.ID
	}
	if c.corporationID == "" {
		return nil, errors.New("the signed-in person has no corporation")
	}
	return c.dashboard, nil
}

// Shapes of the banking answers, as much as the screen shows.
type (
	corporation struct {
		ID, Name, Currency string
		IsOnboarded        bool `json:"is_onboarded"`
	}
	person struct {
		ID        string
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
		Type      string
	}
	card struct {
		ID, Status, Currency string
		Cardholder           struct {
			ExternalID string `json:"external_id"`
		}
	}
	wallet struct {
		ID, Name, Currency string
		Requisites         []json.RawMessage
	}
)

// dashboard fetches the screen with maximum parallelism: all 5 calls at
// once, since the corporation's id is known from the sign-in.
func (c *restClient) dashboard(ctx context.Context) error {
	var (
		corp     corporation
		persons  struct{ List []person }
		cards    []card
		settings map[string]any
		wallets  []wallet
	)
	err := parallel(
		func() error { return c.call(ctx, http.MethodGet, "/corporations/current", nil, &corp) },
		func() error { return c.call(ctx, http.MethodGet, "/persons", nil, &persons) },
		func() error { return c.call(ctx, http.MethodGet, "/cards", nil, &cards) },
		func() error {
			return c.call(ctx, http.MethodGet, "/corporations/"+c.corporationID+"/settings", nil, &settings)
		},
		func() error {
			return c.call(ctx, http.MethodGet, "/corporations/"+c.corporationID+"/wallets", nil, &wallets)
		},
	)
	if err != nil {
		return err
	}
	if corp.ID != c.corporationID {
		return fmt.Errorf("current corporation %q, signed in to %q", corp.ID, c.corporationID)
	}
	if len(wallets) == 0 {
		return errors.New("no wallets")
	}
	// Cardholders, joined as the screen shows them.
	byID := make(map[string]*person, len(persons.List))
	for i := range persons.List {
		byID[persons.List[i].ID] = &persons.List[i]
	}
	for _, cd := range cards {
		_ = byID[cd.Cardholder.ExternalID]
	}
	return nil
}

func parallel(fs ...func() error) error {
	errs := make([]error, len(fs))
	var wg sync.WaitGroup
	for i, f := range fs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = f() }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (c *restClient) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.mu.Lock()
	if c.token != "" {
		req.Header.Set("x-access-token", c.token)
	}
	c.mu.Unlock()
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if t := resp.Header.Get("x-access-token"); t != "" {
		c.mu.Lock()
		c.token = t
		c.mu.Unlock()
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("banking %s %s: status %d", method, path, resp.StatusCode)
	}
	return json.Unmarshal(raw, out)
}

func setLatency(sandbox string, latencyMS int) error {
	return post(sandbox+"/_sandbox/faults", fmt.Sprintf(`{"route":"*","latency_ms":%d}`, latencyMS))
}

func resetStats(sandbox string) error { return post(sandbox+"/_sandbox/stats/reset", "") }

func post(url, body string) error {
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("POST %s: status %d", url, resp.StatusCode)
	}
	return nil
}

func statsTotal(sandbox string) (int, error) {
	resp, err := client.Get(sandbox + "/_sandbox/stats")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var s struct{ Total int }
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return 0, err
	}
	return s.Total, nil
}
