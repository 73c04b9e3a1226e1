package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fingraph/fingraph/app"
	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// Lost answers: a transport between the gateway and the upstream that lets
// the upstream act, then cuts the connection before the answer. For
// createConversion and createOrder, one key is one conversion or one
// charge, whatever is lost, however often the client retries, on one
// replica or after a restart (captures, refunds and cancels: once_test.go).

// Routes the lossy transport can cut, as the sandbox's stats name them.
const (
	routeConvert = "POST /banking/v2/transactions"
	routeOrder   = "POST /payments/v1/order"
)

// lossy cuts the answers of chosen routes after the upstream has acted.
type lossy struct {
	mu   sync.Mutex
	cuts map[string]int // route -> answers still to lose
}

func newLossy() *lossy { return &lossy{cuts: map[string]int{}} }

// lose makes the next n answers of route vanish after the upstream acted.
func (l *lossy) lose(route string, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cuts[route] += n
}

func (l *lossy) take(route string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cuts[route] == 0 {
		return false
	}
	l.cuts[route]--
	return true
}

// wrap serves a cut route to a recorder, so that the upstream commits, then
// closes the client's connection without a byte of the answer.
func (l *lossy) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !l.take(r.Method + " " + r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(httptest.NewRecorder(), r)
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	})
}

// failedAsLost reports whether answer i is an error, and fails t unless
// the error is one a lost answer may honestly give: the outcome is unknown
// or the upstream unavailable.
func failedAsLost(t *testing.T, i int, r gqlResponse) bool {
	t.Helper()
	if len(r.Errors) == 0 {
		return false
	}
	if c := r.code(); c != "OUTCOME_UNKNOWN" && c != "UPSTREAM_UNAVAILABLE" {
		t.Errorf("answer %d: %+v", i, r.Errors)
	}
	return true
}

// wantOneConversion checks the outcome of a conversion whose answers may
// have been lost: answers are conversions with one id, or the typed
// "outcome unknown" (never a second conversion), and the wallet moved once.
func wantOneConversion(t *testing.T, answers []gqlResponse, usd0, usdNow int64, cost int64) string {
	t.Helper()
	id := ""
	for i, r := range answers {
		if failedAsLost(t, i, r) {
			continue
		}
		var d struct {
			CreateConversion conversionResult `json:"createConversion"`
		}
		r.decode(t, &d)
		if d.CreateConversion.ID == "" {
			t.Errorf("answer %d: %s", i, r.Data)
			continue
		}
		if id == "" {
			id = d.CreateConversion.ID
		}
		if d.CreateConversion.ID != id {
			t.Errorf("answer %d is conversion %s, an earlier one %s: two conversions for one key", i, d.CreateConversion.ID, id)
		}
	}
	if usd0-usdNow != cost {
		t.Errorf("USD moved %d for one conversion key, want %d (one conversion)", usd0-usdNow, cost)
	}
	return id
}

// The cost in USD cents of converting into 20.00 GBP (see
// TestConversionIdempotentRetryConvertsOnce): 25.42 USD and 0.13 charge.
const cost20GBP = 2542 + 13

func TestLostConversionAnswerRetryConvertsOnce(t *testing.T) {
	t.Parallel()
	l := newLossy()
	g := startGatewayWith(t, sandboxBehind(l.wrap))
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	usd0, _ := anna.balance(t, demoCorpID, demoUSDWalletID)
	in := map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 2000, "currency": "GBP", "idempotencyKey": uniq("lost-conv-")}

	l.lose(routeConvert, 1)
	_, first := anna.convert(t, in)
	if len(first.Errors) == 0 {
		t.Fatalf("the answer was lost, yet the first call answered %s", first.Data)
	}
	if c := first.code(); c != "OUTCOME_UNKNOWN" {
		t.Errorf("first call: code %s, want OUTCOME_UNKNOWN: %+v", c, first.Errors)
	}
	var answers []gqlResponse
	for range 3 {
		_, r := anna.convert(t, in)
		answers = append(answers, r)
	}
	usd, _ := anna.balance(t, demoCorpID, demoUSDWalletID)
	if id := wantOneConversion(t, answers, usd0, usd, cost20GBP); id == "" {
		t.Errorf("no retry answered the conversion the lost attempt made")
	}
	if n := g.stats(t).Routes[routeConvert]; n != 1 {
		t.Errorf("%d conversion requests upstream for one key, want 1", n)
	}
}

func TestLostConversionAnswerConcurrentRetriesConvertOnce(t *testing.T) {
	t.Parallel()
	l := newLossy()
	g := startGatewayWith(t, sandboxBehind(l.wrap))
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	usd0, _ := anna.balance(t, demoCorpID, demoUSDWalletID)
	in := map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 2000, "currency": "GBP", "idempotencyKey": uniq("lost-conc-")}

	l.lose(routeConvert, 1)
	_, first := anna.convert(t, in)
	answers := make([]gqlResponse, 6)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() { _, answers[i] = anna.convert(t, in) })
	}
	wg.Wait()
	usd, _ := anna.balance(t, demoCorpID, demoUSDWalletID)
	wantOneConversion(t, append(answers, first), usd0, usd, cost20GBP)
}

// upstreamOrders lists the upstream's orders of a customer, read straight
// from the sandbox with the merchant's private key.
func upstreamOrders(t *testing.T, sandboxURL, customerID string) []map[string]any {
	t.Helper()
	day := time.Now().UTC().Format(time.DateOnly)
	req, _ := http.NewRequest(http.MethodGet, sandboxURL+"/payments/v1/order?start="+day+"&end="+day, nil)
	req.Header.Set("Authorization", "Bearer "+paymentsim.PrivateKey)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var all []map[string]any
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatalf("order listing %d %s: %v", resp.StatusCode, raw, err)
	}
	var out []map[string]any
	for _, o := range all {
		if o["customer"] == customerID {
			out = append(out, o)
		}
	}
	return out
}

// wantOneOrder checks that answers name at most one order, and that it is
// the customer's only upstream order.
func wantOneOrder(t *testing.T, answers []gqlResponse, upstream []map[string]any) {
	t.Helper()
	if len(upstream) != 1 {
		t.Fatalf("%d upstream orders (charges) for one key, want 1", len(upstream))
	}
	for i, r := range answers {
		if failedAsLost(t, i, r) {
			continue
		}
		var d struct {
			CreateOrder orderResult `json:"createOrder"`
		}
		r.decode(t, &d)
		if d.CreateOrder.Typename != "Order" || d.CreateOrder.ID == "" {
			t.Errorf("answer %d: %s", i, r.Data)
			continue
		}
		if want := upstream[0]["id"].(string); rawID(d.CreateOrder.ID) != want {
			t.Errorf("answer %d is order %s, the upstream's only order is %s", i, d.CreateOrder.ID, want)
		}
	}
}

// The retry finds the order the lost attempt made, and the record the key
// keeps of it holds no card token: the upstream's order carries the stored
// card's token in its payment, which the gateway's records leave out.
func TestLostOrderAnswerOnStoredCardChargesOnce(t *testing.T) {
	t.Parallel()
	l := newLossy()
	dir := t.TempDir()
	g := startGatewayWith(t, sandboxBehind(l.wrap), "-data-dir", dir)
	g = g.as(g.signInAPI(t))
	customerID, methods := createCustomer(t, g, uniq("tok_ok_"))
	in := map[string]any{"idempotencyKey": uniq("lost-order-"), "currency": "EUR", "customerId": customerID, "autoCharge": true,
		"items": map[string]any{"amount": 4200}, "payment": map[string]any{"savedCard": map[string]any{"methodToken": methods[0]}}}

	l.lose(routeOrder, 1)
	first := g.query(t, createOrderMutation, map[string]any{"input": in})
	if c := first.code(); c != "OUTCOME_UNKNOWN" {
		t.Errorf("first call: code %q, want OUTCOME_UNKNOWN: %s %+v", c, first.Data, first.Errors)
	}
	var answers []gqlResponse
	for range 3 {
		answers = append(answers, g.query(t, createOrderMutation, map[string]any{"input": in}))
	}
	orders := upstreamOrders(t, g.SandboxURL, rawID(customerID))
	wantOneOrder(t, answers, orders)
	if len(answers[0].Errors) > 0 {
		t.Errorf("the retry did not find the order the lost attempt made: %+v", answers[0].Errors)
	}
	if len(orders) != 1 || !strings.Contains(fmt.Sprint(orders[0]["payment"]), methods[0]) {
		t.Fatalf("the upstream's order does not carry the card's token, so this proves nothing: %+v", orders)
	}
	// The key's record reaches the store's files (the order's id is in it)
	// before they are searched for the token.
	id := orders[0]["id"].(string)
	for deadline := time.Now().Add(10 * time.Second); !filesHold(t, dir, id) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if !filesHold(t, dir, id) {
		t.Fatal("the key's record of the order never reached the data directory")
	}
	if filesHold(t, dir, methods[0]) {
		t.Error("the data directory holds the stored card's token")
	}
}

// filesHold reports whether a file under dir contains s.
func filesHold(t *testing.T, dir, s string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil // a file removed while walking
		}
		found = bytes.Contains(b, []byte(s))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// A replica that lost the answer stops; a new one, sharing JetStream and
// the upstream, takes the retry: the unknown attempt is in the bucket, not
// in the stopped process.
func TestLostAnswerRetryAfterRestartMovesMoneyOnce(t *testing.T) {
	t.Parallel()
	l := newLossy()
	up := sharedUpstream(t, l.wrap)
	natsURL := startNATS(t).ClientURL()

	first := startReplica(t, up, natsURL)
	anna := first.gw.as(first.gw.signInPerson(t, "anna@demo.test"))
	usd0, _ := anna.balance(t, demoCorpID, demoUSDWalletID)
	convIn := map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 2000, "currency": "GBP", "idempotencyKey": uniq("restart-conv-")}
	l.lose(routeConvert, 1)
	_, lost := anna.convert(t, convIn)

	api := first.gw.as(first.gw.signInAPI(t))
	customerID, methods := createCustomer(t, api, uniq("tok_ok_"))
	orderIn := map[string]any{"idempotencyKey": uniq("restart-order-"), "currency": "EUR", "customerId": customerID,
		"items": map[string]any{"amount": 1700}, "payment": map[string]any{"savedCard": map[string]any{"methodToken": methods[0]}}}
	l.lose(routeOrder, 1)
	lostOrder := api.query(t, createOrderMutation, map[string]any{"input": orderIn})
	first.stop(t)

	second := startReplica(t, up, natsURL)
	anna2 := second.gw.as(anna.bearer)
	_, retry := anna2.convert(t, convIn)
	usd, _ := anna2.balance(t, demoCorpID, demoUSDWalletID)
	wantOneConversion(t, []gqlResponse{lost, retry}, usd0, usd, cost20GBP)
	if len(retry.Errors) > 0 {
		t.Errorf("the retry on the new replica did not find the conversion: %+v", retry.Errors)
	}
	api2 := second.gw.as(api.bearer)
	retryOrder := api2.query(t, createOrderMutation, map[string]any{"input": orderIn})
	wantOneOrder(t, []gqlResponse{lostOrder, retryOrder}, upstreamOrders(t, up, rawID(customerID)))
}

// sharedUpstream serves one sandbox (seeded, behind the contract validator
// and wrap) for several gateways, and returns its URL.
func sharedUpstream(t *testing.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	sb := sandbox.New(sandbox.Config{})
	sb.Seed()
	srv := httptest.NewServer(wrap(validated(t, sb)))
	t.Cleanup(func() { srv.Close(); sb.Close() })
	return srv.URL
}

// replica is a gateway the test can stop before it ends.
type replica struct {
	gw      *testGateway
	a       *app.App
	stopped bool
}

func (r *replica) stop(t *testing.T) {
	t.Helper()
	if r.stopped {
		return
	}
	r.stopped = true
	if err := r.a.Shutdown(); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// startReplica starts a gateway on up's upstream and the JetStream at
// natsURL, with the test harness's defaults.
func startReplica(t *testing.T, up, natsURL string) *replica {
	t.Helper()
	cfg, err := app.ParseConfig([]string{
		"-addr", "127.0.0.1:0", "-data-dir", t.TempDir(), "-log-level", "debug", "-log-format", "json",
		"-register-webhook", "false", "-reconcile-interval", "0", "-sandbox-anonymous", "false",
		"-nats-url", natsURL, "-payments-url", up + "/payments", "-banking-url", up + "/banking",
		"-payments-private-key", paymentsim.PrivateKey, "-payments-public-key", paymentsim.PublicKey,
		"-payments-access-token", paymentsim.AccessToken,
		// The sandbox's merchant: its demo corporation, whose API client
		// the tests sign in as.
		"-payments-corporations", demoCorpID,
	}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(io.MultiWriter(logs, allLogs), &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := app.Start(ctx, cfg, logger)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	r := &replica{a: a, gw: &testGateway{URL: "http://" + a.Addr(), SandboxURL: up, Logs: logs, http: &http.Client{Timeout: 20 * time.Second}}}
	t.Cleanup(func() { r.stop(t) })
	return r
}

// Every payment shape of createOrder: a one-time card token, a stored card
// initiated by the cardholder, and the customer's own payment; each loses
// its first answer and is retried.
func TestLostOrderAnswerEveryPaymentShapeChargesOnce(t *testing.T) {
	t.Parallel()
	l := newLossy()
	g := startGatewayWith(t, sandboxBehind(l.wrap))
	g = g.as(g.signInAPI(t))
	for _, tc := range []struct {
		name    string
		payment func(methods []string) map[string]any
	}{
		{"one-time card", func([]string) map[string]any {
			return map[string]any{"card": map[string]any{"token": uniq("tok_ok_")}}
		}},
		{"stored card, cardholder-initiated", func(m []string) map[string]any {
			return map[string]any{"savedCard": map[string]any{"methodToken": m[0], "initiator": "CARDHOLDER"}}
		}},
		{"customer payment", func([]string) map[string]any {
			return map[string]any{"customer": map[string]any{"initiator": "CARDHOLDER"}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			customerID, methods := createCustomer(t, g, uniq("tok_ok_"))
			in := map[string]any{"idempotencyKey": uniq("lost-shape-"), "currency": "EUR", "customerId": customerID,
				"items": map[string]any{"amount": 2300}, "payment": tc.payment(methods)}
			l.lose(routeOrder, 1)
			answers := []gqlResponse{g.query(t, createOrderMutation, map[string]any{"input": in})}
			for range 2 {
				answers = append(answers, g.query(t, createOrderMutation, map[string]any{"input": in}))
			}
			if len(answers[1].Errors) > 0 {
				t.Errorf("the retry did not find the order: %+v", answers[1].Errors)
			}
			wantOneOrder(t, answers, upstreamOrders(t, g.SandboxURL, rawID(customerID)))
		})
	}
}

// TestALostAttemptNeverTakesAnotherKeysConversion: key A converts; key B
// sends the same conversion, and its connection is cut before the upstream
// sees it. B's retry finds A's conversion in the wallet's listing (the same
// amount, currency and wallets, a moment earlier), but that conversion is
// A's: B's retry must not answer it as its own. Once the attempt has had
// time to settle, B converts, and the wallet moved twice for two keys.
func TestALostAttemptNeverTakesAnotherKeysConversion(t *testing.T) {
	t.Parallel()
	var cutBefore atomic.Int32
	g := startGatewayWith(t, func(c *app.Config) {
		sandboxBehind(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method+" "+r.URL.Path == routeConvert && cutBefore.Add(-1) >= 0 {
					// The upstream never sees it; the gateway cannot tell.
					if hj, ok := w.(http.Hijacker); ok {
						if conn, _, err := hj.Hijack(); err == nil {
							_ = conn.Close()
							return
						}
					}
					panic(http.ErrAbortHandler)
				}
				next.ServeHTTP(w, r)
			})
		})(c)
		c.OutcomeSettle = 50 * time.Millisecond
	})
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	usd0, _ := anna.balance(t, demoCorpID, demoUSDWalletID)
	in := func(key string) map[string]any {
		return map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 2000, "currency": "GBP", "idempotencyKey": key}
	}
	a, r := anna.convert(t, in(uniq("key-a-")))
	if len(r.Errors) > 0 || a.ID == "" {
		t.Fatalf("key A: %+v %s", r.Errors, r.Data)
	}
	keyB := uniq("key-b-")
	cutBefore.Store(1)
	if _, r := anna.convert(t, in(keyB)); r.code() != "OUTCOME_UNKNOWN" {
		t.Fatalf("key B, cut before the upstream: %s %+v", r.Data, r.Errors)
	}
	// Until the attempt has settled the retry cannot count on an absence
	// and answers OUTCOME_UNKNOWN; then it converts.
	var b conversionResult
	for deadline := time.Now().Add(10 * time.Second); ; {
		b, r = anna.convert(t, in(keyB))
		if r.code() != "OUTCOME_UNKNOWN" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("key B's retry still answers OUTCOME_UNKNOWN: %+v", r.Errors)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(r.Errors) > 0 {
		t.Fatalf("key B's retry: %+v", r.Errors)
	}
	if b.ID == a.ID {
		t.Fatalf("key B's retry answered key A's conversion %s as its own; nothing was converted for B", a.ID)
	}
	usd, _ := anna.balance(t, demoCorpID, demoUSDWalletID)
	if usd0-usd != 2*cost20GBP {
		t.Errorf("USD moved %d for two keys, want %d (two conversions)", usd0-usd, 2*cost20GBP)
	}
	if again, _ := anna.convert(t, in(keyB)); again.ID != b.ID {
		t.Errorf("key B answered %s, then %s", b.ID, again.ID)
	}
}
