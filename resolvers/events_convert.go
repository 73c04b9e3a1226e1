package resolvers

import (
	"encoding/json"
	"strings"

	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/upstream/payments"
)

func toWebhook(w *payments.Webhook) *model.Webhook {
	return &model.Webhook{ID: w.ID, URL: w.URL, CreatedAt: w.CreatedAt}
}

// eventPayload is an event from the upstream or from the bus.
type eventPayload = payments.Event

func toEvent(e *eventPayload) (*model.Event, error) {
	payload := map[string]any{}
	if len(e.Payload) > 0 && string(e.Payload) != "null" {
		if err := json.Unmarshal(e.Payload, &payload); err != nil {
			return nil, err
		}
	}
	out := &model.Event{ID: e.ID, Name: e.Name, Payload: payload, CreatedAt: e.CreatedAt}
	if v, ok := payload["individual_id"].(string); ok {
		out.IndividualID = &v
	}
	if v, ok := payload["order_id"].(string); ok {
		out.OrderID = &v
	}
	return out, nil
}

func toPendingAction(p *payments.PendingAction) *model.PendingAction {
	status := model.PendingActionStatus(strings.ToUpper(p.Status))
	if !status.IsValid() {
		status = model.PendingActionStatusUnknown
	}
	out := &model.PendingAction{ID: p.ID, IndividualID: p.IndividualID, EventID: strPtr(p.EventID), Type: p.Type, Status: status}
	if !p.CreatedAt.IsZero() {
		t := p.CreatedAt
		out.CreatedAt = &t
	}
	if !p.CompletedAt.IsZero() {
		t := p.CompletedAt
		out.CompletedAt = &t
	}
	return out
}

func toIndividual(i *payments.Individual) *model.Individual {
	status := model.IndividualStatus(strings.ToUpper(i.Status))
	if !status.IsValid() {
		status = model.IndividualStatusUnknown
	}
	out := &model.Individual{ID: i.ID, Status: status, FormURL: strPtr(i.FormURL)}
	if !i.CreatedAt.IsZero() {
		t := i.CreatedAt
		out.CreatedAt = &t
	}
	return out
}
