package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// Issue 47: every budget is checked before the work it buys, on every
// transport. docs/security.md, "Admission".

// residentBytes is this process's resident memory (the gateway runs in the
// test's process), from /proc/self/status.
func residentBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmRSS in /proc/self/status")
	return 0
}

// goMemory is the memory the Go runtime holds from the system and has not
// given back: resident memory as the runtime sees it, without what the
// race detector adds beside it.
func goMemory() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()) - int64(s[1].Value.Uint64())
}

// peaks samples the process's goroutines and memory (goMemory) until stop
// is called, and returns their highest values.
type peaks struct {
	goroutines atomic.Int64
	resident   atomic.Int64
	stopped    chan struct{}
	done       chan struct{}
}

func samplePeaks(t *testing.T) *peaks {
	p := &peaks{stopped: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			if n := int64(runtime.NumGoroutine()); n > p.goroutines.Load() {
				p.goroutines.Store(n)
			}
			if r := goMemory(); r > p.resident.Load() {
				p.resident.Store(r)
			}
			select {
			case <-p.stopped:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

func (p *peaks) stop() {
	close(p.stopped)
	<-p.done
}

// floodSubscribes opens a websocket of subprotocol, initialises it with an
// empty payload (anonymous), then sends n operations built by msg and
// never reads; it returns how many it sent before the gateway stopped
// taking them.
func floodSubscribes(t *testing.T, g *testGateway, subprotocol string, n int, msg func(i int) []byte) int {
	t.Helper()
	// A small receive buffer: the gateway's answers stop being taken soon
	// after the client stops reading, as over a slow link.
	small := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		_ = rc.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return err
	}}
	d := websocket.Dialer{Subprotocols: []string{subprotocol}, HandshakeTimeout: 5 * time.Second, NetDialContext: small.DialContext}
	conn, resp, err := d.Dial(strings.Replace(g.URL, "http://", "ws://", 1)+"/graphql", nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"connection_init","payload":{}}`)); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		_, b, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for connection_ack: %v", err)
		}
		if bytes.Contains(b, []byte(`"connection_ack"`)) {
			break
		}
	}
	sent := 0
	for i := range n {
		// The deadline only ends the flood once the gateway stops
		// reading; what is asserted is counted.
		_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if err := conn.WriteMessage(websocket.TextMessage, msg(i)); err != nil {
			break
		}
		sent++
	}
	return sent
}

// One anonymous socket that sends 60,000 subscribes and stops reading
// costs the gateway at most 2,000 goroutines and 64 MiB: each subscribe
// takes its place under the per-socket cap as it is read, before any
// goroutine is started for it, and one over the cap is refused from the
// reader, which then waits for the client to read. Both subprotocols.
func TestOneSocketsSubscribesAreCountedBeforeTheyRun(t *testing.T) {
	cases := []struct {
		name, subprotocol, typ string
	}{
		{"graphql-transport-ws", "graphql-transport-ws", "subscribe"},
		{"graphql-ws (legacy)", "graphql-ws", "start"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := startGateway(t)
			runtime.GC()
			goroutines, resident, rss := runtime.NumGoroutine(), goMemory(), residentBytes(t)
			p := samplePeaks(t)
			sent := floodSubscribes(t, g, tc.subprotocol, 60000, func(i int) []byte {
				return fmt.Appendf(nil, `{"id":"%d","type":%q,"payload":{"query":"{ __typename }"}}`, i, tc.typ)
			})
			// What the gateway has read by now is what it has taken; a
			// little longer lets goroutines started for it show.
			time.Sleep(3 * time.Second)
			p.stop()
			addedG := p.goroutines.Load() - int64(goroutines)
			addedM := p.resident.Load() - resident
			t.Logf("%d subscribes sent: goroutines %d -> peak %d (+%d); memory +%d MiB at the peak (resident now +%d MiB)",
				sent, goroutines, p.goroutines.Load(), addedG, addedM>>20, (residentBytes(t)-rss)>>20)
			if addedG > 2000 {
				t.Errorf("one socket's subscribes added %d goroutines, want at most 2,000", addedG)
			}
			if addedM > 64<<20 {
				t.Errorf("one socket's subscribes added %d MiB of resident memory, want at most 64", addedM>>20)
			}
		})
	}
}

// A subscribe over the per-socket cap is refused with an error message for
// its id (RATE_LIMITED), and the socket goes on; an id completed is free
// at once, even when reused in the same breath as its complete, and an
// operation the client completed sends nothing more.
func TestSocketOperationsOverTheCapAndCompletedIDs(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	after := g.cursorNow(t)
	sub := `subscription($after: String) { events(after: $after) { cursor } }`

	// Complete and reuse at once: no 4409, nothing more for the old one.
	ws := g.dialWS(t, nil, nil)
	ws.subscribe("x", sub, map[string]any{"after": after})
	ws.send(wsMessage{ID: "x", Type: "complete"})
	ws.subscribe("x", `{ viewer { kind } }`, nil)
	if r := ws.read(); r.ID != "x" || r.Type != "next" || !strings.Contains(string(r.Payload), "API_CLIENT") {
		t.Fatalf("an id reused right after its complete: %s %s %s", r.ID, r.Type, r.Payload)
	}
	if r := ws.read(); r.ID != "x" || r.Type != "complete" {
		t.Errorf("after the reused id's answer: %s %s %s, want its complete", r.ID, r.Type, r.Payload)
	}

	ws = g.dialWS(t, nil, nil)
	for i := range 51 {
		ws.subscribe(fmt.Sprint(i), sub, map[string]any{"after": after})
	}
	m := ws.read()
	if m.Type != "error" || m.ID != "50" || !strings.Contains(string(m.Payload), "RATE_LIMITED") {
		t.Errorf("the 51st operation on one connection: %s %s %s, want error RATE_LIMITED for 50", m.ID, m.Type, m.Payload)
	}
	// Nothing more for operations the client completed.
	for i := range 50 {
		ws.send(wsMessage{ID: fmt.Sprint(i), Type: "complete"})
	}
	ws.subscribe("last", `{ viewer { kind } }`, nil)
	for {
		r := ws.read()
		if r.ID == "last" {
			break
		}
		t.Errorf("a message for an operation the client completed: %s %s %s", r.ID, r.Type, r.Payload)
	}
}

// 500 event-stream and multipart-subscription requests over the caps, each
// with an unfinished body: the refused ones are answered and their
// connections closed, so the descriptors come back. Left alone, net/http
// would read the rest of each body after the answer, with no deadline.
func TestRefusedStreamsCloseTheirConnections(t *testing.T) {
	// The admitted streams wait for their bodies 3 s, not 30: they are
	// under the bound either way, and the test ends sooner.
	g := startGateway(t, "-read-timeout", "3s")
	addr := strings.TrimPrefix(g.URL, "http://")
	runtime.GC()
	before := openFiles(t)
	var answered atomic.Int32
	var wg sync.WaitGroup
	for i := range 500 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		accept := "text/event-stream"
		if i%2 == 1 {
			accept = "multipart/mixed;subscriptionSpec=1.0, application/json"
		}
		fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: gateway\r\nAccept: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"query\":", accept)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			// The client closes its end when the gateway closes its own.
			_ = conn.SetReadDeadline(time.Now().Add(40 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err == nil {
				if resp.StatusCode == http.StatusTooManyRequests {
					answered.Add(1)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
			}
			_, _ = io.Copy(io.Discard, conn)
		}()
	}
	t.Cleanup(wg.Wait)
	deadline := time.Now().Add(10 * time.Second)
	held := openFiles(t) - before
	for held > 250 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		held = openFiles(t) - before
	}
	t.Logf("descriptors: %d more than before 500 unfinished streams; %d refusals answered", held, answered.Load())
	if held > 250 {
		t.Errorf("%d descriptors still held 10 s after 500 unfinished streams, want at most 250", held)
	}
	if answered.Load() == 0 {
		t.Error("no stream over the caps was answered 429")
	}
}

// With 200 anonymous websockets held from one address, a signed-in
// person's websocket from that address is accepted: anonymous connections
// have a smaller budget of their own, and a socket that signs in at
// connection_init moves to a signed-in place.
func TestAnonymousSocketsLeaveSignedInPlaces(t *testing.T) {
	g := startGateway(t)
	token := g.signInAPI(t)
	var refused, atUpgrade int
	for range 200 {
		c, err := g.tryDialWS(nil)
		if err != nil {
			refused++
			atUpgrade++
			continue
		}
		c.t = t
		t.Cleanup(c.close)
		c.send(wsMessage{Type: "connection_init", Payload: []byte(`{}`)})
		_ = c.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		var m wsMessage
		if err := c.conn.ReadJSON(&m); err != nil || m.Type != "connection_ack" {
			refused++
		}
	}
	t.Logf("200 anonymous websockets from one address: %d refused, %d of them at the upgrade", refused, atUpgrade)
	if refused == 0 {
		t.Error("200 anonymous websockets from one address were all accepted; want a smaller anonymous budget")
	}
	// Token in connection_init, as graphql-ws clients send it.
	ws := g.as(token).dialWS(t, nil, nil)
	ws.subscribe("me", `{ viewer { kind } }`, nil)
	if m := ws.read(); m.Type != "next" || !strings.Contains(string(m.Payload), "API_CLIENT") {
		t.Errorf("the signed-in socket's query: %s %s", m.Type, m.Payload)
	}
	// With the pending places held too (sockets that never send
	// connection_init), a session presented at the upgrade (Authorization,
	// as a mobile client can send it; a browser's cookie) still finds its
	// place.
	for range 64 {
		if c, err := g.tryDialWS(nil); err == nil {
			t.Cleanup(c.close)
		}
	}
	h := http.Header{"Authorization": {"Bearer " + token}}
	g.as(token).dialWS(t, h, nil)
}

// liveCreditCost holds n live queries of liveWallets (50 per socket, each
// socket its own session), then credits the demo USD wallet every 100 ms
// for 5 s outside the gateway, and returns the banking calls made from the
// first credit until every query has answered the last balance.
func liveCreditCost(t *testing.T, g *testGateway, n int) int {
	t.Helper()
	type op struct {
		ws *wsClient
		id string
	}
	var ops []op
	for len(ops) < n {
		ws := g.as(g.signInAPI(t)).dialWS(t, nil, nil)
		for i := 0; i < 50 && len(ops) < n; i++ {
			id := fmt.Sprint("live", i)
			ws.subscribe(id, liveWallets, nil)
			ops = append(ops, op{ws, id})
		}
	}
	// First answers, in any order of a socket's queries.
	firsts := map[*wsClient]int{}
	for _, o := range ops {
		firsts[o.ws]++
	}
	for ws, n := range firsts {
		for range n {
			if m, ok := ws.readWithin(30 * time.Second); !ok || m.Type != "next" {
				t.Fatalf("first live answer: %v %s %s", ok, m.Type, m.Payload)
			}
		}
	}
	g.waitMetric(t, "fingraph_live_corporations_polled", atLeast(1))
	g.waitMetric(t, "fingraph_live_polls_total", atLeast(1))
	g.resetStats(t)
	var last int64
	for range 50 {
		last = g.credit(t, demoUSDWalletID, 100)
		time.Sleep(100 * time.Millisecond)
	}
	// Every query reaches the last balance (answers on one socket come in
	// any order of its queries).
	bySocket := map[*wsClient]map[string]bool{}
	for _, o := range ops {
		if bySocket[o.ws] == nil {
			bySocket[o.ws] = map[string]bool{}
		}
		bySocket[o.ws][o.id] = false
	}
	for ws, ids := range bySocket {
		for reached := 0; reached < len(ids); {
			m, ok := ws.readWithin(30 * time.Second)
			if !ok {
				t.Fatalf("%d live queries of a socket never reached the last balance %d", len(ids)-reached, last)
			}
			var p struct {
				Data liveWalletsData `json:"data"`
			}
			if m.Type != "next" || json.Unmarshal(m.Payload, &p) != nil {
				t.Fatalf("live answer: %s %s %s", m.ID, m.Type, m.Payload)
			}
			if !ids[m.ID] && p.Data.balance(t, bankingsim.DemoCorporationID, demoUSDWalletID) == last {
				ids[m.ID] = true
				reached++
			}
		}
	}
	calls := g.stats(t).Total
	for ws := range bySocket {
		ws.close()
	}
	return calls
}

// 100 identical live queries of one caller on a wallet credited every
// 100 ms for 5 s cost at most 3x the banking calls of one: their re-runs
// are shared (livequery.Caller.Share), one per change, coalesced. (Two
// sessions hold the 100, 50 each: the per-session cap of live queries;
// queries share within one session.)
func TestIdenticalLiveQueriesShareTheirRuns(t *testing.T) {
	g := startGateway(t, livePollArgs...)
	one := liveCreditCost(t, g, 1)
	hundred := liveCreditCost(t, g, 100)
	t.Logf("banking calls while crediting: one live query %d, 100 live queries %d (%.1fx)", one, hundred, float64(hundred)/float64(max(one, 1)))
	if hundred > 3*one {
		t.Errorf("100 live queries cost %d banking calls, one %d: want at most 3x", hundred, one)
	}
}

// One corporation's uploads, from several sessions, take at most its
// share of the replica's upload places (uploadsPerTenant), so another
// corporation's upload finds a place.
func TestOneCorporationsUploadsLeaveOthersPlaces(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, "-upload-dir", dir, "-limits", "uploadsPerTenant=2,uploadsPerAddress=10,uploads=3")
	anna1 := g.signInPerson(t, bankingsim.AnnaEmail)
	anna2 := g.signInPerson(t, bankingsim.AnnaEmail)
	ben := g.signInPerson(t, bankingsim.BenEmail)
	a1, a2 := g.holdUpload(t, anna1, 3<<20), g.holdUpload(t, anna2, 3<<20)
	waitFor(t, "Anna's two uploads spooled", func() bool { n, _ := spooled(t, dir); return n == 2 })
	a3 := g.holdUpload(t, anna2, 3<<20)
	if a := awaitAnswer(t, a3, dir); a.status != http.StatusTooManyRequests || a.code != "RATE_LIMITED" {
		t.Errorf("the corporation's third upload: %d %q %v, want 429 RATE_LIMITED", a.status, a.code, a.err)
	}
	b1 := g.holdUpload(t, ben, 3<<20)
	waitFor(t, "Ben's upload spooled beside Anna's", func() bool { n, _ := spooled(t, dir); return n == 3 })
	for _, h := range []*heldUpload{a1, a2, b1} {
		h.abort()
	}
	waitFor(t, "the uploads' files removed", func() bool { n, _ := spooled(t, dir); return n == 0 })
}

// A client that churns (2,000 subscribes, each completed at once, ids
// reused) gets nothing for the operations it completed, only refusals of
// subscribes while the cap's places wind down, and costs no warning in the
// log.
func TestAChurningClientGetsNothingForWhatItCompleted(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	ws := g.dialWS(t, nil, nil)
	after := g.cursorNow(t)
	sub := `subscription($after: String) { events(after: $after) { cursor } }`
	warns := func() int { return strings.Count(g.Logs.String(), `"level":"WARN"`) }
	before := warns()
	for i := range 2000 {
		id := fmt.Sprint(i % 40)
		ws.subscribe(id, sub, map[string]any{"after": after})
		ws.send(wsMessage{ID: id, Type: "complete"})
	}
	ws.subscribe("last", `{ viewer { kind } }`, nil)
	refused := 0
	for {
		m := ws.read()
		if m.ID == "last" {
			break
		}
		if m.Type != "error" || !strings.Contains(string(m.Payload), "RATE_LIMITED") {
			t.Errorf("a message for a completed operation: %s %s %s", m.ID, m.Type, m.Payload)
			continue
		}
		refused++
	}
	t.Logf("2,000 subscribes completed at once: %d refused while places wound down", refused)
	if n := warns() - before; n > 0 {
		t.Errorf("%d WARN lines for one churning client, want 0", n)
	}
}
