package resolvers

import (
	"context"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/livequery"
	"github.com/fingraph/fingraph/relay"
)

// LiveChanges is the change feed of @live queries: the events subscription's
// stream, with its caller's scope and its demand on the banking poller,
// reduced to each event's subject. It is the only place live queries touch
// the event bus and the poller.
type LiveChanges struct{ *Resolver }

var _ livequery.Changes = LiveChanges{}

// Follow implements livequery.Changes, subscribing exactly as the events
// subscription does.
func (r LiveChanges) Follow(ctx context.Context, notify func(string), ended func(error)) error {
	sc, err := r.eventScope(ctx)
	if err != nil {
		return err
	}
	f := events.Filter{Match: sc.match(nil)}
	if !sc.payments && !sc.allCorporations {
		f.Corporations = make([]string, 0, len(sc.corporations))
		for c := range sc.corporations {
			f.Corporations = append(f.Corporations, c)
		}
	}
	if err := r.Events.SubscribeSink(ctx, f, "", subjectSink{notify: notify, ended: ended}); err != nil {
		return streamArgError(err)
	}
	r.watchBankChanges(ctx)
	return nil
}

// subjectSink hands each event's subject to a live query: it never waits
// and never falls behind, so the fan-out never drops it.
type subjectSink struct {
	notify func(string)
	ended  func(error)
}

func (s subjectSink) Offer(e *events.Event) bool {
	if id := changeSubject(e); id != "" {
		s.notify(id)
	}
	return true
}

func (s subjectSink) Send(_ context.Context, e *events.Event) error {
	s.Offer(e)
	return nil
}

func (s subjectSink) Close(err error) {
	if err != nil {
		s.ended(endReason(err))
	}
}

// changeSubject is the global id of the Node an event changed: the payload's
// subject, or for a payments event without one, its order.
func changeSubject(e *events.Event) string {
	if id := e.PayloadString(events.PayloadSubject); id != "" {
		return id
	}
	if e.Source == events.SourcePayments {
		if id := e.PayloadString("order_id"); id != "" {
			return relay.ID(relay.Order, id)
		}
	}
	return ""
}
