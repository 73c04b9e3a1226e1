package resolvers

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/payments"
)

// The event stream as sessions read it: what each session's scope lets
// through, the history, the cursor, and the subscriptions, over a fake
// stream that records what it was asked.

// Each session reads the stream through its own scope: staff every
// corporation's banking-side events and the merchant's payments events; a
// person its corporation's; the merchant's API client its corporation's
// and payments'; another corporation's API client its own only; an
// introducer those of the corporations it introduced (read from the
// banking upstream). A payments customer is refused, and a refused
// session reads nothing.
func TestEventScopeFollowsTheSession(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		who       principal
		want      events.Scope
		baselines []string
	}{
		{staff, events.Scope{Payments: true, AllCorporations: true}, nil},
		{person, events.Scope{Corporations: []string{demoCorp}}, []string{demoCorp}},
		{apiClient, events.Scope{Payments: true, Corporations: []string{demoCorp}}, []string{demoCorp}},
		{outsider, events.Scope{Corporations: []string{otherCorp}}, []string{otherCorp}},
		{introducer, events.Scope{Corporations: []string{demoCorp, otherCorp}}, nil},
	} {
		t.Run(string(tc.who.kind)+"/"+tc.who.id, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			stream := useStream(h)
			poll := &pollFake{}
			h.r.BankPoll = poll
			var got struct{ EventsCursor string }
			h.as(tc.who).exec(`{ eventsCursor }`, nil).decode(t, &got)
			if got.EventsCursor != "cursor-head" {
				t.Fatalf("eventsCursor %q", got.EventsCursor)
			}
			sc := stream.lastFilter(t).Scope
			if sc == nil || sc.Payments != tc.want.Payments || sc.AllCorporations != tc.want.AllCorporations || !slices.Equal(sc.Corporations, tc.want.Corporations) {
				t.Fatalf("scope %+v, want %+v", sc, tc.want)
			}
			if _, baselines := poll.asked(); !slices.Equal(baselines, tc.baselines) {
				t.Fatalf("baselines of %v, want %v", baselines, tc.baselines)
			}
		})
	}

	for who, code := range map[principal]string{customer: "FORBIDDEN", anonymous: "UNAUTHENTICATED"} {
		h := newHarness(t)
		stream := useStream(h)
		refused(t, h.as(who).exec(`{ eventsCursor }`, nil), code, "")
		if stream.reads() != 0 {
			t.Fatalf("%s: a refused session read the stream", who.kind)
		}
	}
}

// An introducer's corporations are read page by page (100 each) as far as
// the upstream pages; an upstream without offset paging gives the first
// page only. A listing that fails fails the read.
func TestIntroducerScopeReadsItsCorporationsByPage(t *testing.T) {
	t.Parallel()
	for _, specOnly := range []bool{false, true} {
		h := newHarness(t)
		h.banking.specOnly = specOnly
		for i := range 150 {
			h.banking.corporations.add(&bankingCorporation{ID: fmt.Sprintf("corp-%03d", i)})
		}
		stream := useStream(h)
		h.as(introducer).exec(`{ eventsCursor }`, nil).noErrors(t)
		n, pages := len(stream.lastFilter(t).Scope.Corporations), h.banking.corporations.calls("List")
		if specOnly && (n != 100 || pages != 1) || !specOnly && (n != 152 || pages != 2) {
			t.Fatalf("spec only %v: %d corporations in %d pages", specOnly, n, pages)
		}
	}
	h := newHarness(t)
	stream := useStream(h)
	h.banking.corporations.failNext("List", unavailable("banking"))
	refused(t, h.as(introducer).exec(`{ eventsCursor }`, nil), "UPSTREAM_UNAVAILABLE", "")
	if stream.reads() != 0 {
		t.Fatal("a scope that could not be read read the stream")
	}
}

const historyQuery = `query($first: Int, $after: String, $names: [String!]) { eventHistory(first: $first, after: $after, names: $names) {
  edges { cursor source node { id upstreamId name orderId } }
  pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
} }`

type historyAnswer struct {
	EventHistory struct {
		Edges []struct {
			Cursor, Source string
			Node           struct {
				ID, UpstreamID, Name string
				OrderID              *string
			}
		}
		PageInfo struct {
			HasNextPage, HasPreviousPage bool
			StartCursor, EndCursor       *string
		}
	} `json:"eventHistory"`
}

// eventHistory refuses a page size out of 1..100, too many names, and the
// cursors and names the stream refuses, each naming its argument; a page
// answers the events it holds (an undecodable one is skipped and logged)
// with the stream's cursors; an empty newest page starts at the stream's
// head, a page that stopped at its bound goes on where reading stopped.
func TestEventHistoryPages(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	stream := useStream(h)
	h.as(apiClient)
	tooMany := make([]any, 51)
	for i := range tooMany {
		tooMany[i] = fmt.Sprint("N", i)
	}
	wantFieldError(t, h.exec(historyQuery, map[string]any{"first": 0}), "first")
	wantFieldError(t, h.exec(historyQuery, map[string]any{"first": 101}), "first")
	wantFieldError(t, h.exec(historyQuery, map[string]any{"names": tooMany}), "names")
	if stream.reads() != 0 {
		t.Fatal("a refused page read the stream")
	}
	for err, field := range map[error]string{events.ErrBadCursor: "after", events.ErrStaleCursor: "after", events.ErrFutureCursor: "after", events.ErrBadName: "names"} {
		stream.err = err
		wantFieldError(t, h.exec(historyQuery, map[string]any{"after": "x"}), field)
	}
	stream.err = unavailable("events")
	refused(t, h.exec(historyQuery, nil), "UPSTREAM_UNAVAILABLE", "")
	stream.err = nil

	var got historyAnswer
	h.exec(historyQuery, nil).decode(t, &got)
	if p := got.EventHistory.PageInfo; len(got.EventHistory.Edges) != 0 || p.StartCursor == nil || *p.StartCursor != "cursor-head" || p.EndCursor != nil || p.HasNextPage {
		t.Fatalf("an empty newest page: %+v, want it to start at the head", got.EventHistory)
	}

	bad := paymentsEvent("ev-bad", "Broken", `[1]`)
	stream.history = &events.History{Events: []*events.Event{
		paymentsEvent("ev-2", "OrderCaptured", `{"order_id":"ord-1"}`), bad, paymentsEvent("ev-1", "OrderCreated", `{"order_id":"ord-1"}`)},
		More: true, Next: "c-stop"}
	got = historyAnswer{}
	h.exec(historyQuery, map[string]any{"first": 3, "names": []any{"OrderCaptured", "OrderCreated", "Broken"}}).decode(t, &got)
	edges, info := got.EventHistory.Edges, got.EventHistory.PageInfo
	if len(edges) != 2 || edges[0].Cursor != "c-ev-2" || edges[0].Source != "payments" || edges[0].Node.UpstreamID != "ev-2" ||
		*edges[0].Node.OrderID != globalOrder("ord-1") || edges[1].Node.Name != "OrderCreated" {
		t.Fatalf("edges %+v", edges)
	}
	if !info.HasNextPage || info.HasPreviousPage || *info.StartCursor != "c-ev-2" || *info.EndCursor != "c-stop" {
		t.Fatalf("page info %+v, want a next page after c-stop", info)
	}
	if !h.logged("undecodable event on the bus") {
		t.Fatal("the undecodable event was not logged")
	}
	f := stream.lastFilter(t)
	if len(f.Names) != 3 || stream.limits[len(stream.limits)-1] != 3 {
		t.Fatalf("filter names %v, limit %v", f.Names, stream.limits)
	}

	stream.history = &events.History{Events: []*events.Event{paymentsEvent("ev-0", "OrderCreated", `{}`)}}
	got = historyAnswer{}
	h.exec(historyQuery, map[string]any{"after": "c-stop"}).decode(t, &got)
	if info := got.EventHistory.PageInfo; !info.HasPreviousPage || info.HasNextPage || *info.EndCursor != "c-ev-0" {
		t.Fatalf("an older page: %+v", info)
	}
	if stream.afters[len(stream.afters)-1] != "c-stop" || stream.limits[len(stream.limits)-1] != 20 {
		t.Fatalf("read before %q with limit %d, want c-stop and the default 20", stream.afters[len(stream.afters)-1], stream.limits[len(stream.limits)-1])
	}
}

// The filter a history page reads with lets through only what the
// session's scope sees: a person never gets a payments event or another
// corporation's banking-side event, whatever the stream holds.
func TestEventHistoryFilterIsTheSessionsScope(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	stream := useStream(h)
	h.as(person).exec(historyQuery, nil).noErrors(t)
	match := stream.lastFilter(t).Match
	for _, tc := range []struct {
		e    *events.Event
		want bool
	}{
		{bankingEvent(t, events.SourceGateway, "g-1", "CardIssued", demoCorp, ""), true},
		{bankingEvent(t, events.SourceBanking, "b-1", "WalletChanged", demoCorp, ""), true},
		{bankingEvent(t, events.SourceBanking, "b-2", "WalletChanged", otherCorp, ""), false},
		{paymentsEvent("p-1", "OrderCaptured", `{"order_id":"o"}`), false},
	} {
		if match(tc.e) != tc.want {
			t.Fatalf("event %s of %s: passes %v, want %v", tc.e.ID, tc.e.Source, !tc.want, tc.want)
		}
	}
}

const eventsSubscription = `subscription($names: [String!], $after: String) { events(names: $names, after: $after) {
  cursor source event { id upstreamId name orderId pendingActions { id status } } } }`

type liveAnswer struct {
	Cursor, Source string
	Event          struct {
		ID, UpstreamID, Name string
		OrderID              *string
		PendingActions       []struct{ ID, Status string }
	}
}

// firstLive is the first event a subscription delivers.
func firstLive(t *testing.T, resp *response, field string) liveAnswer {
	t.Helper()
	var got map[string]liveAnswer
	resp.decode(t, &got)
	return got[field]
}

// A subscription to events delivers the events its session's scope sees:
// the merchant's API client the payments events, a person its
// corporation's banking-side events; a streamed event carries its pending
// action, read with it. A subscriber with a corporation is watched for
// that corporation's banking changes, once its baseline was taken.
func TestEventsSubscriptionDeliversTheScopesEvents(t *testing.T) {
	t.Parallel()
	live := func(t *testing.T) []*events.Event {
		pa := paymentsEvent("ev-pa", "PendingActionCreated", `{"individual_id":"ind-1"}`)
		pa.PendingAction = &payments.PendingAction{ID: "pa-1", IndividualID: "ind-1", Status: "pending"}
		return []*events.Event{
			bankingEvent(t, events.SourceBanking, "b-other", "WalletChanged", otherCorp, ""),
			pa,
			bankingEvent(t, events.SourceGateway, "g-own", "CardIssued", demoCorp, ""),
		}
	}
	for _, tc := range []struct {
		who     principal
		want    string
		watched []string
		actions int
		gateway bool
	}{
		{apiClient, "ev-pa", []string{demoCorp}, 1, false},
		{person, "g-own", []string{demoCorp}, 0, true},
		{staff, "b-other", nil, 0, true},
	} {
		h := newHarness(t)
		stream := useStream(h)
		stream.live = live(t)
		poll := &pollFake{}
		h.r.BankPoll = poll
		got := firstLive(t, h.as(tc.who).exec(eventsSubscription, nil), "events")
		if got.Event.UpstreamID != tc.want || got.Cursor != "c-"+tc.want || len(got.Event.PendingActions) != tc.actions {
			t.Fatalf("%s: first event %+v, want %s with %d pending actions", tc.who.kind, got, tc.want, tc.actions)
		}
		if tc.gateway != strings.Contains(mustDecode(t, got.Event.ID), "gw~") {
			t.Fatalf("%s: event id %s: a banking-side event's id is its stream position", tc.who.kind, mustDecode(t, got.Event.ID))
		}
		if watched, baselines := poll.asked(); !slices.Equal(watched, tc.watched) || !slices.Equal(baselines, tc.watched) {
			t.Fatalf("%s: watched %v after baselines %v, want %v", tc.who.kind, watched, baselines, tc.watched)
		}
		if h.payments.pendingActions.total() != 0 {
			t.Fatal("a streamed event's pending action was read again")
		}
	}
}

// mustDecode is the plain text of a global id.
func mustDecode(t *testing.T, id string) string {
	t.Helper()
	ref, err := relay.Decode(id)
	if err != nil {
		t.Fatalf("%q is not a global id", id)
	}
	return strings.Join(ref.Parts, ":")
}

// A subscription's arguments are refused before it starts: too many
// names, and an after cursor or a name the stream refuses, each naming
// its argument; nothing is watched then. A payments customer has no live
// events.
func TestEventsSubscriptionRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	stream := useStream(h)
	poll := &pollFake{}
	h.r.BankPoll = poll
	h.as(person)
	many := make([]any, 51)
	for i := range many {
		many[i] = "N"
	}
	wantFieldError(t, h.exec(eventsSubscription, map[string]any{"names": many}), "names")
	if stream.reads() != 0 {
		t.Fatal("a refused subscription read the stream")
	}
	stream.err = events.ErrStaleCursor
	wantFieldError(t, h.exec(eventsSubscription, map[string]any{"after": "old"}), "after")
	if stream.afters[0] != "old" {
		t.Fatalf("subscribed after %q", stream.afters[0])
	}
	if watched, _ := poll.asked(); len(watched) != 0 {
		t.Fatalf("a refused subscription was watched for %v", watched)
	}
	refused(t, h.as(customer).exec(eventsSubscription, nil), "FORBIDDEN", "")
}

// orderUpdates and onboarding follow the merchant's payments events of one
// order or individual; a session that never sees payments events is
// refused rather than given a silent stream.
func TestOrderAndOnboardingSubscriptions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	stream := useStream(h)
	stream.live = []*events.Event{
		paymentsEvent("ev-1", "OrderCaptured", `{"order_id":"ord-2"}`),
		paymentsEvent("ev-2", "IndividualActivated", `{"individual_id":"ind-2"}`),
		paymentsEvent("ev-3", "OrderRefunded", `{"order_id":"ord-1"}`),
		paymentsEvent("ev-4", "IndividualBlocked", `{"individual_id":"ind-1"}`),
	}
	orders := `subscription($id: ID!) { orderUpdates(orderId: $id) { cursor event { upstreamId orderId } } }`
	onboarding := `subscription($id: ID!) { onboarding(individualId: $id) { cursor event { upstreamId individualId } } }`
	h.as(apiClient)
	if got := firstLive(t, h.exec(orders, map[string]any{"id": globalOrder("ord-1")}), "orderUpdates"); got.Event.UpstreamID != "ev-3" {
		t.Fatalf("orderUpdates of ord-1 delivered %+v, want ev-3", got)
	}
	if f := stream.lastFilter(t); !slices.Equal(f.Names, []string{"OrderCreated", "OrderCaptured", "OrderRefunded", "OrderCancelled"}) {
		t.Fatalf("orderUpdates names %v", f.Names)
	}
	if got := firstLive(t, h.exec(onboarding, map[string]any{"id": "ind-1"}), "onboarding"); got.Event.UpstreamID != "ev-4" {
		t.Fatalf("onboarding of ind-1 delivered %+v, want ev-4", got)
	}

	reads := stream.reads()
	wantFieldError(t, h.exec(orders, map[string]any{"id": ""}), "orderId")
	refused(t, h.exec(orders, map[string]any{"id": globalCustomer(demoCustomer)}), "NOT_FOUND", "")
	wantFieldError(t, h.exec(onboarding, map[string]any{"id": " "}), "individualId")
	for _, who := range []principal{person, introducer, outsider} {
		refused(t, h.as(who).exec(orders, map[string]any{"id": "ord-1"}), "FORBIDDEN", "")
		refused(t, h.exec(onboarding, map[string]any{"id": "ind-1"}), "FORBIDDEN", "")
	}
	if stream.reads() != reads {
		t.Fatal("a refused subscription read the stream")
	}
}

// An event's subject is read as node(id) would read it, with the caller's
// credentials and role: the order of a payments event, the payload's
// subject of a banking-side one; null when there is none, when it is not a
// global id, when the caller's role may not see its type, or when the
// upstream does not show it to the caller.
func TestEventSubjectIsReadWithTheCallersScope(t *testing.T) {
	t.Parallel()
	subject := `subscription { events { event { upstreamId subject { __typename id ... on Order { status } ... on Person { firstName } } } } }`
	type answer struct {
		Events struct {
			Event struct {
				UpstreamID string
				Subject    *struct {
					Typename          string `json:"__typename"`
					ID                string
					Status, FirstName string
				}
			}
		}
	}
	for _, tc := range []struct {
		name string
		who  principal
		e    func(t *testing.T) *events.Event
		// want is the subject's type, "" for null.
		want string
	}{
		{"an order", staff, func(*testing.T) *events.Event { return paymentsEvent("ev-1", "OrderCaptured", `{"order_id":"ord-1"}`) }, "Order"},
		{"an order not listed", staff, func(*testing.T) *events.Event {
			return paymentsEvent("ev-1", "OrderCaptured", `{"order_id":"ord-gone"}`)
		}, ""},
		{"no order", staff, func(*testing.T) *events.Event {
			return paymentsEvent("ev-1", "IndividualActivated", `{"individual_id":"i"}`)
		}, ""},
		{"a person", person, func(t *testing.T) *events.Event {
			return bankingEvent(t, events.SourceGateway, "g-1", "PersonUpdated", demoCorp, relay.ID(relay.Person, demoPerson))
		}, "Person"},
		{"a person the upstream hides", person, func(t *testing.T) *events.Event {
			return bankingEvent(t, events.SourceGateway, "g-1", "PersonUpdated", demoCorp, relay.ID(relay.Person, "person-gone"))
		}, ""},
		{"not a global id", person, func(t *testing.T) *events.Event {
			return bankingEvent(t, events.SourceGateway, "g-1", "PersonUpdated", demoCorp, "person-anna")
		}, ""},
		{"a type the role may not see", person, func(t *testing.T) *events.Event {
			return bankingEvent(t, events.SourceGateway, "g-1", "Odd", demoCorp, globalOrder("ord-1"))
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.payments.orders.add(payments.Order{ID: "ord-1", Created: h.r.now().UTC().Add(-1e9), Currency: "EUR", Amount: 5, Status: "captured"})
			stream := useStream(h)
			stream.live = []*events.Event{tc.e(t)}
			var got answer
			h.as(tc.who).exec(subject, nil).decode(t, &got)
			s := got.Events.Event.Subject
			switch {
			case tc.want == "" && s != nil:
				t.Fatalf("subject %+v, want null", s)
			case tc.want != "" && (s == nil || s.Typename != tc.want):
				t.Fatalf("subject %+v, want a %s", s, tc.want)
			case tc.want == "Order" && (s.Status != "CAPTURED" || s.ID != globalOrder("ord-1")):
				t.Fatalf("order subject %+v", s)
			case tc.want == "Person" && s.FirstName != "Anna":
				t.Fatalf("person subject %+v", s)
			}
			if tc.name == "a type the role may not see" && h.payments.total() != 0 {
				t.Fatal("a subject the role may not see was read")
			}
		})
	}

	// A subject read that fails is the field's error.
	h := newHarness(t)
	stream := useStream(h)
	stream.live = []*events.Event{paymentsEvent("ev-1", "OrderCaptured", `{"order_id":"ord-1"}`)}
	h.payments.orders.failNext("List", unavailable("payments"))
	refused(t, h.as(staff).exec(subject, nil), "UPSTREAM_UNAVAILABLE", "")
}

// A banking-side event is read back by its id (its stream position) by the
// sessions whose scope sees it, as the subscription showed it, and is null
// for the others; a payments customer is refused.
func TestGatewayEventIsReadBackByItsID(t *testing.T) {
	t.Parallel()
	e := bankingEvent(t, events.SourceGateway, "g-1", "CardIssued", demoCorp, relay.ID(relay.Card, "card-1"))
	noCorp := bankingEvent(t, events.SourceGateway, "g-2", "Odd", "", "")
	id := relay.ID(relay.Event, relay.GatewayEventRaw(e.Cursor, e.ID))
	for _, tc := range []struct {
		who  principal
		id   string
		seen bool
	}{
		{person, id, true}, {apiClient, id, true}, {staff, id, true}, {introducer, id, true},
		{outsider, id, false},
		{introducer, relay.ID(relay.Event, relay.GatewayEventRaw(noCorp.Cursor, noCorp.ID)), false},
		{person, relay.ID(relay.Event, relay.GatewayEventRaw("c-elsewhere", e.ID)), false},
	} {
		h := newHarness(t)
		stream := useStream(h)
		stream.byID[e.ID], stream.byID[noCorp.ID] = e, noCorp
		var got eventAnswer
		h.as(tc.who).exec(eventQuery, map[string]any{"id": tc.id}).decode(t, &got)
		if tc.seen != (got.Event != nil) {
			t.Fatalf("%s %s: %+v, want seen %v", tc.who.kind, tc.who.id, got.Event, tc.seen)
		}
		if tc.seen && (got.Event.ID != id || got.Event.Name != "CardIssued" || got.Event.Payload["corporation_id"] != demoCorp) {
			t.Fatalf("%s: %+v", tc.who.kind, got.Event)
		}
	}
	h := newHarness(t)
	useStream(h).byID[e.ID] = e
	refused(t, h.as(customer).exec(eventQuery, map[string]any{"id": id}), "FORBIDDEN", "")
}

// A streamed event that cannot be decoded is skipped: the subscription
// goes on with the next one.
func TestUndecodableStreamedEventIsSkipped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	stream := useStream(h)
	stream.live = []*events.Event{paymentsEvent("ev-bad", "Broken", `"text"`), paymentsEvent("ev-ok", "OrderCreated", `{}`)}
	if got := firstLive(t, h.as(staff).exec(eventsSubscription, nil), "events"); got.Event.UpstreamID != "ev-ok" {
		t.Fatalf("delivered %+v, want ev-ok", got)
	}
	if !h.logged("undecodable event on the bus") {
		t.Fatal("the undecodable event was not logged")
	}
}
