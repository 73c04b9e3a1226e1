package payments

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// PendingActionsService handles the pending-action route (access token).
type PendingActionsService service

// PendingAction is a consent step an individual must complete. The spec
// does not show its fields; these are the upstream's documented ones.
type PendingAction struct {
	ID           string    `json:"id"`
	IndividualID string    `json:"individual_id"`
	EventID      string    `json:"event_id"`
	Type         string    `json:"type"`
	Status       string    `json:"status"`
	CreatedAt    time.Time `json:"created_at"`
	CompletedAt  time.Time `json:"completed_at,omitzero"`
}

// ByEvent reads the pending action tied to an event: one request, the way
// the spec's rule 4 prefers.
func (s *PendingActionsService) ByEvent(ctx context.Context, eventID string) (*PendingAction, error) {
	return call[PendingAction](ctx, s.client, KeyAccessToken, http.MethodGet, "v3/pending_actions?event_id="+url.QueryEscape(eventID), nil)
}

// ByIndividual lists an individual's pending actions.
func (s *PendingActionsService) ByIndividual(ctx context.Context, individualID string) ([]PendingAction, error) {
	return callList[PendingAction](ctx, s.client, KeyAccessToken, http.MethodGet, "v3/pending_actions?individual_id="+url.QueryEscape(individualID), nil)
}
