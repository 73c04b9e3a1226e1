package resolvers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/payments"
)

// The payments side of events: webhooks, upstream events read by id,
// pending actions and individuals in onboarding.

// The company's webhook: listed, registered with an HTTPS URL (anything
// else refused before the upstream is asked), and deleted; the upstream's
// own refusals reach the client with their reason.
func TestWebhooksRegisterListDelete(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(staff)
	register := `mutation($u: String!) { registerWebhook(input: {url: $u}) { webhook { id url createdAt } } }`
	for _, bad := range []string{"http://hooks.example/p", "ftp://hooks.example/x", "not a url", "/relative", "https://user:pw@hooks.example/p",
		"https://" + strings.Repeat("h", 2050)} {
		wantFieldError(t, h.exec(register, map[string]any{"u": bad}), "input.url")
	}
	h.noUpstreamCall(t, 0, "refused webhook urls")

	var got struct {
		RegisterWebhook struct {
			Webhook struct {
				ID, URL   string
				CreatedAt time.Time
			}
		} `json:"registerWebhook"`
	}
	h.exec(register, map[string]any{"u": "https://hooks.example/p"}).decode(t, &got)
	w := got.RegisterWebhook.Webhook
	if w.ID == "" || w.URL != "https://hooks.example/p" || w.CreatedAt.IsZero() {
		t.Fatalf("registered %+v", w)
	}
	h.payments.webhooks.failNext("Create", paymentsRejection(http.StatusConflict, "webhook_exists", "url", "the company has a webhook"))
	e := refused(t, h.exec(register, map[string]any{"u": "https://hooks.example/q"}), "UPSTREAM_REJECTED", "")
	if e.Upstream()["code"] != "webhook_exists" {
		t.Fatalf("a second webhook: %+v", e)
	}

	var list struct{ Webhooks []struct{ ID, URL string } }
	h.exec(`{ webhooks { id url } }`, nil).decode(t, &list)
	if len(list.Webhooks) != 1 || list.Webhooks[0].ID != w.ID {
		t.Fatalf("webhooks %+v", list.Webhooks)
	}

	del := `mutation($id: ID!) { deleteWebhook(input: {id: $id}) { deletedId } }`
	wantFieldError(t, h.exec(del, map[string]any{"id": ""}), "input.id")
	var deleted struct {
		DeleteWebhook struct{ DeletedID string } `json:"deleteWebhook"`
	}
	h.exec(del, map[string]any{"id": w.ID}).decode(t, &deleted)
	if deleted.DeleteWebhook.DeletedID != w.ID {
		t.Fatalf("deleted %+v", deleted)
	}
	refused(t, h.exec(del, map[string]any{"id": w.ID}), "NOT_FOUND", "")
	h.payments.webhooks.failNext("List", unavailable("payments"))
	refused(t, h.exec(`{ webhooks { id } }`, nil), "UPSTREAM_UNAVAILABLE", "")

	for _, who := range []principal{person, outsider, customer} {
		h := newHarness(t)
		refused(t, h.as(who).exec(register, map[string]any{"u": "https://hooks.example/p"}), "FORBIDDEN", "")
		refused(t, h.exec(`{ webhooks { id } }`, nil), "FORBIDDEN", "")
		h.noUpstreamCall(t, 0, string(who.kind))
	}
}

const eventQuery = `query($id: ID!) { event(id: $id) { id upstreamId name payload createdAt individualId orderId } }`

type eventAnswer struct {
	Event *struct {
		ID, UpstreamID, Name  string
		Payload               map[string]any
		CreatedAt             time.Time
		IndividualID, OrderID *string
	}
}

// event(id) reads an upstream event for those who see payments events
// (payments operators that are staff or API clients): its payload, and
// the ids it names; a person, introducer or another corporation's API
// client gets null without an upstream call, a payments customer
// FORBIDDEN.
func TestEventIsReadForPaymentsOperatorsOnly(t *testing.T) {
	t.Parallel()
	created := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	seed := func(h *harness) {
		h.payments.events.add(payments.Event{ID: "ev-1", Name: "OrderCaptured", CreatedAt: created,
			Payload: json.RawMessage(`{"order_id":"ord-1","amount":500,"individual_id":"ind-1"}`)})
		h.payments.events.add(payments.Event{ID: "ev-empty", Name: "Ping", CreatedAt: created, Payload: json.RawMessage(`null`)})
		h.payments.events.add(payments.Event{ID: "ev-bad", Name: "Broken", CreatedAt: created, Payload: json.RawMessage(`[1,2]`)})
	}
	for _, who := range []principal{staff, apiClient} {
		h := newHarness(t)
		seed(h)
		var got eventAnswer
		h.as(who).exec(eventQuery, map[string]any{"id": relay.ID(relay.Event, "ev-1")}).decode(t, &got)
		e := got.Event
		if e == nil || e.ID != relay.ID(relay.Event, "ev-1") || e.UpstreamID != "ev-1" || e.Name != "OrderCaptured" || !e.CreatedAt.Equal(created) ||
			e.Payload["amount"] != 500.0 || *e.OrderID != globalOrder("ord-1") || *e.IndividualID != "ind-1" {
			t.Fatalf("%s: event %+v", who.kind, e)
		}
		got = eventAnswer{}
		h.exec(eventQuery, map[string]any{"id": "ev-empty"}).decode(t, &got)
		if got.Event == nil || len(got.Event.Payload) != 0 || got.Event.OrderID != nil {
			t.Fatalf("%s: an event without payload: %+v", who.kind, got.Event)
		}
		h.exec(eventQuery, map[string]any{"id": "ev-none"}).decode(t, &got)
		if got.Event != nil {
			t.Fatalf("%s: an event the upstream does not have: %+v, want null", who.kind, got.Event)
		}
		refused(t, h.exec(eventQuery, map[string]any{"id": "ev-bad"}), "INTERNAL", "")
	}

	for _, who := range []principal{person, introducer, outsider} {
		h := newHarness(t)
		seed(h)
		var got eventAnswer
		h.as(who).exec(eventQuery, map[string]any{"id": "ev-1"}).decode(t, &got)
		if got.Event != nil {
			t.Fatalf("%s read a payments event: %+v", who.kind, got.Event)
		}
		h.noUpstreamCall(t, 0, string(who.kind))
	}
	h := newHarness(t)
	refused(t, h.as(customer).exec(eventQuery, map[string]any{"id": "ev-1"}), "FORBIDDEN", "")
	refused(t, h.exec(eventQuery, map[string]any{"id": globalOrder("ord-1")}), "NOT_FOUND", "")
	refused(t, h.as(anonymous).exec(eventQuery, map[string]any{"id": "ev-1"}), "UNAUTHENTICATED", "")
	wantFieldError(t, h.as(staff).exec(eventQuery, map[string]any{"id": ""}), "id")
	h.noUpstreamCall(t, 0, "refused event reads")
	h.payments.events.failNext("Get", unavailable("payments"))
	refused(t, h.exec(eventQuery, map[string]any{"id": "ev-1"}), "UPSTREAM_UNAVAILABLE", "")
}

// pendingActions takes exactly one of eventId and individualId; by event
// it reads the one action tied to it (none when the upstream has none),
// by individual all of them; an event's own pendingActions field asks the
// upstream only for a pending-action event.
func TestPendingActionsByEventOrIndividual(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	done := time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC)
	h.payments.pendingActions.add(payments.PendingAction{ID: "pa-1", IndividualID: "ind-1", EventID: "ev-pa", Type: "consent", Status: "completed", CompletedAt: done})
	h.payments.pendingActions.add(payments.PendingAction{ID: "pa-2", IndividualID: "ind-1", Type: "document", Status: "escalated"})
	h.payments.events.add(payments.Event{ID: "ev-pa", Name: "PendingActionCreated", Payload: json.RawMessage(`{"individual_id":"ind-1"}`)})
	h.payments.events.add(payments.Event{ID: "ev-act", Name: "IndividualActivated", Payload: json.RawMessage(`{"individual_id":"ind-1"}`)})
	h.as(staff)

	query := `query($e: ID, $i: ID) { pendingActions(eventId: $e, individualId: $i) { id individualId eventId type status createdAt completedAt } }`
	type action struct {
		ID, IndividualID, Type, Status string
		EventID                        *string
		CreatedAt, CompletedAt         *time.Time
	}
	var got struct{ PendingActions []action }
	h.exec(query, map[string]any{"i": "ind-1"}).decode(t, &got)
	if len(got.PendingActions) != 2 {
		t.Fatalf("by individual: %+v", got.PendingActions)
	}
	first, second := got.PendingActions[0], got.PendingActions[1]
	if first.Status != "COMPLETED" || *first.EventID != relay.ID(relay.Event, "ev-pa") || !first.CompletedAt.Equal(done) || first.CreatedAt != nil {
		t.Fatalf("first action %+v", first)
	}
	if second.Status != "UNKNOWN" || second.EventID != nil || second.CompletedAt != nil {
		t.Fatalf("an action of a status the gateway does not know: %+v, want UNKNOWN without event", second)
	}
	h.exec(query, map[string]any{"e": "ev-act"}).decode(t, &got)
	if len(got.PendingActions) != 0 {
		t.Fatalf("an event without an action: %+v, want none", got.PendingActions)
	}

	for _, vars := range []map[string]any{nil, {"e": "ev-pa", "i": "ind-1"}} {
		wantFieldError(t, h.exec(query, vars), "eventId")
	}
	wantFieldError(t, h.exec(query, map[string]any{"i": " "}), "individualId")
	wantFieldError(t, h.exec(query, map[string]any{"e": ""}), "eventId")
	refused(t, h.exec(query, map[string]any{"e": globalOrder("o")}), "NOT_FOUND", "")
	calls := h.payments.pendingActions.total()

	var ev struct {
		Event struct{ PendingActions []struct{ ID string } }
	}
	h.exec(`query($id: ID!) { event(id: $id) { pendingActions { id } } }`, map[string]any{"id": "ev-act"}).decode(t, &ev)
	if len(ev.Event.PendingActions) != 0 || h.payments.pendingActions.total() != calls {
		t.Fatal("an event that is not a pending action's asked for one")
	}
	h.exec(`query($id: ID!) { event(id: $id) { pendingActions { id } } }`, map[string]any{"id": "ev-pa"}).decode(t, &ev)
	if len(ev.Event.PendingActions) != 1 || ev.Event.PendingActions[0].ID != "pa-1" {
		t.Fatalf("a pending action's event: %+v", ev.Event.PendingActions)
	}

	// Several events in one query cost one read of each distinct
	// pending-action event, and none for the others.
	h.payments.pendingActions.add(payments.PendingAction{ID: "pa-3", IndividualID: "ind-2", EventID: "ev-pa2", Type: "consent", Status: "pending"})
	h.payments.events.add(payments.Event{ID: "ev-pa2", Name: "PendingActionCreated", Payload: json.RawMessage(`{"individual_id":"ind-2"}`)})
	before := h.payments.pendingActions.calls("ByEvent")
	var many map[string]struct{ PendingActions []struct{ ID string } }
	h.exec(`query($a: ID!, $b: ID!, $c: ID!) {
	  a: event(id: $a) { pendingActions { id } }
	  b: event(id: $b) { pendingActions { id } }
	  c: event(id: $c) { pendingActions { id } }
	  again: event(id: $a) { pendingActions { id } } }`, map[string]any{"a": "ev-pa", "b": "ev-pa2", "c": "ev-act"}).decode(t, &many)
	if len(many["a"].PendingActions) != 1 || len(many["b"].PendingActions) != 1 || len(many["c"].PendingActions) != 0 || len(many["again"].PendingActions) != 1 {
		t.Fatalf("pending actions per event: %+v", many)
	}
	if n := h.payments.pendingActions.calls("ByEvent") - before; n != 2 {
		t.Fatalf("two distinct pending-action events and another cost %d reads, want 2", n)
	}

	h.payments.pendingActions.failNext("ByIndividual", paymentsRejection(http.StatusTooManyRequests, "rate_limited", "", "slow down"))
	refused(t, h.exec(query, map[string]any{"i": "ind-1"}), "RATE_LIMITED", "")
}

// Individuals are listed by status (UNKNOWN is not one to list by) and
// onboarded again by id; an unknown status reads as UNKNOWN, an absent
// form URL and creation time as null.
func TestIndividualsListedAndOnboarded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	created := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	h.payments.individuals.add(payments.Individual{ID: "ind-1", Status: "onboarding_requested", FormURL: "https://form.test/1", CreatedAt: created})
	h.payments.individuals.add(payments.Individual{ID: "ind-2", Status: "hibernating"})
	h.as(staff)
	var list struct {
		Individuals []struct {
			ID, Status string
			FormURL    *string
			CreatedAt  *time.Time
		}
	}
	h.exec(`{ individuals { id status formUrl createdAt } }`, nil).decode(t, &list)
	if len(list.Individuals) != 2 || *list.Individuals[0].FormURL != "https://form.test/1" || !list.Individuals[0].CreatedAt.Equal(created) ||
		list.Individuals[1].Status != "UNKNOWN" || list.Individuals[1].FormURL != nil || list.Individuals[1].CreatedAt != nil {
		t.Fatalf("individuals %+v", list.Individuals)
	}
	wantFieldError(t, h.exec(`{ individuals(status: UNKNOWN) { id } }`, nil), "status")

	onboard := `mutation($id: ID!) { onboardIndividual(input: {individualId: $id}) { individual { id status formUrl } } }`
	var got struct {
		OnboardIndividual struct {
			Individual struct{ ID, Status, FormURL string }
		} `json:"onboardIndividual"`
	}
	h.exec(onboard, map[string]any{"id": "ind-1"}).decode(t, &got)
	if i := got.OnboardIndividual.Individual; i.ID != "ind-1" || i.Status != "ONBOARDING_REQUESTED" || i.FormURL == "" {
		t.Fatalf("onboarded %+v", i)
	}
	calls := h.payments.individuals.calls("Onboard")
	wantFieldError(t, h.exec(onboard, map[string]any{"id": ""}), "input.individualId")
	if h.payments.individuals.calls("Onboard") != calls {
		t.Fatal("an empty id was sent")
	}
	refused(t, h.exec(onboard, map[string]any{"id": "ind-none"}), "NOT_FOUND", "")
	h.payments.individuals.failNext("Onboard", paymentsRejection(http.StatusConflict, "invalid_state", "", "the individual is active"))
	if e := refused(t, h.exec(onboard, map[string]any{"id": "ind-1"}), "UPSTREAM_REJECTED", ""); e.Message != "the individual is active" {
		t.Fatalf("refusal %+v", e)
	}
}

// Payments events are the merchant's: a person never sees them, even
// where the policy lets persons operate payments.
func TestPersonsNeverSeePaymentsEvents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.r.Policy = NewPolicy([]string{"STAFF", "API_CLIENT", "PERSON"}, []string{demoCorp}, 1000)
	h.payments.events.add(payments.Event{ID: "ev-1", Name: "OrderCaptured", Payload: json.RawMessage(`{"order_id":"ord-1"}`)})
	stream := useStream(h)
	var got eventAnswer
	h.as(person).exec(eventQuery, map[string]any{"id": "ev-1"}).decode(t, &got)
	if got.Event != nil {
		t.Fatalf("a person read a payments event: %+v", got.Event)
	}
	h.exec(`{ eventsCursor }`, nil).noErrors(t)
	if sc := stream.lastFilter(t).Scope; sc.Payments {
		t.Fatalf("a person's scope %+v lets payments events through", sc)
	}
	h.noUpstreamCall(t, 0, "a person's events cursor")
}

// The merchant's event operations are a payments operator's: signed out
// they are UNAUTHENTICATED, for a person FORBIDDEN, without an upstream
// call; reading an event or the stream's cursor is open to a person (its
// own scope).
func TestEventOperationsNeedAPaymentsOperator(t *testing.T) {
	t.Parallel()
	for _, q := range []string{
		`{ webhooks { id } }`,
		`{ pendingActions(individualId: "x") { id } }`,
		`{ individuals { id } }`,
		`mutation { registerWebhook(input: {url: "https://127.0.0.1:1/h"}) { webhook { id } } }`,
		`mutation { deleteWebhook(input: {id: "wh-1"}) { deletedId } }`,
		`mutation { onboardIndividual(input: {individualId: "x"}) { individual { id } } }`,
	} {
		for who, code := range map[principal]string{anonymous: "UNAUTHENTICATED", person: "FORBIDDEN"} {
			h := newHarness(t)
			refused(t, h.as(who).exec(q, nil), code, "")
			h.noUpstreamCall(t, 0, string(who.kind))
		}
	}
	h := newHarness(t)
	useStream(h)
	h.as(person).exec(`{ event(id: "x") { id } eventsCursor }`, nil).noErrors(t)
}
