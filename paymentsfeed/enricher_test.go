package paymentsfeed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/paymentsfeed"
	"github.com/fingraph/fingraph/upstream/payments"
	"github.com/fingraph/fingraph/upstream/sandbox"
)

// enrichRig is a webhook intake and an enricher over an embedded JetStream
// and the sandbox on a real HTTP listener, with the sandbox's event reads
// (GET /payments/v?/events/{id}) counted in flight and, while held is
// open, held back until the test releases them.
type enrichRig struct {
	t        *testing.T
	bus      *events.Bus
	queue    *paymentsfeed.Queue
	eng      *engine.Engine
	intake   *paymentsfeed.Intake
	sandbox  *httptest.Server
	client   *payments.Client
	inFlight atomic.Int64
	maxSeen  atomic.Int64
	reads    atomic.Int64

	mu   sync.Mutex
	held chan struct{} // closed: reads pass
}

func newEnrichRig(t *testing.T) *enrichRig {
	t.Helper()
	ctx := context.Background()
	e, bus, q := openFeed(ctx, t)
	r := &enrichRig{t: t, bus: bus, queue: q, eng: e, held: make(chan struct{})}
	sb := sandbox.New(sandbox.Config{})
	sb.Seed()
	t.Cleanup(sb.Close)
	r.sandbox = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/events/") {
			n := r.inFlight.Add(1)
			for m := r.maxSeen.Load(); n > m && !r.maxSeen.CompareAndSwap(m, n); m = r.maxSeen.Load() {
			}
			r.reads.Add(1)
			r.mu.Lock()
			held := r.held
			r.mu.Unlock()
			<-held
			defer r.inFlight.Add(-1)
		}
		sb.ServeHTTP(w, req)
	}))
	t.Cleanup(r.sandbox.Close)
	t.Cleanup(r.release) // a failed test must not leave the sandbox's handlers blocked
	var err error
	r.client, err = payments.NewClient(r.sandbox.URL+"/payments", payments.Keys{
		Public: "pk_sandbox_demo", Private: "sk_sandbox_demo", AccessToken: "at_sandbox_demo",
	})
	if err != nil {
		t.Fatal(err)
	}
	r.intake = &paymentsfeed.Intake{Queue: q, Logger: slog.New(slog.DiscardHandler), PerSecond: 1e9, Burst: 1e9}
	return r
}

// release lets every held and future event read through.
func (r *enrichRig) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.held:
	default:
		close(r.held)
	}
}

// start runs en (its queue, bus, upstream services and logger filled in)
// until the test ends.
func (r *enrichRig) start(en *paymentsfeed.Enricher) {
	r.t.Helper()
	en.Queue, en.Bus, en.Logger = r.queue, r.bus, slog.New(slog.DiscardHandler)
	en.Events, en.PendingActions, en.Breaker = r.client.Events, r.client.PendingActions, r.client
	if err := en.Start(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	// Released first: Stop waits for the reads in hand.
	r.t.Cleanup(func() { r.release(); en.Stop() })
}

// fire makes n real events in the sandbox and returns their webhook bodies.
func (r *enrichRig) fire(n int) [][]byte {
	r.t.Helper()
	bodies := make([][]byte, n)
	for i := range bodies {
		resp, err := http.Post(r.sandbox.URL+"/_sandbox/trigger", "application/json", strings.NewReader(`{"name":"OrderCreated"}`))
		if err != nil {
			r.t.Fatal(err)
		}
		var ev struct {
			ID        string `json:"id"`
			Name      string `json:"name"`
			CreatedAt string `json:"created_at"`
		}
		err = json.NewDecoder(resp.Body).Decode(&ev)
		resp.Body.Close()
		if err != nil || ev.ID == "" {
			r.t.Fatalf("trigger: status %d, %v", resp.StatusCode, err)
		}
		bodies[i], _ = json.Marshal(map[string]string{"id": ev.ID, "name": ev.Name, "createdAt": ev.CreatedAt})
	}
	return bodies
}

// post hands each body to the intake from conc senders at once; every one
// must be acknowledged.
func (r *enrichRig) post(bodies [][]byte, conc int) {
	r.t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, conc)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(bodies)); i = next.Add(1) - 1 {
				req := httptest.NewRequest(http.MethodPost, "/webhooks/payments", strings.NewReader(string(bodies[i])))
				req.RemoteAddr = "192.0.2.1:4000"
				w := httptest.NewRecorder()
				r.intake.ServeHTTP(w, req)
				if w.Code != http.StatusAccepted {
					errs <- fmt.Errorf("webhook %d: status %d", i, w.Code)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		r.t.Fatal(err)
	}
}

// stored counts the messages of a stream.
func (r *enrichRig) stored(name string) uint64 {
	r.t.Helper()
	st, err := r.eng.JetStream().Stream(context.Background(), name)
	if err != nil {
		r.t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	return info.State.Msgs
}

// waitFor polls cond until it holds or the deadline passes; what is
// awaited is a count, the deadline only ends a broken run.
func (r *enrichRig) waitFor(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkWidth holds the event reads, posts webhooks, and checks that the
// reads in flight reach want and no more (the held reads cannot finish, so
// an enricher past its bound would start another), then releases them and
// checks that every event is published once, read once, and the work
// queue is empty.
func checkWidth(t *testing.T, r *enrichRig, n, want int) {
	bodies := r.fire(n)
	r.post(bodies, 4)
	r.waitFor(fmt.Sprintf("%d reads in flight", want), func() bool { return r.inFlight.Load() >= int64(want) })
	time.Sleep(200 * time.Millisecond) // room for a read past the bound to show
	if got := r.maxSeen.Load(); got != int64(want) {
		t.Fatalf("event reads in flight: at most %d seen, want %d", got, want)
	}
	r.release()
	r.waitFor(fmt.Sprintf("%d events on %s", n, events.EventsStream), func() bool { return r.stored(events.EventsStream) >= uint64(n) })
	r.waitFor("an empty "+paymentsfeed.WebhooksStream, func() bool { return r.stored(paymentsfeed.WebhooksStream) == 0 })
	if got := r.stored(events.EventsStream); got != uint64(n) {
		t.Errorf("%s holds %d events, want %d", events.EventsStream, got, n)
	}
	if got := r.reads.Load(); got != int64(n) {
		t.Errorf("%d upstream event reads for %d webhooks", got, n)
	}
}

// The enricher reads at most Workers events from the upstream at once, and
// reaches that width when there is work.
func TestEnricherBoundsUpstreamReads(t *testing.T) {
	r := newEnrichRig(t)
	r.start(&paymentsfeed.Enricher{Workers: 4, BusyWorkers: 4})
	checkWidth(t, r, 12, 4)
}

// During a burst of webhooks the enricher narrows to BusyWorkers reads at
// once (the burst is marked at the start and the window is an hour, so it
// lasts the whole test); nothing is lost, only delayed.
func TestEnricherYieldsDuringABurst(t *testing.T) {
	r := newEnrichRig(t)
	r.start(&paymentsfeed.Enricher{Workers: 4, BusyWorkers: 1, BusyWindow: time.Hour, MaxDefer: time.Hour})
	paymentsfeed.MarkBurst(r.queue)
	checkWidth(t, r, 12, 1)
}

// A webhook that has waited MaxDefer is enriched at full width even while
// webhooks keep arriving: a steady stream cannot hold enrichment narrow.
func TestEnricherStopsYieldingPastMaxDefer(t *testing.T) {
	r := newEnrichRig(t)
	r.start(&paymentsfeed.Enricher{Workers: 4, BusyWorkers: 1, BusyWindow: time.Hour, MaxDefer: time.Nanosecond})
	paymentsfeed.MarkBurst(r.queue)
	checkWidth(t, r, 12, 4)
}

// The deferral bounds the wait for a narrow slot too: with the one read of
// a burst held (a slow upstream), the webhooks behind it go at full width
// once they have waited MaxDefer, instead of queueing behind that read.
func TestEnricherDeferralEndsWhileTheNarrowSlotIsHeld(t *testing.T) {
	r := newEnrichRig(t)
	r.start(&paymentsfeed.Enricher{Workers: 4, BusyWorkers: 1, BusyWindow: time.Hour, MaxDefer: 300 * time.Millisecond})
	paymentsfeed.MarkBurst(r.queue)
	checkWidth(t, r, 12, 4)
}

// A burst of webhooks, each posted twice by concurrent senders, with the
// enricher yielding to the burst: every event reaches EVENTS exactly once,
// each is read from the upstream once, and the work queue drains.
func TestEnricherLosesNothingAcrossABurst(t *testing.T) {
	r := newEnrichRig(t)
	r.release()
	lags := make(chan time.Duration, 1000)
	r.start(&paymentsfeed.Enricher{Workers: 8, BusyWorkers: 1, Lag: func(d time.Duration) { lags <- d }})
	const n = 300
	bodies := r.fire(n)
	r.post(append(bodies, bodies...), 16)
	r.waitFor(fmt.Sprintf("%d events on %s", n, events.EventsStream), func() bool { return r.stored(events.EventsStream) >= n })
	r.waitFor("an empty "+paymentsfeed.WebhooksStream, func() bool { return r.stored(paymentsfeed.WebhooksStream) == 0 })
	if got := r.stored(events.EventsStream); got != n {
		t.Errorf("%s holds %d events, want %d", events.EventsStream, got, n)
	}
	if got := r.reads.Load(); got != n {
		t.Errorf("%d upstream event reads for %d distinct webhooks", got, n)
	}
	r.waitFor(fmt.Sprintf("%d lag observations", n), func() bool { return len(lags) >= n })
	for range n {
		if d := <-lags; d < 0 || d > time.Hour {
			t.Fatalf("enrichment lag %s", d)
		}
	}
}
