package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	runtimemetrics "runtime/metrics"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fingraph/fingraph/session"
)

// BenchmarkGatewayCost measures what the gateway itself costs per request,
// without the upstreams: every upstream call is answered from memory with
// bytes recorded once from the in-process sandbox (cannedTransport), and
// requests go straight to the gateway's handler (no sockets). What is left
// is the gateway's own work: middleware, the session read, parsing and
// validation (with the query cache), execution with the per-request
// loaders, the upstream clients' encoding and decoding, and the response.
//
//	go test -run '^$' -bench GatewayCost -benchtime 2000x ./app
//
// Each query runs twice: from one client at a time, then from 16 at once.
func BenchmarkGatewayCost(b *testing.B) {
	canned := &cannedTransport{recorded: map[string]*cannedResponse{}}
	cfg, err := ParseConfig([]string{"-addr", "127.0.0.1:0", "-sandbox-addr", "127.0.0.1:0", "-data-dir", b.TempDir(),
		"-log-level", "warn", "-register-webhook", "false", "-reconcile-interval", "0"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	a, err := start(context.Background(), cfg, slog.New(slog.DiscardHandler),
		func(_ string, rt http.RoundTripper) http.RoundTripper { canned.inner = rt; return canned })
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = a.Shutdown() })
	h := a.server.Handler
	// The collector as `go run .` sets it (Run → tuneRuntime). Reading the
	// percent turns the collector off, so it is put back first: tuneRuntime
	// keeps a GOGC the environment set by reading it from the runtime.
	prevPercent, prevLimit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(prevPercent)
	// Allocations are sampled only when the run asks for a heap profile,
	// as a gateway samples them only when it serves profiles.
	memprofile := flag.Lookup("test.memprofile")
	rate := runtime.MemProfileRate
	tuneRuntime(os.Getenv, slog.New(slog.DiscardHandler), memprofile != nil && memprofile.Value.String() != "")
	b.Cleanup(func() { runtime.MemProfileRate = rate })
	b.Cleanup(func() { debug.SetGCPercent(prevPercent); debug.SetMemoryLimit(prevLimit) })

	person := signInToken(b, h, map[string]any{"kind": "PERSON", "email": "anna@demo.test", "password": "demo-password", "deviceFingerprint": 1})
	api := signInToken(b, h, map[string]any{"kind": "API_KEY", "apiKey": "demo-api-key"})
	var customers struct {
		Data struct{ Customers []struct{ ID string } }
	}
	if err := json.Unmarshal(serve(b, h, api, `{ customers { id } }`, nil), &customers); err != nil || len(customers.Data.Customers) == 0 {
		b.Fatalf("customers: %v", err)
	}

	cases := []struct {
		name, token, query string
		vars               map[string]any
	}{
		// The README's query, as the anonymous demo session.
		{"readme-query", "", `{ customers { id number contact { name email } orders { id } } }`, nil},
		// The query ../shared/peers/run.sh sends every gateway side by side.
		{"side-by-side-query", api, `{ customers { id number contact { name email }
			orders(start: "2026-08-01", end: "2026-11-30") { id status amount { amount currency } } } }`, nil},
		{"corporation-dashboard", person, `{ currentCorporation { id name isOnboarded settings { allowedPersonTypes }
			persons { id } wallets { id requisites { id } } cards { id } } }`, nil},
		{"mutation", api, `mutation($input: UpdateCustomerContactInput!) { updateCustomerContact(input: $input) { contact { name email } } }`,
			map[string]any{"input": map[string]any{"customerId": customers.Data.Customers[0].ID, "contact": map[string]any{"name": "Bench Mark", "email": "bench@demo.test"}}}},
	}
	for _, c := range cases {
		serve(b, h, c.token, c.query, c.vars) // records the upstream answers
	}
	canned.replay.Store(true)
	// measure runs a case's requests and reports what they cost the process.
	measure := func(b *testing.B, run func()) {
		canned.calls.Store(0)
		canned.bytes.Store(0)
		writes0 := sessionWrites(b, a)
		b.ReportAllocs()
		// The runtime's count of goroutines started, and the stack a new
		// one starts with (the runtime's average of the stacks it last
		// scanned): gqlgen's goroutine per list element grows from it
		// (docs/performance.md, "Known remaining costs").
		rt := []runtimemetrics.Sample{{Name: "/sched/goroutines-created:goroutines"}, {Name: "/gc/stack/starting-size:bytes"}}
		runtimemetrics.Read(rt)
		created0 := rt[0].Value.Uint64()
		cpu0 := processCPU()
		run()
		b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		runtimemetrics.Read(rt)
		// Goroutines started per request, by the process (the sandbox's
		// are not counted: its answers are canned): gqlgen's per list
		// element and per concurrent field, the loaders' and the HTTP
		// server's.
		b.ReportMetric(float64(rt[0].Value.Uint64()-created0)/float64(b.N), "goroutines/op")
		b.ReportMetric(float64(rt[1].Value.Uint64()), "stack-start-B")
		b.ReportMetric(float64(canned.calls.Load())/float64(b.N), "upstream-calls/op")
		// The upstream JSON the request decodes (answer bodies).
		b.ReportMetric(float64(canned.bytes.Load())/float64(b.N), "upstream-B/op")
		// Writes to the sessions bucket (the banking token write-back): each
		// is a JetStream compare-and-set and a file write.
		b.ReportMetric(float64(sessionWrites(b, a)-writes0)/float64(b.N), "session-writes/op")
		if m := canned.misses.Load(); m > 0 {
			b.Fatalf("%d upstream calls were not recorded", m)
		}
	}
	for _, c := range cases {
		body, _ := json.Marshal(map[string]any{"query": c.query, "variables": c.vars})
		b.Run(c.name, func(b *testing.B) {
			measure(b, func() {
				for b.Loop() {
					serveBody(b, h, c.token, body)
				}
			})
		})
	}
	// The same requests from 16 clients at once, as a gateway under load
	// serves them: one client at a time leaves the process idle during each
	// loader window, and an idle Go scheduler spends CPU looking for work
	// (findRunnable, futex wake-ups) that a busy one does not.
	//
	// The dashboard is left out: 16 clients on its one signed-in session would
	// measure overlapping token write-backs of one person, which no screen
	// sees (bench/floor runs it with a session per client).
	for _, c := range cases {
		if c.token == person {
			continue
		}
		body, _ := json.Marshal(map[string]any{"query": c.query, "variables": c.vars})
		b.Run(c.name+"/16-clients", func(b *testing.B) {
			b.SetParallelism(8) // 8 per GOMAXPROCS: 16 on the 2-core machine
			measure(b, func() {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						serveBody(b, h, c.token, body)
					}
				})
			})
		})
	}
}

// sessionWrites is how many messages the sessions bucket's stream has
// stored so far: every session write adds one.
func sessionWrites(b *testing.B, a *App) uint64 {
	s, err := a.engine.JetStream().Stream(context.Background(), "KV_"+session.Bucket)
	if err != nil {
		b.Fatal(err)
	}
	return s.CachedInfo().State.LastSeq
}

// processCPU is the CPU time the process has used (user and system): the
// gateway's cost per request, where wall time also counts the loaders'
// batching wait.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serve runs one GraphQL request through the handler and returns the body,
// failing on anything but a clean answer.
func serve(b *testing.B, h http.Handler, token, query string, vars map[string]any) []byte {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return serveBody(b, h, token, body)
}

// serveBody is serve with the request body already encoded: the benchmark
// loops encode theirs once, so that what they count is the gateway's work,
// not the client's. The request is built directly (httptest.NewRequest
// parses a serialised request through a 4 KB bufio reader every time).
func serveBody(b testing.TB, h http.Handler, token string, body []byte) []byte {
	req, err := http.NewRequest(http.MethodPost, "http://gateway/graphql", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.RemoteAddr = "127.0.0.1:1"
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK || bytes.Contains(w.Body.Bytes(), []byte(`"errors"`)) {
		b.Fatalf("status %d: %s", w.Code, w.Body.Bytes())
	}
	return w.Body.Bytes()
}

func signInToken(b *testing.B, h http.Handler, input map[string]any) string {
	raw := serve(b, h, "", `mutation($input: SignInInput!) { signIn(input: $input) { ... on SignedIn { sessionToken } } }`, map[string]any{"input": input})
	var d struct {
		Data struct{ SignIn struct{ SessionToken string } }
	}
	if err := json.Unmarshal(raw, &d); err != nil || d.Data.SignIn.SessionToken == "" {
		b.Fatalf("sign-in: %s", raw)
	}
	return d.Data.SignIn.SessionToken
}

// cannedTransport records each upstream answer once (by method, URI and
// body) through the real transport, then, in replay, serves it from memory,
// framed as it came (announced length, or chunked).
type cannedTransport struct {
	inner  http.RoundTripper
	replay atomic.Bool
	calls  atomic.Int64
	bytes  atomic.Int64 // answer bodies served in replay
	misses atomic.Int64

	mu       sync.RWMutex
	recorded map[string]*cannedResponse
}

type cannedResponse struct {
	status int
	header http.Header
	body   []byte
	// length is the length the upstream announced: -1 when it sent the
	// body chunked, as the sandbox does for answers over 4 KB.
	length int64
}

func (c *cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	key := req.Method + " " + req.URL.RequestURI()
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		key += " " + string(body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	if c.replay.Load() {
		c.calls.Add(1)
		c.mu.RLock()
		r := c.recorded[key]
		c.mu.RUnlock()
		if r == nil {
			c.misses.Add(1)
			return nil, errors.New("canned: not recorded: " + req.Method + " " + req.URL.Path)
		}
		c.bytes.Add(int64(len(r.body)))
		return &http.Response{StatusCode: r.status, Header: r.header.Clone(), Body: io.NopCloser(bytes.NewReader(r.body)),
			ContentLength: r.length, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: req}, nil
	}
	resp, err := c.inner.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.recorded[key] = &cannedResponse{status: resp.StatusCode, header: resp.Header.Clone(), body: body, length: resp.ContentLength}
	c.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}
