package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fingraph/fingraph/app"
	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/paymentsfeed"
	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// natsCluster is a JetStream cluster of in-process NATS servers on
// loopback, whose nodes a test stops and starts again on the same ports and
// storage, as an operator would lose and bring back a machine.
type natsCluster struct {
	t     *testing.T
	opts  []*natsserver.Options
	nodes []*natsserver.Server
}

// freePorts returns n loopback ports free now.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

func startNATSCluster(t *testing.T, n int) *natsCluster {
	t.Helper()
	ports := freePorts(t, 2*n)
	var routes []string
	for i := range n {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[n+i]))
	}
	c := &natsCluster{t: t, nodes: make([]*natsserver.Server, n)}
	for i := range n {
		c.opts = append(c.opts, &natsserver.Options{
			ServerName: fmt.Sprintf("node-%d", i), Host: "127.0.0.1", Port: ports[i],
			JetStream: true, StoreDir: t.TempDir(),
			Cluster: natsserver.ClusterOpts{Name: "fingraph-test", Host: "127.0.0.1", Port: ports[n+i]},
			Routes:  natsserver.RoutesFromStr(strings.Join(routes, ",")),
			NoSigs:  true, NoLog: true,
		})
		c.start(i)
	}
	t.Cleanup(func() {
		for i := range c.nodes {
			c.stop(i)
		}
	})
	// Ready when the cluster has a JetStream meta leader.
	c.waitFor("a JetStream meta leader", func(js jetstream.JetStream) bool {
		_, err := js.AccountInfo(context.Background())
		return err == nil
	})
	return c
}

func (c *natsCluster) start(i int) {
	c.t.Helper()
	ns, err := natsserver.NewServer(c.opts[i])
	if err != nil {
		c.t.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		c.t.Fatalf("NATS node %d did not start", i)
	}
	c.nodes[i] = ns
}

func (c *natsCluster) stop(i int) {
	if c.nodes[i] != nil {
		c.nodes[i].Shutdown()
		c.nodes[i].WaitForShutdown()
		c.nodes[i] = nil
	}
}

// URL names every node, as a deployment gives FINGRAPH_NATS_URL.
func (c *natsCluster) URL() string {
	var urls []string
	for _, o := range c.opts {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", o.Port))
	}
	return strings.Join(urls, ",")
}

// js connects to the cluster for the test's own look-ups.
func (c *natsCluster) js() (jetstream.JetStream, func()) {
	c.t.Helper()
	nc, err := nats.Connect(c.URL(), nats.MaxReconnects(-1))
	if err != nil {
		c.t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		c.t.Fatal(err)
	}
	return js, nc.Close
}

func (c *natsCluster) waitFor(what string, ok func(jetstream.JetStream) bool) {
	c.t.Helper()
	js, done := c.js()
	defer done()
	deadline := time.Now().Add(30 * time.Second)
	for !ok(js) {
		if time.Now().After(deadline) {
			c.t.Fatalf("the NATS cluster never had %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// leaderOf is the index of the node leading stream.
func (c *natsCluster) leaderOf(stream string) int {
	c.t.Helper()
	js, done := c.js()
	defer done()
	s, err := js.Stream(context.Background(), stream)
	if err != nil {
		c.t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil || info.Cluster == nil {
		c.t.Fatalf("stream %s: %v", stream, err)
	}
	if info.Config.Replicas != 3 {
		c.t.Errorf("stream %s has %d copies, want 3 (FINGRAPH_NATS_REPLICAS)", stream, info.Config.Replicas)
	}
	for i, o := range c.opts {
		if o.ServerName == info.Cluster.Leader {
			return i
		}
	}
	c.t.Fatalf("stream %s is led by %q, not a node of the test", stream, info.Cluster.Leader)
	return -1
}

// storedSeq finds the payments event id in the EVENTS stream: whether a
// subscriber's missing event was ever stored (lost before the stream) or
// is there and undelivered.
func (c *natsCluster) storedSeq(id string) (uint64, bool) {
	js, done := c.js()
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cons, err := js.OrderedConsumer(ctx, events.EventsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"fingraph.events.payments.>"}})
	if err != nil {
		return 0, false
	}
	for {
		batch, err := cons.FetchNoWait(100)
		if err != nil {
			return 0, false
		}
		n := 0
		for m := range batch.Messages() {
			n++
			var e events.Event
			if json.Unmarshal(m.Data(), &e) == nil && e.ID == id {
				md, _ := m.Metadata()
				return md.Sequence.Stream, true
			}
		}
		if n == 0 {
			return 0, false
		}
	}
}

// resumingSubscriber is a dashboard's live feed: graphql-transport-ws on
// a real websocket, which, whenever its socket or subscription ends,
// subscribes again after the last cursor it received, as the docs tell
// clients to. It counts what it receives per event id.
type resumingSubscriber struct {
	g     *testGateway
	mu    sync.Mutex
	after string
	seen  map[string]int
	// at is when each event first arrived, to tell a late event from a
	// lost one.
	at     map[string]time.Time
	stop   chan struct{}
	done   chan struct{}
	resume int
}

func subscribeResuming(t *testing.T, g *testGateway, after string) *resumingSubscriber {
	s := &resumingSubscriber{g: g, after: after, seen: map[string]int{}, at: map[string]time.Time{}, stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	t.Cleanup(func() { close(s.stop); <-s.done })
	return s
}

func (s *resumingSubscriber) run() {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		s.once()
		select {
		case <-s.stop:
			return
		case <-time.After(200 * time.Millisecond):
		}
		s.mu.Lock()
		s.resume++
		s.mu.Unlock()
	}
}

// once runs one socket until it ends.
func (s *resumingSubscriber) once() {
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 5 * time.Second}
	conn, resp, err := d.Dial(strings.Replace(s.g.URL, "http://", "ws://", 1)+"/graphql", nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return
	}
	defer conn.Close()
	go func() { <-s.stop; conn.Close() }()
	init, _ := json.Marshal(map[string]any{"sessionToken": s.g.bearer})
	if conn.WriteJSON(wsMessage{Type: "connection_init", Payload: init}) != nil {
		return
	}
	var ack wsMessage
	if conn.ReadJSON(&ack) != nil || ack.Type != "connection_ack" {
		return
	}
	s.mu.Lock()
	vars := map[string]any{"after": s.after}
	s.mu.Unlock()
	p, _ := json.Marshal(map[string]any{"query": `subscription($after: String) { events(names: ["OrderCreated"], after: $after) { cursor event { upstreamId } } }`, "variables": vars})
	if conn.WriteJSON(wsMessage{ID: "1", Type: "subscribe", Payload: p}) != nil {
		return
	}
	for {
		var m wsMessage
		if err := conn.ReadJSON(&m); err != nil {
			return
		}
		switch m.Type {
		case "ping":
			_ = conn.WriteJSON(wsMessage{Type: "pong"})
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
				return // an error: resume
			}
			s.mu.Lock()
			id := p.Data.Events.Event.UpstreamID
			if s.seen[id]++; s.seen[id] == 1 {
				s.at[id] = time.Now()
			}
			s.after = p.Data.Events.Cursor
			s.mu.Unlock()
		case "error", "complete":
			return
		}
	}
}

// received is how many distinct events s has received.
func (s *resumingSubscriber) received() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

func (s *resumingSubscriber) count(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[id]
}

// TestClusterLosesANodeWithoutLoss runs two gateway replicas on a
// three-node JetStream cluster with three copies of every stream and
// bucket, and stops the node that leads the event stream in the middle of
// a webhook burst, with live subscribers on both replicas and sign-ins and
// idempotent orders running. Nothing is lost or duplicated for any
// subscriber; sessions and idempotency keys survive; readiness follows the
// quorum: a second node lost takes both replicas out of rotation, and a node
// back puts them in again.
func TestClusterLosesANodeWithoutLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a three-node NATS cluster")
	}
	began := time.Now()
	cluster := startNATSCluster(t, 3)
	sb := sandbox.New(sandbox.Config{RetryUnit: 100 * time.Millisecond})
	sb.Seed()
	up := httptest.NewServer(validated(t, sb))
	t.Cleanup(func() { up.Close(); sb.Close() })
	replica := func() *testGateway {
		g := startGateway(t, "-nats-url", cluster.URL(), "-nats-replicas", "3",
			"-payments-url", up.URL+"/payments", "-banking-url", up.URL+"/banking", "-payments-corporations", demoCorpID,
			"-payments-private-key", paymentsim.PrivateKey, "-payments-public-key", paymentsim.PublicKey,
			"-payments-access-token", paymentsim.AccessToken,
			// The poller restores what a webhook could not deliver while
			// the cluster elected a leader.
			"-reconcile-interval", "500ms")
		g.SandboxURL = up.URL
		return g
	}
	// A gateway of an earlier deployment made every stream and bucket
	// with one copy; the replicas below raise them to three at start.
	if err := startErr(t, "-nats-url", cluster.URL(), "-payments-url", up.URL+"/payments", "-banking-url", up.URL+"/banking",
		"-payments-private-key", paymentsim.PrivateKey, "-payments-public-key", paymentsim.PublicKey,
		"-payments-access-token", paymentsim.AccessToken); err != nil {
		t.Fatalf("a gateway with one copy: %v", err)
	}
	a, b := replica(), replica()
	cluster.waitFor("three copies of every stream and bucket", func(js jetstream.JetStream) bool {
		for name := range js.StreamNames(context.Background()).Name() {
			s, err := js.Stream(context.Background(), name)
			if err != nil {
				return false
			}
			if info, err := s.Info(context.Background()); err != nil || info.Config.Replicas != 3 {
				return false
			}
		}
		return true
	})
	token := a.signInAPI(t)
	a, b = a.as(token), b.as(token)

	// Replica A is the company's webhook receiver.
	registerWebhook(t, up.URL, a.URL)

	// One idempotent order before the loss.
	key := uniq("cluster-")
	order := func(g *testGateway) orderResult {
		return createOrder(t, g, map[string]any{"idempotencyKey": key, "currency": "EUR", "items": map[string]any{"amount": 700},
			"payment": map[string]any{"card": map[string]any{"token": "tok_ok_cluster"}}})
	}
	first := order(a)

	start := a.cursorNow(t)
	subs := []*resumingSubscriber{subscribeResuming(t, a, start), subscribeResuming(t, b, start)}

	var fired []string
	firedAt := map[string]time.Time{}
	var firedMu sync.Mutex
	trigger := func(n int) {
		for range n {
			var ev sandboxEvent
			a.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "OrderCreated"}, &ev)
			firedMu.Lock()
			fired = append(fired, ev.ID)
			firedAt[ev.ID] = time.Now()
			firedMu.Unlock()
		}
	}
	// Sign-ins keep running on both replicas throughout. One may wait out
	// the election of a new leader, longer on a busy machine; each must be
	// answered within the operation timeout (30 s), never left hanging.
	stopSignIns := make(chan struct{})
	var signIns sync.WaitGroup
	var signedIn, unanswered atomic.Int64
	signer := &http.Client{Timeout: 40 * time.Second}
	signIns.Add(1)
	go func() {
		defer signIns.Done()
		body := []byte(`{"query":"mutation { signIn(input: {kind: API_KEY, apiKey: \"demo-api-key\"}) { __typename } }"}`)
		for i := 0; ; i++ {
			select {
			case <-stopSignIns:
				return
			case <-time.After(50 * time.Millisecond):
			}
			g := a
			if i%2 == 1 {
				g = b
			}
			resp, err := signer.Post(g.URL+"/graphql", "application/json", bytes.NewReader(body))
			if err != nil {
				unanswered.Add(1)
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			signedIn.Add(1)
		}
	}()

	trigger(20)
	leader := cluster.leaderOf("EVENTS")
	cluster.stop(leader)
	t.Logf("stopped node-%d, the EVENTS stream's leader", leader)
	trigger(20)

	// Two of three: a quorum remains, so both replicas stay ready.
	cluster.waitFor("a new EVENTS leader", func(js jetstream.JetStream) bool {
		s, err := js.Stream(context.Background(), "EVENTS")
		if err != nil {
			return false
		}
		info, err := s.Info(context.Background())
		return err == nil && info.Cluster != nil && info.Cluster.Leader != ""
	})
	trigger(20)
	t.Logf("%v: 60 events fired", time.Since(began).Round(time.Millisecond))

	// Every event reaches every subscriber once. Events come late by the
	// election of a new leader, and more on a busy machine; what must not
	// happen is that a subscriber stops receiving while events are
	// missing: the wait fails when 40 s pass without a new event for the
	// subscriber waited for, and then says whether the missing event is
	// in the stream (late) or not (lost before it).
	for _, id := range fired {
		for i, s := range subs {
			had, deadline := s.received(), time.Now().Add(40*time.Second)
			for s.count(id) == 0 {
				if n := s.received(); n > had {
					had, deadline = n, time.Now().Add(40*time.Second)
				}
				if time.Now().After(deadline) {
					seq, stored := cluster.storedSeq(id)
					s.mu.Lock()
					t.Fatalf("subscriber %d never received %s (in EVENTS: %v at %d; %d events received, %d resumes)", i, id, stored, seq, len(s.seen), s.resume)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	t.Logf("%v: every subscriber has every event", time.Since(began).Round(time.Millisecond))
	close(stopSignIns)
	signIns.Wait()
	if n := unanswered.Load(); n > 0 {
		t.Errorf("%d sign-ins during the loss had no answer within 40 s (%d answered)", n, signedIn.Load())
	}
	for i, s := range subs {
		s.mu.Lock()
		for id, n := range s.seen {
			if n != 1 {
				t.Errorf("subscriber %d received %s %d times", i, id, n)
			}
		}
		var late time.Duration
		var lateID string
		for id, at := range s.at {
			fired, ok := firedAt[id]
			if !ok {
				continue // the order's own event, made before the loss
			}
			if d := at.Sub(fired); d > late {
				late, lateID = d, id
			}
		}
		t.Logf("subscriber %d: %d events, %d resumes; the latest arrived %v after it was fired (%s)", i, len(s.seen), s.resume, late.Round(time.Millisecond), lateID)
		s.mu.Unlock()
	}

	// The session from before the loss still works on both replicas, and
	// the idempotency key answers its first order.
	for _, g := range []*testGateway{a, b} {
		var v struct {
			Viewer struct{ Kind string } `json:"viewer"`
		}
		g.query(t, `{ viewer { kind } }`, nil).decode(t, &v)
		if v.Viewer.Kind != "API_CLIENT" {
			t.Errorf("the session from before the loss: %+v", v)
		}
		if again := order(g); again.ID != first.ID {
			t.Errorf("the idempotency key answered %+v after the loss, first %+v", again, first)
		}
	}

	// A second node lost: no quorum, and both replicas leave rotation.
	second := (leader + 1) % 3
	cluster.stop(second)
	waitReady(t, a, false)
	waitReady(t, b, false)
	t.Logf("%v: both replicas not ready without a quorum", time.Since(began).Round(time.Millisecond))
	// A node back: quorum again, and both return.
	cluster.start(leader)
	waitReady(t, a, true)
	waitReady(t, b, true)
	t.Logf("%v: both ready again", time.Since(began).Round(time.Millisecond))
}

// TestMoreCopiesThanServersIsRefusedInOneLine: three copies asked of a
// NATS server that is not a cluster stop start-up with a line that names
// the setting.
func TestMoreCopiesThanServersIsRefusedInOneLine(t *testing.T) {
	err := startErr(t, "-nats-url", startNATS(t).ClientURL(), "-nats-replicas", "3")
	if err == nil || !strings.Contains(err.Error(), "FINGRAPH_NATS_REPLICAS") || !strings.Contains(err.Error(), "at least 3 JetStream servers") {
		t.Fatalf("three copies on one server: %v", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("not one line: %q", err)
	}
}

// waitReady polls /readyz until it says ready (or not).
func waitReady(t *testing.T, g *testGateway, want bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(g.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if (resp.StatusCode == http.StatusOK) == want {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/readyz never became ready=%v", g.URL, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDrainTakesTheReplicaOutOfRotationBeforeItStops: with
// FINGRAPH_SHUTDOWN_DRAIN, a stopping gateway answers /readyz with 503
// while it still answers queries, so that a load balancer's health check
// moves traffic away before the listener closes.
func TestDrainTakesTheReplicaOutOfRotationBeforeItStops(t *testing.T) {
	addr := freeAddr(t)
	env := map[string]string{
		"FINGRAPH_ADDR": addr, "FINGRAPH_SANDBOX_ADDR": "127.0.0.1:0", "FINGRAPH_DATA_DIR": t.TempDir(),
		"FINGRAPH_SHUTDOWN_DRAIN": "2s", "FINGRAPH_REGISTER_WEBHOOK": "false",
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, []string{"fingraph"}, func(k string) string { return env[k] }, io.Discard)
	}()
	g := &testGateway{URL: "http://" + addr, http: &http.Client{Timeout: 5 * time.Second}}
	waitReady(t, g, true)
	cancel()
	waitReady(t, g, false)
	// Draining, and still serving.
	var v struct {
		Customers []struct{ ID string } `json:"customers"`
	}
	g.query(t, `{ customers { id } }`, nil).decode(t, &v)
	if len(v.Customers) == 0 {
		t.Fatal("a draining gateway did not answer the query")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the gateway did not stop after draining")
	}
}

// TestEveryStreamAndBucketIsRaisedFromOneCopyToThree follows the README's
// Deploy section: a gateway that kept one copy of every stream and bucket on
// a cluster stops, and one that keeps three starts on the same cluster. It
// starts, and by then every stream and bucket the first one made has three
// copies and a leader, so that the gateway's first writes (the event
// reconciler's mark, a sign-in) are answered. JetStream answers a raise from
// one copy before the new copies have elected their leader, and a write
// sent before then goes unanswered.
func TestEveryStreamAndBucketIsRaisedFromOneCopyToThree(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a three-node NATS cluster")
	}
	cluster := startNATSCluster(t, 3)
	sb := sandbox.New(sandbox.Config{})
	sb.Seed()
	up := httptest.NewServer(validated(t, sb))
	t.Cleanup(func() { up.Close(); sb.Close() })
	upstream := []string{"-nats-url", cluster.URL(), "-payments-url", up.URL + "/payments", "-banking-url", up.URL + "/banking",
		"-payments-private-key", paymentsim.PrivateKey, "-payments-public-key", paymentsim.PublicKey,
		"-payments-access-token", paymentsim.AccessToken, "-reconcile-interval", "500ms"}

	cfg, err := app.ParseConfig(append([]string{"-addr", "127.0.0.1:0", "-data-dir", t.TempDir(), "-register-webhook", "false"}, upstream...),
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	one, err := app.Start(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("a gateway with one copy: %v", err)
	}
	if err := one.Shutdown(); err != nil {
		t.Fatalf("stopping the gateway with one copy: %v", err)
	}
	js, done := cluster.js()
	defer done()
	names := func() []string {
		var names []string
		for name := range js.StreamNames(ctx).Name() {
			names = append(names, name)
		}
		slices.Sort(names)
		return names
	}
	made := names()
	for _, name := range made {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if n := s.CachedInfo().Config.Replicas; n != 1 {
			t.Fatalf("the first gateway made %s with %d copies, want 1", name, n)
		}
	}

	g := startGateway(t, append(upstream, "-nats-replicas", "3")...)
	g.SandboxURL = up.URL
	if got := names(); !slices.Equal(got, made) {
		t.Errorf("streams after the raise %v, want those the first gateway made %v", got, made)
	}
	for _, name := range made {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, leader := s.CachedInfo(), ""
		if info.Cluster != nil {
			leader = info.Cluster.Leader
		}
		if info.Config.Replicas != 3 || leader == "" {
			t.Errorf("%s when the gateway has started: %d copies, leader %q; want 3 copies and a leader", name, info.Config.Replicas, leader)
		}
	}
	g.signInAPI(t)
}

// TestTwoReplicasStartTogetherOnAFreshCluster: two gateways that start at
// the same moment on a new cluster create the same three-copy streams and
// buckets at once: JetStream may answer neither request in time, or refuse
// one create for the other's, and both must still start.
func TestTwoReplicasStartTogetherOnAFreshCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a three-node NATS cluster")
	}
	cluster := startNATSCluster(t, 3)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			e, err := engine.Open(context.Background(), engine.Config{URL: cluster.URL(), Replicas: 3})
			if err != nil {
				errs <- err
				return
			}
			defer e.Close()
			if _, err := e.KeyValue(context.Background(), "sessions", time.Hour); err != nil {
				errs <- err
				return
			}
			errs <- e.Create(context.Background(), "event streams", func(ctx context.Context) error {
				if _, err := events.NewBus(ctx, e.JetStream(), events.WithReplicas(3)); err != nil {
					return err
				}
				_, err := paymentsfeed.NewQueue(ctx, e.JetStream(), paymentsfeed.WithReplicas(3))
				return err
			})
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("a replica starting beside another: %v", err)
		}
	}
}
