package e2e

import (
	"net/http"
	"testing"
)

// Tests of webhooks, events, onboarding and pending actions through the graph.

func TestWebhookRegistrationRules(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	const register = `mutation($url: String!) { registerWebhook(input: {url: $url}) { webhook { id url createdAt } } }`
	var d struct {
		RegisterWebhook struct {
			Webhook struct {
				ID, URL, CreatedAt string
			} `json:"webhook"`
		} `json:"registerWebhook"`
	}
	// Loopback HTTPS: nothing listens there, and no traffic leaves the machine.
	g.query(t, register, map[string]any{"url": "https://127.0.0.1:1/hooks/payments"}).decode(t, &d)
	if d.RegisterWebhook.Webhook.ID == "" || d.RegisterWebhook.Webhook.CreatedAt == "" {
		t.Fatalf("registered webhook: %+v", d)
	}

	second := g.query(t, register, map[string]any{"url": "https://127.0.0.1:2/other"})
	if second.code() != "UPSTREAM_REJECTED" || second.Errors[0].Extensions["upstream"].(map[string]any)["code"] != "webhook_exists" {
		t.Errorf("second webhook: want UPSTREAM_REJECTED webhook_exists, got %+v", second.Errors)
	}

	var list struct {
		Webhooks []struct{ ID, URL string } `json:"webhooks"`
	}
	g.query(t, `{ webhooks { id url } }`, nil).decode(t, &list)
	if len(list.Webhooks) != 1 || list.Webhooks[0].ID != d.RegisterWebhook.Webhook.ID {
		t.Fatalf("webhooks: %+v", list)
	}
	const del = `mutation($id: ID!) { deleteWebhook(input: {id: $id}) { deletedId } }`
	var gone struct {
		DeleteWebhook struct{ DeletedID string } `json:"deleteWebhook"`
	}
	g.query(t, del, map[string]any{"id": list.Webhooks[0].ID}).decode(t, &gone)
	if gone.DeleteWebhook.DeletedID != list.Webhooks[0].ID {
		t.Errorf("deleteWebhook: %+v", gone)
	}
	g.query(t, `{ webhooks { id } }`, nil).decode(t, &list)
	if len(list.Webhooks) != 0 {
		t.Errorf("webhook still listed after delete: %+v", list)
	}
	if resp := g.query(t, del, map[string]any{"id": list.Webhooks}); resp.code() != "BAD_USER_INPUT" {
		t.Errorf("delete without id: %+v", resp.Errors)
	}
	if resp := g.query(t, del, map[string]any{"id": "00000000-0000-0000-0000-000000000000"}); resp.code() != "NOT_FOUND" {
		t.Errorf("delete unknown: want NOT_FOUND, got %+v", resp.Errors)
	}
}

type eventData struct {
	ID             string         `json:"id"`
	Name           string         `json:"name"`
	Payload        map[string]any `json:"payload"`
	IndividualID   string         `json:"individualId"`
	PendingActions []struct {
		ID      string `json:"id"`
		Status  string `json:"status"`
		EventID string `json:"eventId"`
	} `json:"pendingActions"`
}

func (g *testGateway) event(t *testing.T, id string) *eventData {
	t.Helper()
	var d struct {
		Event *eventData `json:"event"`
	}
	g.query(t, `query($id: ID!) { event(id: $id) { id name payload individualId pendingActions { id status eventId } } }`,
		map[string]any{"id": id}).decode(t, &d)
	return d.Event
}

type pendingAction struct {
	ID           string `json:"id"`
	IndividualID string `json:"individualId"`
	EventID      string `json:"eventId"`
	Status       string `json:"status"`
	Type         string `json:"type"`
}

func (g *testGateway) pendingActions(t *testing.T, arg, id string) []pendingAction {
	t.Helper()
	var d struct {
		PendingActions []pendingAction `json:"pendingActions"`
	}
	g.query(t, `query($id: ID!) { pendingActions(`+arg+`: $id) { id individualId eventId status type } }`,
		map[string]any{"id": id}).decode(t, &d)
	return d.PendingActions
}

type sandboxEvent struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func TestOnboardingFromRequestToActivationAndBlocking(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	var ind struct {
		ID string `json:"id"`
	}
	g.sandbox(t, http.MethodPost, "/_sandbox/individuals", map[string]any{}, &ind)

	// A merchant finds those who dropped off and sends them to the form again.
	var listed struct {
		Individuals []struct{ ID, Status string } `json:"individuals"`
	}
	g.query(t, `{ individuals(status: ONBOARDING_REQUESTED) { id status } }`, nil).decode(t, &listed)
	found := false
	for _, i := range listed.Individuals {
		found = found || (i.ID == ind.ID && i.Status == "ONBOARDING_REQUESTED")
	}
	if !found {
		t.Fatalf("individual %s not listed as ONBOARDING_REQUESTED: %+v", ind.ID, listed)
	}
	const onboard = `mutation($id: ID!) { onboardIndividual(input: {individualId: $id}) { individual { id status formUrl } } }`
	var ob struct {
		OnboardIndividual struct {
			Individual struct{ ID, Status, FormURL string } `json:"individual"`
		} `json:"onboardIndividual"`
	}
	g.query(t, onboard, map[string]any{"id": ind.ID}).decode(t, &ob)
	if ob.OnboardIndividual.Individual.Status != "ONBOARDING_REQUESTED" || ob.OnboardIndividual.Individual.FormURL == "" {
		t.Fatalf("onboard: %+v", ob)
	}

	// The user submits the form (in a browser; here the control API).
	var submitted struct {
		Event sandboxEvent `json:"event"`
	}
	g.sandbox(t, http.MethodPost, "/_sandbox/individuals/"+ind.ID+"/submit", nil, &submitted)
	ev := g.event(t, submitted.Event.ID)
	if ev == nil || ev.Name != "IndividualOnboardingDataProvided" || ev.IndividualID != ind.ID {
		t.Fatalf("data-provided event: %+v", ev)
	}
	if resp := g.query(t, onboard, map[string]any{"id": ind.ID}); resp.code() != "UPSTREAM_REJECTED" {
		t.Errorf("onboard after submission: want UPSTREAM_REJECTED, got %+v", resp.Errors)
	}

	// The consent step: created with the submission, read both ways.
	byIndividual := g.pendingActions(t, "individualId", ind.ID)
	if len(byIndividual) != 1 || byIndividual[0].Status != "PENDING" || byIndividual[0].Type != "consent" {
		t.Fatalf("pending actions of the individual: %+v", byIndividual)
	}
	created := g.event(t, byIndividual[0].EventID)
	if created == nil || created.Name != "PendingActionCreated" || len(created.PendingActions) != 1 || created.PendingActions[0].ID != byIndividual[0].ID {
		t.Fatalf("PendingActionCreated event with its pending action: %+v", created)
	}

	var completed struct {
		Event sandboxEvent `json:"event"`
	}
	g.sandbox(t, http.MethodPost, "/_sandbox/pending_actions/"+byIndividual[0].ID+"/complete", nil, &completed)
	g.resetStats(t)
	byEvent := g.pendingActions(t, "eventId", completed.Event.ID)
	if len(byEvent) != 1 || byEvent[0].ID != byIndividual[0].ID || byEvent[0].Status != "COMPLETED" {
		t.Fatalf("pending action by the completion event: %+v", byEvent)
	}
	if s := g.stats(t); s.Total != 1 || s.Routes["GET /payments/v3/pending_actions"] != 1 {
		t.Errorf("pendingActions(eventId) should cost one request (rule 4), cost %v", s.Routes)
	}

	var activated struct {
		Event sandboxEvent `json:"event"`
	}
	g.sandbox(t, http.MethodPost, "/_sandbox/individuals/"+ind.ID+"/activate", nil, &activated)
	if ev := g.event(t, activated.Event.ID); ev == nil || ev.Name != "IndividualActivated" || ev.IndividualID != ind.ID || len(ev.PendingActions) != 0 {
		t.Errorf("activated event: %+v", ev)
	}
	var gotList struct {
		Individuals []struct{ ID string } `json:"individuals"`
	}
	g.query(t, `{ individuals(status: ACTIVE) { id } }`, nil).decode(t, &gotList)
	if len(gotList.Individuals) == 0 {
		t.Error("no ACTIVE individual after activation")
	}

	// A second individual is rejected.
	var other struct {
		ID string `json:"id"`
	}
	g.sandbox(t, http.MethodPost, "/_sandbox/individuals", map[string]any{}, &other)
	g.sandbox(t, http.MethodPost, "/_sandbox/individuals/"+other.ID+"/submit", nil, nil)
	var blocked struct {
		Event sandboxEvent `json:"event"`
	}
	g.sandbox(t, http.MethodPost, "/_sandbox/individuals/"+other.ID+"/block", map[string]any{"reason": "document_expired"}, &blocked)
	ev = g.event(t, blocked.Event.ID)
	if ev == nil || ev.Name != "IndividualBlocked" || ev.IndividualID != other.ID || ev.Payload["reason"] != "document_expired" {
		t.Errorf("blocked event: %+v", ev)
	}
}
