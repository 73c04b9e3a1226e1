package paymentsfeed

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/upstream/payments"
)

// Reconciler polls the upstream's event listing and publishes what it finds
// on EVENTS, so events that webhooks missed still arrive (webhooks are an
// addition to polling, never a replacement). The listing holds each event
// whole, so it needs no further read (but for the pending action of a
// PendingAction event). EVENTS deduplicates by event id, so events seen both
// ways arrive once, and several replicas polling at once is harmless.
//
// It publishes on EVENTS rather than storing a webhook: a webhook of the
// same id may have been stored and then dropped (the upstream answered
// that it did not know the event, which it lists now), and WEBHOOKS would
// discard the re-submission as a duplicate within its window. Only a
// published event counts as delivered. The cost: a PendingAction event seen
// both ways has its pending action read twice.
type Reconciler struct {
	Bus Publisher
	// Events is the upstream's event listing, and PendingActions reads the
	// pending action of a PendingAction event (payments.Client's services).
	Events         EventLister
	PendingActions PendingActionReader
	// Cursor keeps the last event id seen, shared by the replicas.
	Cursor   jetstream.KeyValue
	Interval time.Duration
	Logger   *slog.Logger

	mu      sync.Mutex
	lastErr error
	ran     bool
}

const cursorKey = "payments"

// Run polls every Interval until ctx ends.
func (r *Reconciler) Run(ctx context.Context) {
	t := time.NewTicker(r.Interval)
	defer t.Stop()
	for {
		err := r.Poll(ctx)
		r.mu.Lock()
		r.lastErr, r.ran = err, true
		r.mu.Unlock()
		if err != nil && ctx.Err() == nil {
			r.Logger.Warn("event reconciliation failed; retrying next round", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Health reports the last round's failure.
func (r *Reconciler) Health() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

// Poll reads every event after the stored cursor and publishes each. The
// first poll ever only finds the end of the listing: history from before
// the gateway existed is not replayed.
func (r *Reconciler) Poll(ctx context.Context) error {
	after := ""
	entry, err := r.Cursor.Get(ctx, cursorKey)
	first := errors.Is(err, jetstream.ErrKeyNotFound)
	if err != nil && !first {
		return err
	}
	if !first {
		after = string(entry.Value())
	}
	for {
		page, err := r.Events.List(ctx, after, 100)
		if payments.IsBadRequest(err) && after != "" {
			// The cursor's event is gone upstream: start again from the end.
			r.Logger.Warn("reconciliation cursor unknown upstream; restarting from the newest event")
			_ = r.Cursor.Delete(ctx, cursorKey)
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range page.Events {
			if !first {
				if err := r.publish(ctx, e); err != nil {
					return err
				}
			}
			after = e.ID
		}
		if after != "" {
			if _, err := r.Cursor.Put(ctx, cursorKey, []byte(after)); err != nil {
				return err
			}
		}
		if !page.HasMore || len(page.Events) == 0 {
			if first && after == "" {
				// An empty listing: remember that we started.
				_, err := r.Cursor.Put(ctx, cursorKey, []byte(""))
				return err
			}
			return nil
		}
	}
}

// publish puts a listed event on EVENTS with its pending action, as the
// enricher would; a repeat of a published event is dropped by EVENTS. A
// listed event that cannot be an event (no id, a name that is not a token)
// is skipped, not retried for ever.
func (r *Reconciler) publish(ctx context.Context, e payments.Event) error {
	if e.ID == "" || !events.IsToken(e.Name) {
		r.Logger.Warn("listed event without an id or with a malformed name; skipped")
		return nil
	}
	ev, err := paymentsEvent(ctx, r.PendingActions, &e)
	if err != nil {
		return err
	}
	return r.Bus.Publish(ctx, *ev)
}
