package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// overlapWatch sits in front of the sandbox and watches the banking calls
// that carry an access token: how many run at once (max), and how many the
// sandbox refused (401). It also reorders answers of overlapping calls: an
// answer whose call finished while others were still running is held until
// the last of them has been sent, so the gateway sees answers arrive in the
// reverse of the order the sandbox issued their tokens, the case where the
// last arrival is not the newest token.
type overlapWatch struct {
	mu      sync.Mutex
	cond    *sync.Cond
	running int
	gen     uint64
	max     int
	refused int
	calls   int
}

func newOverlapWatch() *overlapWatch {
	w := &overlapWatch{}
	w.cond = sync.NewCond(&w.mu)
	return w
}

func (o *overlapWatch) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/banking/") || r.Header.Get("x-access-token") == "" {
			next.ServeHTTP(w, r)
			return
		}
		o.mu.Lock()
		o.running++
		o.calls++
		o.max = max(o.max, o.running)
		o.mu.Unlock()

		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)

		o.mu.Lock()
		o.running--
		if rec.Code == http.StatusUnauthorized {
			o.refused++
		}
		last := o.running == 0
		if !last {
			for gen := o.gen; o.gen == gen; {
				o.cond.Wait()
			}
		}
		o.mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		if last {
			o.mu.Lock()
			o.gen++
			o.cond.Broadcast()
			o.mu.Unlock()
		}
	})
}

func (o *overlapWatch) reset() {
	o.mu.Lock()
	o.max, o.refused, o.calls = 0, 0, 0
	o.mu.Unlock()
}

func (o *overlapWatch) counts() (maxRunning, refused, calls int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.max, o.refused, o.calls
}

// TestSessionBankingCallsOverlapAndSurviveTheGrace: the banking calls of
// one request of one session reach the upstream at the same time (none
// queues behind a per-session lock), and although their answers
// arrive out of issue order, the session still works after the sandbox's
// grace for superseded tokens has passed.
func TestSessionBankingCallsOverlapAndSurviveTheGrace(t *testing.T) {
	t.Parallel()
	const grace = 300 * time.Millisecond
	watch := newOverlapWatch()
	g := startGatewayWith(t, sandboxBehind(watch.wrap), "-sandbox-token-grace", grace.String())
	// Latency keeps each call in flight long enough that overlapping
	// calls are seen overlapping.
	g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": "*", "latency_ms": 20}, nil)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))

	dashboard, err := os.ReadFile("../bench/floor/dashboard.graphql")
	if err != nil {
		t.Fatal(err)
	}
	// One level of three independent calls: the last arrival is one of
	// the held answers, not the newest token.
	const burst = `{ currentCorporation { id } cards { id } persons(first: 5) { edges { node { id } } } }`
	for round, q := range []string{string(dashboard), burst, burst, string(dashboard)} {
		watch.reset()
		if r := anna.query(t, q, nil); len(r.Errors) > 0 {
			t.Fatalf("round %d: %+v", round, r.Errors)
		}
		m, refused, calls := watch.counts()
		if m < 2 {
			t.Fatalf("round %d: at most %d of the session's %d banking calls ran at once", round, m, calls)
		}
		t.Logf("round %d: %d banking calls, at most %d at once, %d refused (retried with a candidate)", round, calls, m, refused)
		// Every token of the burst but the newest is superseded; wait
		// until the superseded ones are refused.
		time.Sleep(3 * grace)
	}
	var d viewerData
	anna.query(t, viewerQuery, nil).decode(t, &d)
	if d.Viewer == nil || d.Viewer.Person == nil || rawID(d.Viewer.Person.ID) != annaID {
		t.Fatalf("after the bursts: viewer = %+v", d.Viewer)
	}
}
