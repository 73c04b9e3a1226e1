package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// Live events for persons: every session kind subscribes to events, and
// sees what its scope allows (docs/events.md): a person its own
// corporation's banking-side events, each with its subject, and never the
// merchant's payments events.

// personLiveFields selects an event with its subject, as a dashboard does.
const personLiveFields = `{ cursor source event { id name payload
  subject { id __typename ... on Wallet { balance { amount currency } } ... on Person { email } } } }`

type subjectEvent struct {
	Cursor string `json:"cursor"`
	Source string `json:"source"`
	Event  struct {
		ID      string         `json:"id"`
		Name    string         `json:"name"`
		Payload map[string]any `json:"payload"`
		Subject *struct {
			ID       string `json:"id"`
			Typename string `json:"__typename"`
			Balance  *struct {
				Amount   int64  `json:"amount"`
				Currency string `json:"currency"`
			} `json:"balance"`
			Email string `json:"email"`
		} `json:"subject"`
	} `json:"event"`
}

// nextSubject reads the next event of subscription id with its subject.
func (c *wsClient) nextSubject(id string) subjectEvent {
	c.t.Helper()
	m := c.read()
	if m.Type != "next" || m.ID != id {
		c.t.Fatalf("want next for %s, got %s %s %s", id, m.Type, m.ID, m.Payload)
	}
	var p struct {
		Data struct {
			Events subjectEvent `json:"events"`
		} `json:"data"`
		Errors []gqlError `json:"errors"`
	}
	if err := json.Unmarshal(m.Payload, &p); err != nil || len(p.Errors) > 0 {
		c.t.Fatalf("subscription payload %s: %v %+v", m.Payload, err, p.Errors)
	}
	return p.Data.Events
}

const (
	blockPerson   = `mutation($id: ID!) { blockPerson(input: {id: $id}) { id } }`
	restorePerson = `mutation($id: ID!) { restorePerson(input: {id: $id}) { id } }`
)

// TestPersonEventsCarryTheirSubjectAndStayInTheirCorporation: anna's
// conversion reaches anna with its wallet as subject, balance as it is now;
// ben, of another corporation, subscribed at the same time, gets his own
// corporation's next event as his first: anna's never reached him. Anna's
// next event is her own too, not ben's.
func TestPersonEventsCarryTheirSubjectAndStayInTheirCorporation(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	const sub = `subscription($after: String) { events(after: $after) ` + personLiveFields + ` }`
	annaWS := anna.dialWS(t, nil, nil)
	annaWS.subscribeFromNow(anna, "1", sub, nil)
	benWS := ben.dialWS(t, nil, nil)
	benWS.subscribeFromNow(ben, "1", sub, nil)

	if _, r := anna.convert(t, map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 2000, "currency": "GBP"}); len(r.Errors) > 0 {
		t.Fatalf("convert: %+v", r.Errors)
	}
	wallet := relay.ID(relay.Wallet, bankingsim.DemoCorporationID, demoUSDWalletID)
	var now struct {
		Node struct {
			Balance struct {
				Amount   int64  `json:"amount"`
				Currency string `json:"currency"`
			} `json:"balance"`
		} `json:"node"`
	}
	anna.query(t, `query($id: ID!) { node(id: $id) { ... on Wallet { balance { amount currency } } } }`,
		map[string]any{"id": wallet}).decode(t, &now)

	e := annaWS.nextSubject("1")
	if e.Source != "gateway" || e.Event.Name != "ConversionCreated" || e.Event.Payload["corporation_id"] != bankingsim.DemoCorporationID ||
		e.Event.Payload["subject"] != wallet {
		t.Fatalf("anna's first event: %+v", e)
	}
	if s := e.Event.Subject; s == nil || s.Typename != "Wallet" || s.ID != wallet || s.Balance == nil ||
		*s.Balance != now.Node.Balance {
		t.Fatalf("the conversion's subject %+v, want wallet %s with balance %+v", e.Event.Subject, wallet, now.Node.Balance)
	}

	// The event refetches by its id for anna, with its subject, and for
	// nobody of another corporation.
	const refetch = `query($id: ID!) { node(id: $id) { ... on Event { name subject { id } } } event(id: $id) { name } }`
	var back struct {
		Node struct {
			Name    string              `json:"name"`
			Subject struct{ ID string } `json:"subject"`
		} `json:"node"`
		Event struct{ Name string } `json:"event"`
	}
	anna.query(t, refetch, map[string]any{"id": e.Event.ID}).decode(t, &back)
	if back.Node.Name != "ConversionCreated" || back.Node.Subject.ID != wallet || back.Event.Name != "ConversionCreated" {
		t.Errorf("anna's refetch of her event: %+v", back)
	}
	if r := ben.query(t, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": e.Event.ID}); r.code() != "NOT_FOUND" {
		t.Errorf("ben refetched anna's event: %s %+v", r.Data, r.Errors)
	}

	ben.query(t, blockPerson, map[string]any{"id": bankingsim.KatiID}).decode(t, &map[string]any{})
	t.Cleanup(func() { ben.query(t, restorePerson, map[string]any{"id": bankingsim.KatiID}) })
	b := benWS.nextSubject("1")
	if !announcesBlockOf(b.Event.Name, b.Event.Payload, bankingsim.KatiID) || b.Event.Payload["corporation_id"] != bankingsim.SecondCorporationID ||
		b.Event.Subject == nil || b.Event.Subject.Typename != "Person" || b.Event.Subject.Email != "kati@second.test" {
		t.Fatalf("ben's first event is not his corporation's block of kati (anna's conversion reached him?): %+v", b)
	}

	anna.query(t, blockPerson, map[string]any{"id": bankingsim.DaceID}).decode(t, &map[string]any{})
	t.Cleanup(func() { anna.query(t, restorePerson, map[string]any{"id": bankingsim.DaceID}) })
	if a := annaWS.nextSubject("1"); !announcesBlockOf(a.Event.Name, a.Event.Payload, bankingsim.DaceID) {
		t.Fatalf("anna's second event is not her block of dace (ben's reached her?): %+v", a)
	}
}

// announcesBlockOf reports whether an event of name and payload announces
// that person is blocked. Whoever finds the change first, the gateway's
// blockPerson or a poll that read the block before the mutation announced
// it, names it PersonBlocked and carries the state after it.
func announcesBlockOf(name string, payload map[string]any, person string) bool {
	return name == "PersonBlocked" && payload["person_id"] == person && payload["is_blocked"] == true
}

// TestPersonNeverSeesPaymentsEvents: even with persons made payments
// operators by the setting, a person's events subscription skips the
// merchant's payments events (an API client receives the same event), its
// history holds none, node and event give nothing for one, and the
// payments-only subscriptions are refused. A payments customer session is
// refused the event stream with a clear error.
func TestPersonNeverSeesPaymentsEvents(t *testing.T) {
	t.Parallel()
	g := liveGateway(t, "-payments-operators", "STAFF,PERSON,API_CLIENT")
	api := g.as(g.signInAPI(t))
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	annaWS := anna.dialWS(t, nil, nil)
	annaWS.subscribeFromNow(anna, "1", `subscription($after: String) { events(after: $after) `+liveFields+` }`, nil)
	apiWS := api.dialWS(t, nil, nil)
	apiWS.subscribeFromNow(api, "1", `subscription($after: String) { events(names: ["IndividualActivated"], after: $after) `+liveFields+` }`, nil)

	var ev sandboxEvent
	g.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "IndividualActivated"}, &ev)
	paid := apiWS.next("1", "events")
	if paid.Source != "payments" || paid.Event.UpstreamID != ev.ID {
		t.Fatalf("the API client's payments event: %+v", paid)
	}
	anna.query(t, blockPerson, map[string]any{"id": bankingsim.DaceID}).decode(t, &map[string]any{})
	t.Cleanup(func() { anna.query(t, restorePerson, map[string]any{"id": bankingsim.DaceID}) })
	if e := annaWS.next("1", "events"); e.Source == "payments" || !announcesBlockOf(e.Event.Name, e.Event.Payload, bankingsim.DaceID) {
		t.Fatalf("anna's first event, after a payments event she must not get: %+v", e)
	}

	annaHistory := anna.history(t, 100, nil, nil).Edges
	if len(annaHistory) == 0 {
		t.Fatal("anna's history is empty, though she has just blocked a person")
	}
	for _, e := range annaHistory {
		if e.Source != "gateway" || e.Node.Payload["corporation_id"] != bankingsim.DemoCorporationID {
			t.Errorf("anna's history holds %s %s", e.Source, e.Node.Name)
		}
	}
	var seen int
	for _, e := range api.history(t, 100, nil, []string{"IndividualActivated"}).Edges {
		if e.Node.ID == paid.Event.ID {
			seen++
		}
	}
	if seen != 1 {
		t.Fatalf("the API client's history holds the payments event %d times, want 1", seen)
	}

	r := anna.query(t, `query($id: ID!) { event(id: $id) { id } }`, map[string]any{"id": paid.Event.ID})
	if len(r.Errors) > 0 || string(r.Data) != `{"event":null}` {
		t.Errorf("anna's event(id) of a payments event: %s %+v", r.Data, r.Errors)
	}
	if r := anna.query(t, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": paid.Event.ID}); r.code() != "NOT_FOUND" {
		t.Errorf("anna's node(id) of a payments event: %s %+v", r.Data, r.Errors)
	}

	refused := func(who *testGateway, query string, wantCode, wantText string) {
		t.Helper()
		ws := who.dialWS(t, nil, nil)
		ws.subscribe("9", query, nil)
		m := ws.read()
		if m.Type != "error" && m.Type != "next" || !strings.Contains(string(m.Payload), wantCode) ||
			!strings.Contains(string(m.Payload), wantText) {
			t.Errorf("%s: want %s, got %s %s", query, wantCode, m.Type, m.Payload)
		}
	}
	refused(anna, `subscription { orderUpdates(orderId: "o-1") { cursor } }`, "FORBIDDEN", "staff and API clients")
	refused(anna, `subscription { onboarding(individualId: "i-1") { cursor } }`, "FORBIDDEN", "staff and API clients")
	customer := g.as(g.signInCustomerDemo(t))
	refused(customer, `subscription { events { cursor } }`, "FORBIDDEN", "payments customer session has no live events")
	if r := customer.query(t, `{ eventsCursor }`, nil); r.code() != "FORBIDDEN" {
		t.Errorf("a customer's eventsCursor: %s %+v", r.Data, r.Errors)
	}
}

// TestPersonEventHistoryAndReplay: a person's eventHistory holds its own
// corporation's events only, each with its subject; a subscription after
// the second newest replays exactly the newest, then goes on live with the
// person's next event, skipping the other corporation's in between.
func TestPersonEventHistoryAndReplay(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	t.Cleanup(func() {
		anna.query(t, restorePerson, map[string]any{"id": bankingsim.DaceID})
		ben.query(t, restorePerson, map[string]any{"id": bankingsim.KatiID})
	})
	made := []string{blockPerson, restorePerson, blockPerson, restorePerson}
	for _, m := range made {
		anna.query(t, m, map[string]any{"id": bankingsim.DaceID}).decode(t, &map[string]any{})
		ben.query(t, m, map[string]any{"id": bankingsim.KatiID}).decode(t, &map[string]any{})
	}

	var d struct {
		H struct {
			Edges []struct {
				Cursor string `json:"cursor"`
				Node   struct {
					Name    string         `json:"name"`
					Payload map[string]any `json:"payload"`
					Subject *struct {
						Email string `json:"email"`
					} `json:"subject"`
				} `json:"node"`
			} `json:"edges"`
		} `json:"eventHistory"`
	}
	anna.query(t, `{ eventHistory(first: 100) { edges { cursor node { name payload subject { ... on Person { email } } } } } }`, nil).decode(t, &d)
	if len(d.H.Edges) != len(made) {
		t.Fatalf("anna's history holds %d events, want her %d", len(d.H.Edges), len(made))
	}
	for i, e := range d.H.Edges {
		// The gateway and the poller name a block or a restore alike.
		want, blocked := "PersonRestored", false
		if i%2 == 1 {
			want, blocked = "PersonBlocked", true
		}
		if e.Node.Name != want || e.Node.Payload["is_blocked"] != blocked || e.Node.Payload["corporation_id"] != bankingsim.DemoCorporationID ||
			e.Node.Subject == nil || e.Node.Subject.Email != "dace@demo.test" {
			t.Errorf("anna's history, event %d: %+v, want %s of dace", i, e.Node, want)
		}
	}

	ws := anna.dialWS(t, nil, nil)
	ws.subscribe("1", `subscription($after: String) { events(after: $after) `+personLiveFields+` }`,
		map[string]any{"after": d.H.Edges[1].Cursor})
	if e := ws.nextSubject("1"); e.Cursor != d.H.Edges[0].Cursor || e.Event.Name != "PersonRestored" {
		t.Fatalf("the replay after the second newest gave %+v, want the newest %s", e, d.H.Edges[0].Cursor)
	}
	ben.query(t, blockPerson, map[string]any{"id": bankingsim.KatiID}).decode(t, &map[string]any{})
	anna.query(t, blockPerson, map[string]any{"id": bankingsim.DaceID}).decode(t, &map[string]any{})
	if e := ws.nextSubject("1"); e.Event.Name != "PersonBlocked" || e.Event.Payload["person_id"] != bankingsim.DaceID {
		t.Fatalf("after the replay anna got %+v, want her block of dace", e)
	}
}

// TestIntroducerSeesTheCorporationsItIntroduced: the demo introducer
// introduced the demo corporation, not the second: its subscription gets
// anna's event and not ben's, which came first.
func TestIntroducerSeesTheCorporationsItIntroduced(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	intro := g.as(g.signInIntroducer(t))
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	ws := intro.dialWS(t, nil, nil)
	ws.subscribeFromNow(intro, "1", `subscription($after: String) { events(after: $after) `+liveFields+` }`, nil)
	t.Cleanup(func() {
		anna.query(t, restorePerson, map[string]any{"id": bankingsim.DaceID})
		ben.query(t, restorePerson, map[string]any{"id": bankingsim.KatiID})
	})
	ben.query(t, blockPerson, map[string]any{"id": bankingsim.KatiID}).decode(t, &map[string]any{})
	anna.query(t, blockPerson, map[string]any{"id": bankingsim.DaceID}).decode(t, &map[string]any{})
	e := ws.next("1", "events")
	if e.Event.Payload["person_id"] != bankingsim.DaceID {
		t.Fatalf("the introducer's first event: %+v, want anna's block of dace", e)
	}
	// Refetched by id: the introduced corporation's event, not the other's.
	bens := ben.history(t, 1, nil, []string{"PersonBlocked"}).Edges
	if len(bens) != 1 {
		t.Fatalf("ben's history: %+v", bens)
	}
	const refetch = `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`
	var d struct {
		Nodes []*struct{ ID string } `json:"nodes"`
	}
	r := intro.query(t, refetch, map[string]any{"ids": []string{e.Event.ID, bens[0].Node.ID}})
	if err := json.Unmarshal(r.Data, &d); err != nil || len(r.Errors) != 1 || r.code() != "NOT_FOUND" {
		t.Fatalf("the introducer's nodes: %s %v %+v", r.Data, err, r.Errors)
	}
	if len(d.Nodes) != 2 || d.Nodes[0] == nil || d.Nodes[0].ID != e.Event.ID || d.Nodes[1] != nil {
		t.Fatalf("the introducer's nodes of its corporation's and another's event: %+v", d.Nodes)
	}
}

// TestPaymentsEventSubjectIsItsOrder: a payments event about an order has
// that Order as subject, for the operator who receives it.
func TestPaymentsEventSubjectIsItsOrder(t *testing.T) {
	t.Parallel()
	g := liveGateway(t)
	g = g.as(g.signInAPI(t))
	o := createOrder(t, g, map[string]any{"currency": "EUR", "items": map[string]any{"amount": 1000},
		"payment": map[string]any{"card": map[string]any{"token": uniq("tok_ok_")}}})
	ws := g.dialWS(t, nil, nil)
	ws.subscribeFromNow(g, "1", `subscription($after: String) { events(names: ["OrderCaptured"], after: $after) `+personLiveFields+` }`, nil)
	changeOrder(g, t, "capture", o.ID, nil)
	e := ws.nextSubject("1")
	if e.Source != "payments" || e.Event.Subject == nil || e.Event.Subject.Typename != "Order" || e.Event.Subject.ID != relay.ID(relay.Order, rawID(o.ID)) {
		t.Fatalf("OrderCaptured's subject: %+v, want the Order %s", e.Event.Subject, o.ID)
	}
}
