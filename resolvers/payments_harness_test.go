package resolvers

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
)

// orders(start, end) answers the orders created on those days, read with
// one listing of the window.
func TestOrdersOfAWindow(t *testing.T) {
	h := newHarness(t)
	day := func(d int) time.Time { return time.Date(2025, 3, d, 12, 0, 0, 0, time.UTC) }
	for id, d := range map[string]int{"ord-1": 1, "ord-2": 2, "ord-9": 9} {
		h.payments.orders.add(payments.Order{ID: id, Created: day(d), Customer: payments.OrderCustomer{ID: demoCustomer}, Currency: "EUR", Status: "captured", Amount: 700})
	}
	var got struct {
		Orders []struct{ UpstreamID string }
	}
	h.as(staff).exec(`{ orders(start: "2025-03-01", end: "2025-03-02") { upstreamId } }`, nil).decode(t, &got)
	ids := map[string]bool{}
	for _, o := range got.Orders {
		ids[o.UpstreamID] = true
	}
	if len(ids) != 2 || !ids["ord-1"] || !ids["ord-2"] {
		t.Fatalf("orders of March 1-2: %v, want ord-1 and ord-2", got.Orders)
	}
	if n := h.payments.orders.calls("List"); n != 1 {
		t.Fatalf("%d order listings, want 1", n)
	}
}

// Listing individuals is an addition to the payments spec: with it the
// listing is served, without it (strict mode) the field says so as
// UPSTREAM_UNAVAILABLE and asks nothing of the upstream.
func TestIndividualsNeedTheUpstreamsListing(t *testing.T) {
	query := `{ individuals(status: ONBOARDING_REQUESTED) { id status } }`
	h := newHarness(t)
	h.payments.individuals.add(payments.Individual{ID: "ind-1", Status: "onboarding_requested"})
	h.payments.individuals.add(payments.Individual{ID: "ind-2", Status: "active"})
	var got struct{ Individuals []struct{ ID, Status string } }
	h.as(staff).exec(query, nil).decode(t, &got)
	if len(got.Individuals) != 1 || got.Individuals[0].Status != "ONBOARDING_REQUESTED" {
		t.Fatalf("individuals: %+v, want ind-1 only", got.Individuals)
	}

	h.payments.specOnly = true
	if code := h.exec(query, nil).code(t); code != "UPSTREAM_UNAVAILABLE" {
		t.Fatalf("strict mode: %s, want UPSTREAM_UNAVAILABLE", code)
	}
	if n := h.payments.individuals.calls("List"); n != 1 {
		t.Fatalf("strict mode still listed: %d listings", n)
	}
}

// Pending actions are read by individual, or by event through the read
// cache.
func TestPendingActionsByIndividualAndByEvent(t *testing.T) {
	h := newHarness(t)
	h.payments.pendingActions.add(payments.PendingAction{ID: "pa-1", IndividualID: "ind-1", EventID: "ev-1", Type: "document", Status: "pending", CreatedAt: time.Now()})
	h.payments.events.add(payments.Event{ID: "ev-1", Name: "IndividualActivated", Payload: json.RawMessage(`{"individual_id":"ind-1"}`), CreatedAt: time.Now()})
	h.as(staff)

	var byIndividual, byEvent struct{ PendingActions []struct{ Type string } }
	h.exec(`{ pendingActions(individualId: "ind-1") { type } }`, nil).decode(t, &byIndividual)
	h.exec(`query($e: ID) { pendingActions(eventId: $e) { type } }`, map[string]any{"e": relay.ID(relay.Event, "ev-1")}).decode(t, &byEvent)
	for name, got := range map[string]int{"by individual": len(byIndividual.PendingActions), "by event": len(byEvent.PendingActions)} {
		if got != 1 {
			t.Fatalf("%s: %d pending actions, want 1", name, got)
		}
	}
	if h.payments.pendingActions.calls("ByIndividual") != 1 || h.payments.pendingActions.calls("ByEvent") != 1 {
		t.Fatal("each read should be one upstream call")
	}

	var ev struct{ Event struct{ Name string } }
	h.exec(`query($e: ID!) { event(id: $e) { name } }`, map[string]any{"e": relay.ID(relay.Event, "ev-1")}).decode(t, &ev)
	if ev.Event.Name != "IndividualActivated" {
		t.Fatalf("event: %+v", ev.Event)
	}
}

// An upstream that is down is UPSTREAM_UNAVAILABLE for as long as it is,
// and served again once it answers.
func TestAnUpstreamThatIsDownThenHeals(t *testing.T) {
	h := newHarness(t)
	h.as(staff)
	h.payments.customers.failAlways("List", unavailable("payments"))
	for range 2 {
		if code := h.exec(`{ customers { id } }`, nil).code(t); code != "UPSTREAM_UNAVAILABLE" {
			t.Fatalf("payments down: %s, want UPSTREAM_UNAVAILABLE", code)
		}
	}
	h.payments.customers.failAlways("List", nil)
	var got struct{ Customers []struct{ ID string } }
	h.exec(`{ customers { id } }`, nil).decode(t, &got)
	if len(got.Customers) != 1 {
		t.Fatalf("healed: %d customers, want 1", len(got.Customers))
	}
}

// A payments refusal carries the upstream's own (string) code and field.
func TestPaymentsRefusalCarriesItsCode(t *testing.T) {
	h := newHarness(t)
	h.payments.customers.failNext("Get", paymentsRejection(http.StatusUnprocessableEntity, "invalid_request", "id", "bad id"))
	e := h.as(staff).exec(`query($id: ID!) { customer(id: $id) { number } }`, map[string]any{"id": relay.ID(relay.Customer, demoCustomer)}).only(t)
	up := e.Upstream()
	if e.Code() != "UPSTREAM_REJECTED" || up["service"] != "payments" || up["code"] != "invalid_request" || up["field"] != "id" {
		t.Fatalf("got %s %v, want UPSTREAM_REJECTED with payments' invalid_request on id", e.Code(), up)
	}
}

// The cards a person sees, from the one card listing.
func TestCardsOfTheSession(t *testing.T) {
	h := newHarness(t)
	h.banking.cards.add(&banking.Card{ID: "card-1", Status: "active", Type: "virtual", Brand: "visa", Region: "EU", Currency: "EUR", FundingSourceID: demoWalletEUR})
	var got struct{ Cards []struct{ UpstreamID string } }
	h.as(person).exec(`{ cards { upstreamId } }`, nil).decode(t, &got)
	if len(got.Cards) != 1 || got.Cards[0].UpstreamID != "card-1" {
		t.Fatalf("cards: %+v", got.Cards)
	}
	if n := h.banking.cards.calls("List"); n != 1 {
		t.Fatalf("%d card listings, want 1", n)
	}
}
