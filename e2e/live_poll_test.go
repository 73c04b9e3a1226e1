package e2e

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// Banking changes made outside the gateway (the sandbox's control API, as
// a bank transfer arriving would) reach the live subscribers of their
// corporation: polled once per corporation, by one replica, and announced
// once.

// livePollArgs poll every second.
var livePollArgs = []string{"-bank-poll-interval", "1s"}

const allEvents = `subscription($after: String) { events(after: $after) ` + liveFields + ` }`

// metric reads one unlabelled metric of g's /metrics.
func (g *testGateway) metric(t *testing.T, name string) float64 {
	t.Helper()
	resp, err := g.http.Get(g.URL + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric %s: %q", name, v)
			}
			return f
		}
	}
	t.Fatalf("metric %s not found", name)
	return 0
}

// waitMetric waits until ok holds for the metric; the deadline only bounds
// a hung test.
func (g *testGateway) waitMetric(t *testing.T, name string, ok func(float64) bool) float64 {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		v := g.metric(t, name)
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("metric %s stayed at %v", name, v)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func atLeast(n float64) func(float64) bool { return func(v float64) bool { return v >= n } }
func equal(n float64) func(float64) bool   { return func(v float64) bool { return v == n } }

// credit credits a wallet through the sandbox's control API (outside the
// gateway) and returns its new balance.
func (g *testGateway) credit(t *testing.T, walletID string, amount int64) int64 {
	t.Helper()
	var w struct {
		Amount int64 `json:"amount"`
	}
	g.sandbox(t, http.MethodPost, "/_sandbox/banking/wallets/"+walletID+"/credit", map[string]any{"amount": amount}, &w)
	return w.Amount
}

// until reads events of subscription id until stop holds for one; it
// returns every event read, that one included.
func (c *wsClient) until(id string, stop func(liveEvent) bool) []liveEvent {
	c.t.Helper()
	var out []liveEvent
	for {
		e := c.next(id, "events")
		c.t.Logf("event %s %s %v", e.Source, e.Event.Name, e.Event.Payload)
		out = append(out, e)
		if stop(e) {
			return out
		}
	}
}

// balanceEvent matches the announcement that walletID reached balance.
func balanceEvent(walletID string, balance int64) func(liveEvent) bool {
	return func(e liveEvent) bool {
		return e.Event.Name == "WalletBalanceChanged" && e.Event.Payload["wallet_id"] == walletID &&
			e.Event.Payload["amount"] == float64(balance)
	}
}

func count(evs []liveEvent, match func(liveEvent) bool) int {
	n := 0
	for _, e := range evs {
		if match(e) {
			n++
		}
	}
	return n
}

// TestCreditOutsideTheGatewayReachesItsCorporationOnce: a transfer credited
// through the sandbox's control API arrives, with its wallet as subject, at
// a subscriber of the wallet's corporation exactly once (a sentinel credit
// after two more polls closes the count), and nothing of it reaches a
// person of another corporation.
func TestCreditOutsideTheGatewayReachesItsCorporationOnce(t *testing.T) {
	g := startGateway(t, livePollArgs...)
	t.Cleanup(func() {
		if t.Failed() {
			for _, l := range strings.Split(g.Logs.String(), "\n") {
				if strings.Contains(l, "live") || strings.Contains(l, "WARN") || strings.Contains(l, "ERROR") {
					t.Log(l)
				}
			}
		}
	})
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	annaWS := anna.dialWS(t, nil, nil)
	annaWS.subscribeFromNow(anna, "1", allEvents, nil)
	benWS := ben.dialWS(t, nil, nil)
	benWS.subscribeFromNow(ben, "1", allEvents, nil)
	// Both corporations polled, each baseline taken.
	g.waitMetric(t, "fingraph_live_corporations_polled", equal(2))
	g.waitMetric(t, "fingraph_live_polls_total", atLeast(2))

	balance := g.credit(t, demoEURWalletID, 1234)
	got := annaWS.until("1", balanceEvent(demoEURWalletID, balance))
	polls := g.metric(t, "fingraph_live_polls_total")
	g.waitMetric(t, "fingraph_live_polls_total", atLeast(polls+4))
	sentinel := g.credit(t, demoUSDWalletID, 500)
	got = append(got, annaWS.until("1", balanceEvent(demoUSDWalletID, sentinel))...)

	if n := count(got, balanceEvent(demoEURWalletID, balance)); n != 1 {
		t.Errorf("the credited balance was announced %d times, want once: %+v", n, got)
	}
	subject := relay.ID(relay.Wallet, bankingsim.DemoCorporationID, demoEURWalletID)
	credited := func(e liveEvent) bool {
		return e.Event.Name == "WalletTransactionCreated" && e.Event.Payload["type"] == "transfer-incoming" &&
			e.Event.Payload["wallet_id"] == demoEURWalletID
	}
	if n := count(got, credited); n != 1 {
		t.Errorf("the incoming transfer was announced %d times, want once: %+v", n, got)
	}
	for _, e := range got {
		if e.Source != "banking" && e.Source != "gateway" {
			t.Errorf("unexpected source %q", e.Source)
		}
		if credited(e) || balanceEvent(demoEURWalletID, balance)(e) {
			if e.Event.Payload["subject"] != subject || e.Event.Payload["corporation_id"] != bankingsim.DemoCorporationID {
				t.Errorf("event %s: subject %v, corporation %v; want %s of %s", e.Event.Name, e.Event.Payload["subject"],
					e.Event.Payload["corporation_id"], subject, bankingsim.DemoCorporationID)
			}
		}
	}

	// Ben's sentinel, in his own corporation, closes what he received.
	benBalance := g.credit(t, secondEURWalletID, 700)
	for _, e := range benWS.until("1", balanceEvent(secondEURWalletID, benBalance)) {
		if e.Event.Payload["corporation_id"] != bankingsim.SecondCorporationID {
			t.Errorf("ben received another corporation's event: %+v", e)
		}
	}
}

// TestChangeBeforeTheFirstPollIsAnnounced: in a corporation never polled,
// a person takes a starting point (eventsCursor, or the newest history
// page's startCursor) and a credit is made through the sandbox's control
// API at once, before any subscription or poll; the subscription from that
// cursor receives the credit exactly once (a sentinel credit after two more
// polls closes the count).
func TestChangeBeforeTheFirstPollIsAnnounced(t *testing.T) {
	for name, start := range map[string]func(t *testing.T, g *testGateway) string{
		"eventsCursor": func(t *testing.T, g *testGateway) string { return g.cursorNow(t) },
		"eventHistory": func(t *testing.T, g *testGateway) string { return *g.history(t, 1, nil, nil).PageInfo.StartCursor },
	} {
		t.Run(name, func(t *testing.T) { changeBeforeTheFirstPoll(t, start) })
	}
}

func changeBeforeTheFirstPoll(t *testing.T, start func(t *testing.T, g *testGateway) string) {
	g := startGateway(t, livePollArgs...)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	cursor := start(t, anna)
	balance := g.credit(t, demoEURWalletID, 4321)
	ws := anna.dialWS(t, nil, nil)
	ws.subscribe("1", allEvents, map[string]any{"after": cursor})
	g.waitMetric(t, "fingraph_live_subscribers", equal(1))
	polls := g.metric(t, "fingraph_live_polls_total")
	g.waitMetric(t, "fingraph_live_polls_total", atLeast(polls+2))
	sentinel := g.credit(t, demoUSDWalletID, 500)
	got := ws.until("1", balanceEvent(demoUSDWalletID, sentinel))

	if n := count(got, balanceEvent(demoEURWalletID, balance)); n != 1 {
		t.Errorf("the credit made before the first poll was announced %d times, want once: %+v", n, got)
	}
	credited := func(e liveEvent) bool {
		return e.Event.Name == "WalletTransactionCreated" && e.Event.Payload["type"] == "transfer-incoming" &&
			e.Event.Payload["wallet_id"] == demoEURWalletID
	}
	if n := count(got, credited); n != 1 {
		t.Errorf("its incoming transfer was announced %d times, want once: %+v", n, got)
	}
}

// TestConversionThroughTheGatewayIsAnnouncedOnce: the mutation announces
// the conversion at once (ConversionCreated); the poll that then finds the
// transaction derives the same change id, so the stream keeps one
// announcement of it.
func TestConversionThroughTheGatewayIsAnnouncedOnce(t *testing.T) {
	g := startGateway(t, livePollArgs...)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	ws := anna.dialWS(t, nil, nil)
	ws.subscribeFromNow(anna, "1", allEvents, nil)
	g.waitMetric(t, "fingraph_live_polls_total", atLeast(1))

	res, r := anna.convert(t, map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 10000, "currency": "EUR"})
	if res.Typename != "Conversion" {
		t.Fatalf("conversion: %+v %+v", res, r.Errors)
	}
	polls := g.metric(t, "fingraph_live_polls_total")
	g.waitMetric(t, "fingraph_live_polls_total", atLeast(polls+3))
	sentinel := g.credit(t, demoEURWalletID, 300)
	got := ws.until("1", balanceEvent(demoEURWalletID, sentinel))

	conversion := func(e liveEvent) bool {
		return e.Event.Name == "ConversionCreated" || (e.Event.Name == "WalletTransactionCreated" && e.Event.Payload["type"] == "convert")
	}
	if n := count(got, conversion); n != 1 {
		t.Errorf("the conversion was announced %d times, want once: %+v", n, got)
	}
	if g.metric(t, "fingraph_live_polls_total") < polls+3 {
		t.Fatal("the poller did not poll after the conversion")
	}
}

// pollGate holds the poller's first listing call (the corporation's
// wallets) until the test releases it, so that a test can count the calls
// of exactly one poll.
type pollGate struct {
	on      atomic.Bool
	tickets chan struct{}
}

func (p *pollGate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.on.Load() && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/corporations/"+bankingsim.DemoCorporationID+"/wallets") {
			select {
			case <-p.tickets:
			case <-r.Context().Done():
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// TestPollCostGrowsWithCorporationsNotSubscribers: one poll of a
// corporation costs the same upstream calls, route by route, whether one
// person or five listen to it.
func TestPollCostGrowsWithCorporationsNotSubscribers(t *testing.T) {
	gate := &pollGate{tickets: make(chan struct{})}
	g := startGatewayWith(t, sandboxBehind(gate.wrap), livePollArgs...)
	tokens := make([]string, 5)
	for i := range tokens {
		tokens[i] = g.signInPerson(t, "anna@demo.test")
	}
	release := func() { gate.tickets <- struct{}{} }
	// onePoll counts the upstream calls of exactly one poll: the next one
	// is held at its first call until the counters are read.
	onePoll := func() map[string]int {
		polls := g.metric(t, "fingraph_live_polls_total")
		g.resetStats(t)
		release()
		g.waitMetric(t, "fingraph_live_polls_total", atLeast(polls+1))
		out := map[string]int{}
		for route, n := range g.stats(t).Routes {
			if strings.Contains(route, "/banking/") {
				out[route] = n
			}
		}
		return out
	}

	a := g.as(tokens[0])
	start := a.cursorNow(t) // takes the corporation's baseline
	gate.on.Store(true)
	a.dialWS(t, nil, nil).subscribe("1", allEvents, map[string]any{"after": start})
	g.waitMetric(t, "fingraph_live_subscribers", equal(1))
	baseline := g.metric(t, "fingraph_live_polls_total")
	release() // the poll loop's first poll
	g.waitMetric(t, "fingraph_live_polls_total", atLeast(baseline+1))
	one := onePoll()

	for _, tok := range tokens[1:] {
		s := g.as(tok)
		s.dialWS(t, nil, nil).subscribeFromNow(s, "1", allEvents, nil)
	}
	g.waitMetric(t, "fingraph_live_subscribers", equal(5))
	five := onePoll()

	if len(one) == 0 {
		t.Fatal("a poll made no banking call")
	}
	for route, n := range one {
		if five[route] != n {
			t.Errorf("%s: %d calls per poll with 1 subscriber, %d with 5", route, n, five[route])
		}
	}
	for route, n := range five {
		if _, ok := one[route]; !ok {
			t.Errorf("%s: %d calls per poll with 5 subscribers, none with 1", route, n)
		}
	}
	if p := g.metric(t, "fingraph_live_corporations_polled"); p != 1 {
		t.Errorf("%v corporations polled, want 1", p)
	}
	t.Logf("one poll of the demo corporation: %v", one)
	gate.on.Store(false)
	close(gate.tickets)
}

// tcpCut forwards TCP connections to target until cut, which drops every
// connection at once and refuses new ones: a replica behind it loses
// JetStream the way a crashed or partitioned machine does, without a word.
type tcpCut struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newTCPCut(t *testing.T, target string) *tcpCut {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &tcpCut{ln: ln}
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
	t.Cleanup(c.cut)
	return c
}

func (c *tcpCut) URL() string { return "nats://" + c.ln.Addr().String() }

func (c *tcpCut) cut() {
	c.ln.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

// livePollReplicas starts two gateways on one external JetStream and one
// upstream, polling every second; the first reaches JetStream through a
// connection the test can cut.
func livePollReplicas(t *testing.T) (*testGateway, *testGateway, *tcpCut) {
	t.Helper()
	ns := startNATS(t)
	link := newTCPCut(t, strings.TrimPrefix(ns.ClientURL(), "nats://"))
	sb := sandbox.New(sandbox.Config{})
	sb.Seed()
	up := httptest.NewServer(validated(t, sb))
	t.Cleanup(func() { up.Close(); sb.Close() })
	replica := func(natsURL string) *testGateway {
		g := startGateway(t, append([]string{"-nats-url", natsURL,
			"-payments-url", up.URL + "/payments", "-banking-url", up.URL + "/banking", "-payments-corporations", demoCorpID,
			"-payments-private-key", paymentsim.PrivateKey, "-payments-public-key", paymentsim.PublicKey,
			"-payments-access-token", paymentsim.AccessToken}, livePollArgs...)...)
		g.SandboxURL = up.URL
		return g
	}
	return replica(link.URL()), replica(ns.ClientURL()), link
}

// holderAndFollower subscribes anna on a, which then holds the lease of
// Demo Trading, and dace, of the same corporation, on b, to every event.
func holderAndFollower(t *testing.T, a, b *testGateway) (annaWS, daceWS *wsClient) {
	t.Helper()
	anna := a.as(a.signInPerson(t, "anna@demo.test"))
	dace := b.as(b.signInPerson(t, "dace@demo.test"))
	annaWS = anna.dialWS(t, nil, nil)
	annaWS.subscribeFromNow(anna, "1", allEvents, nil)
	a.waitMetric(t, "fingraph_live_corporations_polled", equal(1))
	daceWS = dace.dialWS(t, nil, nil)
	daceWS.subscribeFromNow(dace, "1", allEvents, nil)
	b.waitMetric(t, "fingraph_live_subscribers", equal(1))
	return annaWS, daceWS
}

// TestTwoReplicasPollOnceAndHandOverWithoutLossOrRepeat: with subscribers
// of one corporation on two replicas, exactly one replica polls it, and
// each subscriber receives each change once. When the replica holding the
// lease dies (its JetStream connection cut without a word: it can neither
// renew nor hand the lease back), the other takes the lease over once it expires, and
// changes made around the death arrive once each.
func TestTwoReplicasPollOnceAndHandOverWithoutLossOrRepeat(t *testing.T) {
	a, b, link := livePollReplicas(t)
	annaWS, daceWS := holderAndFollower(t, a, b)

	first := a.credit(t, demoEURWalletID, 1111)
	annaGot := annaWS.until("1", balanceEvent(demoEURWalletID, first))
	daceGot := daceWS.until("1", balanceEvent(demoEURWalletID, first))
	if p := b.metric(t, "fingraph_live_polls_total"); p != 0 {
		t.Errorf("the replica without the lease polled %v times", p)
	}
	if p := b.metric(t, "fingraph_live_corporations_polled"); p != 0 {
		t.Errorf("the replica without the lease polls %v corporations", p)
	}

	// A change, then the holder dies: whether or not it announced the
	// change, the new holder's snapshot and the change id make it arrive
	// once.
	second := a.credit(t, demoEURWalletID, 2222)
	died := time.Now()
	link.cut()
	b.waitMetric(t, "fingraph_live_corporations_polled", equal(1))
	t.Logf("the lease was taken over %v after the holder died (interval 1s)", time.Since(died).Round(10*time.Millisecond))
	if n := b.metric(t, "fingraph_live_lease_takeovers_total"); n != 1 {
		t.Errorf("%v lease take-overs on the survivor, want 1", n)
	}
	polls := b.metric(t, "fingraph_live_polls_total")
	b.waitMetric(t, "fingraph_live_polls_total", atLeast(polls+2))
	sentinel := b.credit(t, demoUSDWalletID, 333)
	daceGot = append(daceGot, daceWS.until("1", balanceEvent(demoUSDWalletID, sentinel))...)

	for _, c := range []struct {
		who string
		got []liveEvent
	}{{"anna (replica a)", annaGot}, {"dace (replica b)", daceGot}} {
		if n := count(c.got, balanceEvent(demoEURWalletID, first)); n != 1 {
			t.Errorf("%s received the first change %d times, want once", c.who, n)
		}
	}
	if n := count(daceGot, balanceEvent(demoEURWalletID, second)); n != 1 {
		t.Errorf("the change made as the holder died arrived %d times, want once: %+v", n, daceGot)
	}
	incoming := count(daceGot, func(e liveEvent) bool {
		return e.Event.Name == "WalletTransactionCreated" && e.Event.Payload["wallet_id"] == demoEURWalletID
	})
	if incoming != 2 {
		t.Errorf("%d incoming transfers announced, want 2 (one per credit)", incoming)
	}
}

// TestPollingSwitchesToAnotherSessionWhenOneEnds: the poll runs on the
// oldest subscriber's session; when that person signs out (the session
// ends, its socket is closed), polling goes on with the next subscriber's
// session, and a change still arrives once. When the last one leaves,
// polling stops.
func TestPollingSwitchesToAnotherSessionWhenOneEnds(t *testing.T) {
	g := startGateway(t, livePollArgs...)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	dace := g.as(g.signInPerson(t, "dace@demo.test"))
	annaWS := anna.dialWS(t, nil, nil)
	annaWS.subscribeFromNow(anna, "1", allEvents, nil)
	g.waitMetric(t, "fingraph_live_subscribers", equal(1))
	daceWS := dace.dialWS(t, nil, nil)
	daceWS.subscribeFromNow(dace, "1", allEvents, nil)
	g.waitMetric(t, "fingraph_live_subscribers", equal(2))
	g.waitMetric(t, "fingraph_live_polls_total", atLeast(1))

	anna.query(t, `mutation { signOut }`, nil)
	g.waitMetric(t, "fingraph_live_subscribers", equal(1))
	polls := g.metric(t, "fingraph_live_polls_total")
	balance := g.credit(t, demoEURWalletID, 4321)
	g.waitMetric(t, "fingraph_live_polls_total", atLeast(polls+3))
	sentinel := g.credit(t, demoUSDWalletID, 321)
	got := daceWS.until("1", balanceEvent(demoUSDWalletID, sentinel))
	if n := count(got, balanceEvent(demoEURWalletID, balance)); n != 1 {
		t.Errorf("the credit reached dace %d times after anna signed out, want once", n)
	}

	daceWS.close()
	g.waitMetric(t, "fingraph_live_subscribers", equal(0))
	g.waitMetric(t, "fingraph_live_corporations_polled", equal(0))
}

// TestLeaseIsHandedBackWhenTheLastSubscriberLeaves: when the holder's last
// subscriber of a corporation leaves, it hands the lease back at once, and
// a replica that still has subscribers takes it without waiting for it to
// expire (no take-over counted); changes keep arriving once.
func TestLeaseIsHandedBackWhenTheLastSubscriberLeaves(t *testing.T) {
	a, b, _ := livePollReplicas(t)
	annaWS, daceWS := holderAndFollower(t, a, b)

	annaWS.close()
	a.waitMetric(t, "fingraph_live_corporations_polled", equal(0))
	b.waitMetric(t, "fingraph_live_corporations_polled", equal(1))
	if n := b.metric(t, "fingraph_live_lease_takeovers_total"); n != 0 {
		t.Errorf("the lease was taken over by expiry %v times; it should have been handed back", n)
	}
	balance := b.credit(t, demoEURWalletID, 999)
	polls := b.metric(t, "fingraph_live_polls_total")
	b.waitMetric(t, "fingraph_live_polls_total", atLeast(polls+3))
	sentinel := b.credit(t, demoUSDWalletID, 111)
	got := daceWS.until("1", balanceEvent(demoUSDWalletID, sentinel))
	if n := count(got, balanceEvent(demoEURWalletID, balance)); n != 1 {
		t.Errorf("the credit after the hand-over arrived %d times, want once", n)
	}
}
