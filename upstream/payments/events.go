package payments

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// EventsService handles the event routes (access token).
type EventsService service

// Event is an upstream event with its payload.
type Event struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt time.Time       `json:"created_at"`
}

// Get reads an event by id from /v3/events/:id, the version the onboarding
// flow uses (the event is the same under /v1: see GetV1).
func (s *EventsService) Get(ctx context.Context, id string) (*Event, error) {
	return s.get(ctx, "v3", id)
}

// GetV1 reads an event by id from /v1/events/:id, the version of the
// webhooks description.
func (s *EventsService) GetV1(ctx context.Context, id string) (*Event, error) {
	return s.get(ctx, "v1", id)
}

func (s *EventsService) get(ctx context.Context, version, id string) (*Event, error) {
	return call[Event](ctx, s.client, KeyAccessToken, http.MethodGet, version+"/events/"+url.PathEscape(id), nil)
}

// EventPage is a page of the event listing.
type EventPage struct {
	Events  []Event `json:"events"`
	HasMore bool    `json:"has_more"`
}

// List reads events created after the event `after` (all when empty),
// oldest first. The spec does not show an event listing; this is the
// upstream's documented addition for reconciliation polling.
func (s *EventsService) List(ctx context.Context, after string, limit int) (*EventPage, error) {
	q := url.Values{}
	if after != "" {
		q.Set("after", after)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return call[EventPage](ctx, s.client, KeyAccessToken, http.MethodGet, "v1/events?"+q.Encode(), nil)
}
