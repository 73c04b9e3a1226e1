package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// endGate holds each poll at its last call (the person listing, which
// showing an event's subject never makes), says when one is held, and lets
// one through per ticket.
type endGate struct {
	on      atomic.Bool
	held    chan struct{}
	tickets chan struct{}
}

func (p *endGate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.on.Load() && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/persons") {
			p.held <- struct{}{}
			select {
			case <-p.tickets:
			case <-r.Context().Done():
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// TestSubjectIsReadOncePerChangeWhateverTheSubscriptions: an outside
// credit costs the same banking calls whether one session follows it with
// one subscription that shows each event's subject or with ten on one
// socket: the subject is read once per change on the replica, and each
// subscription sees it without a read of its own.
func TestSubjectIsReadOncePerChangeWhateverTheSubscriptions(t *testing.T) {
	gate := &endGate{held: make(chan struct{}, 1), tickets: make(chan struct{})}
	g := startGatewayWith(t, sandboxBehind(gate.wrap), livePollArgs...)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	gate.on.Store(true)
	const sub = `subscription($after: String) { events(after: $after) ` + personLiveFields + ` }`

	// creditCost is the banking calls of one credit shown, with its
	// subject, on every subscription of ws: from a poll held at its end
	// (the last call counted), through the poll after the credit, to the
	// next one held at its end (all but its last call counted). The polls
	// cost the same in both runs; what differs is the subjects' reads.
	creditCost := func(ws *wsClient, ids []string, amount int64) int {
		<-gate.held // a poll is held at its end
		g.resetStats(t)
		balance := g.credit(t, demoEURWalletID, amount)
		gate.tickets <- struct{}{}
		<-gate.held // the next poll, which read the credit, is held
		gate.tickets <- struct{}{}
		pending := map[string]bool{}
		for _, id := range ids {
			pending[id] = true
		}
		for len(pending) > 0 {
			m := ws.read()
			if m.Type != "next" {
				t.Fatalf("want next, got %s %s %s", m.Type, m.ID, m.Payload)
			}
			var p struct {
				Data struct {
					Events subjectEvent `json:"events"`
				} `json:"data"`
				Errors []gqlError `json:"errors"`
			}
			if err := json.Unmarshal(m.Payload, &p); err != nil || len(p.Errors) > 0 {
				t.Fatalf("subscription payload %s: %v %+v", m.Payload, err, p.Errors)
			}
			e := p.Data.Events
			if e.Event.Name == "WalletBalanceChanged" && e.Event.Payload["amount"] == float64(balance) {
				if s := e.Event.Subject; s == nil || s.Balance == nil || s.Balance.Amount != balance {
					t.Fatalf("subscription %s: the balance change's subject %+v, want the wallet at %d", m.ID, s, balance)
				}
				delete(pending, m.ID)
			}
		}
		<-gate.held // the poll after that is held at its end
		calls := 0
		for route, n := range g.stats(t).Routes {
			if strings.Contains(route, "/banking/") {
				calls += n
			}
		}
		gate.tickets <- struct{}{}
		return calls
	}

	one := anna.dialWS(t, nil, nil)
	one.subscribeFromNow(anna, "1", sub, nil)
	<-gate.held // the baseline
	gate.tickets <- struct{}{}
	single := creditCost(one, []string{"1"}, 1111)

	ten := anna.dialWS(t, nil, nil)
	ids := []string{"1"}
	for i := range 9 {
		id := fmt.Sprint(i + 2)
		ten.subscribeFromNow(anna, id, sub, nil)
		ids = append(ids, id)
	}
	g.waitMetric(t, "fingraph_live_subscribers", equal(10))
	one.close()
	ten.subscribeFromNow(anna, "1", sub, nil)
	g.waitMetric(t, "fingraph_live_subscribers", equal(10))
	many := creditCost(ten, ids, 2222)

	t.Logf("banking calls of one credit: %d with one subscription, %d with ten", single, many)
	if many > single+12 {
		t.Fatalf("one credit cost %d banking calls with ten subscriptions of one session, %d with one: each subscription read the subject", many, single)
	}
	gate.on.Store(false)
	close(gate.tickets)
}
