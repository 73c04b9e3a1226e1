package paymentsfeed_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/paymentsfeed"
	"github.com/fingraph/fingraph/upstream/payments"
)

// fakeListing is the upstream's event listing, oldest first; a cursor it
// does not hold is refused with 400, as the upstream refuses one.
type fakeListing struct {
	mu     sync.Mutex
	events []payments.Event
	pages  int
}

func (f *fakeListing) add(evs ...payments.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, evs...)
}

func (f *fakeListing) forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = nil
}

func (f *fakeListing) List(_ context.Context, after string, limit int) (*payments.EventPage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pages++
	from := 0
	if after != "" {
		from = -1
		for i, e := range f.events {
			if e.ID == after {
				from = i + 1
			}
		}
		if from < 0 {
			return nil, &payments.ErrorResponse{StatusCode: http.StatusBadRequest, Code: "invalid_cursor"}
		}
	}
	to := min(from+limit, len(f.events))
	return &payments.EventPage{Events: append([]payments.Event(nil), f.events[from:to]...), HasMore: to < len(f.events)}, nil
}

// fakeActions answers the pending action of every event and counts the
// reads.
type fakeActions struct {
	mu    sync.Mutex
	reads []string
}

func (f *fakeActions) ByEvent(_ context.Context, eventID string) (*payments.PendingAction, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, eventID)
	return &payments.PendingAction{ID: "pa-" + eventID, EventID: eventID, Status: "pending"}, nil
}

// fakeBus keeps what is published.
type fakeBus struct{ published []events.Event }

func (b *fakeBus) Publish(_ context.Context, e events.Event) error {
	b.published = append(b.published, e)
	return nil
}

func event(id, name string) payments.Event {
	return payments.Event{ID: id, Name: name, Payload: json.RawMessage(`{}`), CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func ids(evs []events.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// The reconciler against fakes of the upstream's services: its first poll
// only marks the end of the listing; later polls publish what is new,
// across pages, each event once, a PendingAction event with its action
// (read for it alone), and skip a listed event that cannot be one; a
// cursor the upstream no longer knows restarts from the newest event
// without replaying the listing.
func TestReconcilerPublishesWhatTheListingAddsSinceItsMark(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cursor, err := e.JetStream().CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "events_cursor"})
	if err != nil {
		t.Fatal(err)
	}
	listing, actions, bus := &fakeListing{}, &fakeActions{}, &fakeBus{}
	r := &paymentsfeed.Reconciler{Bus: bus, Events: listing, PendingActions: actions, Cursor: cursor,
		Interval: time.Hour, Logger: slog.New(slog.DiscardHandler)}
	poll := func(what string) {
		t.Helper()
		if err := r.Poll(ctx); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	listing.add(event("old-1", "OrderCreated"), event("old-2", "PendingActionCreated"))
	poll("first poll")
	if len(bus.published) != 0 || len(actions.reads) != 0 {
		t.Fatalf("the first poll published %v and read %d actions; it only marks the end", ids(bus.published), len(actions.reads))
	}

	var fresh []payments.Event
	for i := range 150 {
		fresh = append(fresh, event("new-"+string(rune('a'+i/26))+string(rune('a'+i%26)), "OrderCaptured"))
	}
	fresh = append(fresh, event("bad", "not a name"), event("pa-1", "PendingActionCompleted"))
	listing.add(fresh...)
	poll("second poll")
	poll("third poll, nothing new")
	if got := len(bus.published); got != 151 {
		t.Fatalf("published %d events, want 150 orders and the pending action event", got)
	}
	for i, ev := range bus.published[:150] {
		if ev.ID != fresh[i].ID || ev.Source != events.SourcePayments || ev.PendingAction != nil {
			t.Fatalf("event %d: %+v", i, ev)
		}
	}
	last := bus.published[150]
	if last.ID != "pa-1" || last.PendingAction == nil || last.PendingAction.EventID != "pa-1" {
		t.Fatalf("the pending action event: %+v", last)
	}
	if len(actions.reads) != 1 || actions.reads[0] != "pa-1" {
		t.Errorf("pending actions read for %v, want for pa-1 alone", actions.reads)
	}

	listing.forget() // the cursor's event is gone upstream
	listing.add(event("after-reset-1", "OrderCreated"))
	poll("poll with a cursor the upstream refuses")
	poll("poll after the reset")
	listing.add(event("after-reset-2", "OrderCreated"))
	poll("poll after a new event")
	if got := ids(bus.published[151:]); len(got) != 1 || got[0] != "after-reset-2" {
		t.Errorf("after the reset, published %v; want only the event listed after the new mark", got)
	}
}
