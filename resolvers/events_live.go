package resolvers

import (
	"context"
	"errors"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/graph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
)

// EventStream is where subscriptions read live events from.
type EventStream interface {
	Subscribe(ctx context.Context, f events.Filter, cursor string) (<-chan events.Event, error)
	Cursor(ctx context.Context) (string, error)
}

var _ EventStream = (*events.Bus)(nil)

// maxNames bounds the names one subscription may filter on.
const maxNames = 50

// subscribe adapts the bus to a GraphQL subscription channel. The channel
// closes when the subscriber leaves (ctx ends).
func (r *Resolver) subscribe(ctx context.Context, f events.Filter, after *string) (<-chan *model.LiveEvent, error) {
	if len(f.Names) > maxNames {
		return nil, gqlerr.BadInput("names", "at most %d names", maxNames)
	}
	in, err := r.Events.Subscribe(ctx, f, deref(after))
	if errors.Is(err, events.ErrBadCursor) {
		return nil, gqlerr.BadInput("after", "after must be a cursor from an earlier event")
	}
	if err != nil {
		return nil, err
	}
	out := make(chan *model.LiveEvent)
	go func() {
		defer close(out)
		for e := range in {
			ev, err := toLiveEvent(&e)
			if err != nil {
				r.Logger.Warn("undecodable event on the bus", "event_id", e.ID, "err", err)
				continue
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

func toLiveEvent(e *events.Event) (*model.LiveEvent, error) {
	ev, err := toEvent(&eventPayload{ID: e.ID, Name: e.Name, Payload: e.Payload, CreatedAt: e.CreatedAt})
	if err != nil {
		return nil, err
	}
	ev.Prefetched = true
	ev.PrefetchedPendingActions = []*model.PendingAction{}
	if e.PendingAction != nil {
		ev.PrefetchedPendingActions = append(ev.PrefetchedPendingActions, toPendingAction(e.PendingAction))
	}
	return &model.LiveEvent{Cursor: e.Cursor, Source: e.Source, Event: ev}, nil
}
