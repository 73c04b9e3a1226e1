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

// Get reads an event by id from /v3/events/:id. The spec serves every
// event under both /v1 and /v3 with the same answer; the client reads one
// of them, the version of the onboarding flow, so that one route carries
// every event read (one breaker, one figure in the sandbox's counts).
func (s *EventsService) Get(ctx context.Context, id string) (*Event, error) {
	return call[Event](ctx, s.client, KeyAccessToken, http.MethodGet, "v3/events/"+url.PathEscape(id), nil)
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
