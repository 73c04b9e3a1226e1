package resolvers

import (
	"context"
	"errors"
	"sync"

	"github.com/google/uuid"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/reply"
	"github.com/fingraph/fingraph/session"
)

// EventStream is where subscriptions read live events from.
type EventStream interface {
	SubscribeSink(ctx context.Context, f events.Filter, cursor string, sink events.Sink) error
	CursorFor(ctx context.Context, f events.Filter) (string, error)
	History(ctx context.Context, f events.Filter, before string, limit int) (*events.History, error)
	Publish(ctx context.Context, e events.Event) error
	Lookup(ctx context.Context, cursor, source, id string) (*events.Event, error)
}

var _ EventStream = (*events.Bus)(nil)

// BankPolling is told of every live subscriber with a corporation, so that
// the banking changes made outside the gateway are polled for while one
// listens (bankpoll.Poller). Watch keeps ctx, whose session's credentials the
// polls may use, until it ends.
type BankPolling interface {
	Watch(ctx context.Context, corporationID string)
	// Baseline returns once the corporation's banking listings were read
	// at least once, so that any change after it is announced.
	Baseline(ctx context.Context, corporationID string)
}

// bankBaseline makes sure the banking changes of the session's corporation
// are announced from now on: before a client is given a starting point
// (eventsCursor) or a subscription starts receiving, the corporation's
// first reading (which announces nothing) has been taken.
func (r *Resolver) bankBaseline(ctx context.Context) {
	if r.BankPoll == nil {
		return
	}
	if s := session.From(ctx); s != nil && s.CorporationID != "" {
		r.BankPoll.Baseline(ctx, s.CorporationID)
	}
}

// watchBankChanges registers the subscriber of ctx, when its session
// belongs to a corporation, as demand for that corporation's banking
// changes.
func (r *Resolver) watchBankChanges(ctx context.Context) {
	if r.BankPoll == nil {
		return
	}
	if s := session.From(ctx); s != nil && s.CorporationID != "" {
		r.BankPoll.Watch(ctx, s.CorporationID)
	}
}

// maxNames bounds the names one subscription may filter on.
const maxNames = 50

// subscribe adapts the bus to a GraphQL subscription channel, with only
// the events sc lets through. The channel closes when the subscriber
// leaves (ctx ends).
func (r *Resolver) subscribe(ctx context.Context, sc *eventScope, f events.Filter, after *string) (<-chan *model.LiveEvent, error) {
	if len(f.Names) > maxNames {
		return nil, gqlerr.BadInput("names", "at most %d names", maxNames)
	}
	f.Match = sc.match(f.Match)
	// The bus reads only the scope's subjects for a resume, and the
	// fan-out offers a scope of some corporations only (a person, an
	// introducer, an API client that is no payments operator) those
	// corporations' events alone, rather than checking it for every event.
	f.Scope = sc.busScope()
	out := make(chan *model.LiveEvent, liveChanBuffer)
	// On the gateway's websocket transport the sink tells the transport
	// of each event it puts into the channel, so that no goroutine waits
	// on the channel between events.
	sink := &liveSink{ctx: ctx, out: out, r: r, signal: reply.ClaimStream(ctx)}
	if err := r.Events.SubscribeSink(ctx, f, deref(after), sink); err != nil {
		sink.signal.Unclaim()
		return nil, streamArgError(err)
	}
	return out, nil
}

// streamArgError is the client's error for an after cursor or a name the
// event stream refused; other errors pass through.
func streamArgError(err error) error {
	switch {
	case errors.Is(err, events.ErrBadCursor):
		return gqlerr.BadInput("after", "after must be a cursor from an earlier event")
	case errors.Is(err, events.ErrStaleCursor):
		return gqlerr.BadInput("after", "after is a cursor of an earlier event stream (it was reset); read the state again and subscribe without after")
	case errors.Is(err, events.ErrFutureCursor):
		return gqlerr.BadInput("after", "after is past the newest event; use eventsCursor or a cursor from a received event")
	case errors.Is(err, events.ErrBadName):
		return gqlerr.BadInput("names", "event names are letters, digits, '_' and '-'")
	}
	return err
}

// liveSink turns bus events into GraphQL values straight into the channel
// gqlgen reads: no goroutine per subscription in between. The value of an
// event is built once and shared by every subscription that gets it.
//
// The channel is small (liveChanBuffer): a subscription holds a buffer of
// events.SubscriberBuffer slots for its whole life, most of it idle, so
// the events beyond the channel wait in a backlog made only when a burst
// needs it, moved into the channel by a goroutine that lives while there
// is a backlog. A subscriber is still dropped when SubscriberBuffer events
// wait for it, channel and backlog together.
//
// With a claimed stream (reply.ClaimStream), every value put into the
// channel, and its close, is signalled after it happened.
type liveSink struct {
	ctx    context.Context
	out    chan *model.LiveEvent
	r      *Resolver
	signal reply.Stream

	mu      sync.Mutex
	backlog []*model.LiveEvent
	// pumping is set while a goroutine moves the backlog into out; closing
	// when Close came meanwhile: that goroutine closes out once the
	// backlog is delivered (or the subscriber left).
	pumping, closing bool
}

// liveChanBuffer is the capacity of a subscription's channel.
const liveChanBuffer = 8

// liveEventMemo keys the shared GraphQL value of an event.
const liveEventMemo = "resolvers.LiveEvent"

func (s *liveSink) convert(e *events.Event) (*model.LiveEvent, bool) {
	v := e.Memo(liveEventMemo, func(e *events.Event) any {
		ev, err := toLiveEvent(e)
		if err != nil {
			s.r.Logger.Warn("undecodable event on the bus", "event_id", e.ID, "err", err)
			return (*model.LiveEvent)(nil)
		}
		return ev
	})
	ev, _ := v.(*model.LiveEvent)
	return ev, ev != nil
}

// Offer implements events.Sink.
func (s *liveSink) Offer(e *events.Event) bool {
	ev, ok := s.convert(e)
	if !ok {
		return true // skipped, not full
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.pumping {
		select {
		case s.out <- ev:
			s.signal.Sent()
			return true
		default:
		}
	}
	if len(s.backlog)+len(s.out) >= events.SubscriberBuffer {
		return false
	}
	s.backlog = append(s.backlog, ev)
	if !s.pumping {
		s.pumping = true
		go s.pump()
	}
	return true
}

// pump moves the backlog into the channel, in order, and ends with it.
func (s *liveSink) pump() {
	for {
		s.mu.Lock()
		if len(s.backlog) == 0 {
			s.stopPumping()
			s.mu.Unlock()
			return
		}
		// The event stays in the backlog, and counts as waiting, until
		// it is in the channel; only this goroutine takes from the
		// backlog.
		ev := s.backlog[0]
		s.mu.Unlock()
		select {
		case s.out <- ev:
			s.signal.Sent()
			s.mu.Lock()
			s.backlog[0] = nil
			s.backlog = s.backlog[1:]
			s.mu.Unlock()
		case <-s.ctx.Done():
			s.mu.Lock()
			s.stopPumping()
			s.mu.Unlock()
			return
		}
	}
}

// stopPumping ends the pump's turn, closing the channel when Close came
// meanwhile. Call with mu held.
func (s *liveSink) stopPumping() {
	s.backlog, s.pumping = nil, false
	if s.closing {
		close(s.out)
		s.signal.Closed()
	}
}

// Send implements events.Sink.
func (s *liveSink) Send(ctx context.Context, e *events.Event) error {
	ev, ok := s.convert(e)
	if !ok {
		return nil
	}
	select {
	case s.out <- ev:
		s.signal.Sent()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close implements events.Sink: the bus dropped this subscriber (too slow)
// or lost its stream, so the subscription ends with an error the client
// sees, saying it may resume with the last cursor it received.
func (s *liveSink) Close(err error) {
	if err != nil && s.ctx.Err() == nil {
		gqlerr.EndStream(s.ctx, endReason(err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pumping {
		s.closing = true // after the backlog, as the events before it
		return
	}
	close(s.out)
	s.signal.Closed()
}

// endReason is the client's error for a subscription the bus ended.
func endReason(err error) error {
	if errors.Is(err, events.ErrSlowSubscriber) {
		return gqlerr.New(gqlerr.RateLimited, "subscription dropped: events arrived faster than it read them; subscribe again with after set to the cursor of the last event received")
	}
	return gqlerr.New(gqlerr.UpstreamUnavailable, "subscription ended: the event stream is unavailable; subscribe again with after set to the cursor of the last event received")
}

func toLiveEvent(e *events.Event) (*model.LiveEvent, error) {
	ev, err := toEvent(&eventPayload{ID: e.ID, Name: e.Name, Payload: e.Payload, CreatedAt: e.CreatedAt})
	if err != nil {
		return nil, err
	}
	if events.BankingSide(e.Source) {
		ev.GatewayCursor = e.Cursor
	}
	ev.Shared = &sharedSubject{}
	ev.Prefetched = true
	ev.PrefetchedPendingActions = []*model.PendingAction{}
	if e.PendingAction != nil {
		ev.PrefetchedPendingActions = append(ev.PrefetchedPendingActions, toPendingAction(e.PendingAction))
	}
	return &model.LiveEvent{Cursor: e.Cursor, Source: e.Source, Event: ev}, nil
}

// publishGatewayEvent announces a change the gateway made upstream on the
// banking side, so dashboards see it next to the payments events: the
// change of corporation corpID (its visibility) to the entity with global
// id subject (Event.subject; "" when there is none to show). The upstream
// has already acted, so a failure is logged, not returned.
func (r *Resolver) publishGatewayEvent(ctx context.Context, name, corpID, subject string, payload map[string]any) {
	r.publishGatewayEventID(ctx, uuid.NewString(), name, corpID, subject, payload)
}

// publishGatewayEventID is publishGatewayEvent with the event's id chosen
// by the caller: an id derived from what the event announces (the
// upstream's id of a conversion) makes the stream drop a repeat
// announcement of the same change.
func (r *Resolver) publishGatewayEventID(ctx context.Context, id, name, corpID, subject string, payload map[string]any) {
	e, err := r.newGatewayEvent(ctx, id, name, corpID, subject, payload)
	if err == nil {
		err = r.Events.Publish(ctx, e)
	}
	if err != nil {
		r.Logger.WarnContext(ctx, "could not publish a gateway event", "name", name, "err", err)
	}
}

// newGatewayEvent is the event announcing the gateway's change: payload with
// the corporation, the subject and the kind of principal that made it.
func (r *Resolver) newGatewayEvent(ctx context.Context, id, name, corpID, subject string, payload map[string]any) (events.Event, error) {
	if s := session.From(ctx); s != nil {
		payload["by_kind"] = string(s.Kind)
	}
	return events.NewChange(events.SourceGateway, id, name, corpID, subject, payload, r.now())
}
