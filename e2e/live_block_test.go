package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// TestBlockIsAnnouncedOnceWithTheStateAfterIt: blocking a person is
// announced once; no later announcement of the same change says the
// person is still active (a sentinel credit after two more polls closes
// what the dashboard received).
func TestBlockIsAnnouncedOnceWithTheStateAfterIt(t *testing.T) {
	g := startGateway(t, livePollArgs...)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	ws := anna.dialWS(t, nil, nil)
	ws.subscribeFromNow(anna, "1", allEvents, nil)
	g.waitMetric(t, "fingraph_live_corporations_polled", equal(1))
	g.waitMetric(t, "fingraph_live_polls_total", atLeast(1))

	anna.query(t, blockPerson, map[string]any{"id": bankingsim.DaceID}).decode(t, &map[string]any{})
	t.Cleanup(func() { anna.query(t, restorePerson, map[string]any{"id": bankingsim.DaceID}) })
	polls := g.metric(t, "fingraph_live_polls_total")
	g.waitMetric(t, "fingraph_live_polls_total", atLeast(polls+3))
	sentinel := g.credit(t, demoUSDWalletID, 500)
	got := ws.until("1", balanceEvent(demoUSDWalletID, sentinel))

	var about []liveEvent
	for _, e := range got {
		if e.Event.Payload["person_id"] == bankingsim.DaceID {
			about = append(about, e)
		}
	}
	if len(about) != 1 {
		t.Fatalf("the block of dace was announced %d times, want once: %+v", len(about), about)
	}
	if last := about[len(about)-1]; last.Event.Payload["is_blocked"] != true {
		t.Fatalf("the last announcement about dace does not say she is blocked: %s %v", last.Event.Name, last.Event.Payload)
	}
}

// TestAPollThatReadsTheBlockFirstNamesItAsTheMutationDoes: the banking
// upstream blocks dace but its answer to blockPerson is held until a poll
// has read the block. The poll's announcement is the one the stream keeps,
// and it is named PersonBlocked, so a subscription filtered by that name
// gets it; the mutation's own announcement, after, is not a second event.
func TestAPollThatReadsTheBlockFirstNamesItAsTheMutationDoes(t *testing.T) {
	release := make(chan struct{})
	var once bool
	g := startGatewayWith(t, sandboxBehind(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodDelete || !strings.HasSuffix(r.URL.Path, "/persons/"+bankingsim.DaceID) || once {
				next.ServeHTTP(w, r)
				return
			}
			once = true // the test's only block of dace, so no lock is needed
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			select {
			case <-release:
			case <-time.After(30 * time.Second):
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
		})
	}), livePollArgs...)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	blocks := anna.dialWS(t, nil, nil)
	blocks.subscribeFromNow(anna, "1", `subscription($after: String) { events(names: ["PersonBlocked"], after: $after) `+liveFields+` }`, nil)
	all := anna.dialWS(t, nil, nil)
	all.subscribeFromNow(anna, "1", allEvents, nil)
	g.waitMetric(t, "fingraph_live_polls_total", atLeast(1))

	done := make(chan struct{})
	go func() {
		defer close(done)
		anna.query(t, blockPerson, map[string]any{"id": bankingsim.DaceID})
	}()
	t.Cleanup(func() { anna.query(t, restorePerson, map[string]any{"id": bankingsim.DaceID}) })
	e := blocks.next("1", "events")
	close(release)
	<-done
	if e.Source != "banking" || !announcesBlockOf(e.Event.Name, e.Event.Payload, bankingsim.DaceID) {
		t.Fatalf("the poll's reading of the block: %s %s %v, want the poller's PersonBlocked", e.Source, e.Event.Name, e.Event.Payload)
	}

	sentinel := g.credit(t, demoUSDWalletID, 500)
	var about []liveEvent
	for _, e := range all.until("1", balanceEvent(demoUSDWalletID, sentinel)) {
		if e.Event.Payload["person_id"] == bankingsim.DaceID {
			about = append(about, e)
		}
	}
	if len(about) != 1 || about[0].Event.Name != "PersonBlocked" {
		t.Fatalf("the block of dace was announced as %+v, want one PersonBlocked", about)
	}
}
