package paymentsfeed

import (
	"context"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/upstream/payments"
)

// What the feed asks of the payments upstream: one small interface per
// service it calls, holding only the methods it calls, each satisfied by
// payments.Client's service as it is; and of the bus, Publish. Tests give
// fakes.

// EventReader reads an event by id (payments.Client.Events).
type EventReader interface {
	Get(ctx context.Context, id string) (*payments.Event, error)
}

// EventLister pages through the event listing (payments.Client.Events).
type EventLister interface {
	List(ctx context.Context, after string, limit int) (*payments.EventPage, error)
}

// PendingActionReader reads the pending action tied to an event
// (payments.Client.PendingActions).
type PendingActionReader interface {
	ByEvent(ctx context.Context, eventID string) (*payments.PendingAction, error)
}

// EventsBreaker tells the state of the circuit breaker of the event routes
// ("open", "half-open", "closed"; payments.Client).
type EventsBreaker interface {
	EventsBreakerState() string
}

// Publisher is where the feed's events go (events.Bus).
type Publisher interface {
	Publish(ctx context.Context, e events.Event) error
}

var (
	_ Publisher           = (*events.Bus)(nil)
	_ EventReader         = (*payments.EventsService)(nil)
	_ EventLister         = (*payments.EventsService)(nil)
	_ PendingActionReader = (*payments.PendingActionsService)(nil)
	_ EventsBreaker       = (*payments.Client)(nil)
)
