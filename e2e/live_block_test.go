package e2e

import (
	"testing"

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
