package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/events"
)

// TestASlowSubscriberDoesNotHoldBackOthers leaves one subscriber's channel
// unread, so everything behind its small buffer waits, and publishes many
// times that buffer: the other subscriber must still get every event. A
// fan-out that shared one consumer between subscribers would stall here.
func TestASlowSubscriberDoesNotHoldBackOthers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, bus := openBus(ctx, t)
	f := events.Filter{Names: []string{"IndividualActivated"}}
	start, err := bus.Cursor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bus.Subscribe(ctx, f, start); err != nil { // never read
		t.Fatal(err)
	}
	live, err := bus.Subscribe(ctx, f, start)
	if err != nil {
		t.Fatal(err)
	}
	const n = 500
	for i := range n {
		ev := events.Event{Source: events.SourcePayments, ID: fmt.Sprintf("e-%d", i), Name: "IndividualActivated",
			Payload: json.RawMessage(`{}`), CreatedAt: time.Now()}
		if err := bus.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		select {
		case ev := <-live:
			if want := fmt.Sprintf("e-%d", i); ev.ID != want {
				t.Fatalf("event %d: got %s, want %s (in order, once each)", i, ev.ID, want)
			}
		case <-ctx.Done():
			t.Fatalf("the live subscriber stopped after %d of %d events", i, n)
		}
	}
}

// Defects issue, item 10: a cursor the stream has not reached is refused
// (it would starve the subscriber), and a cursor of a stream that was reset
// is refused as stale rather than matched against the new numbering.
func TestCursorsPastTheEndOrFromAResetStreamAreRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, bus := openBus(ctx, t)
	for i := range 3 {
		if err := bus.Publish(ctx, events.Event{Source: events.SourcePayments, ID: fmt.Sprintf("c-%d", i), Name: "IndividualActivated"}); err != nil {
			t.Fatal(err)
		}
	}
	now, err := bus.Cursor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seq, epoch, _ := strings.Cut(now, ".")
	if seq != "3" || epoch == "" {
		t.Fatalf("cursor %q, want sequence 3 with an epoch", now)
	}
	for _, tc := range []struct {
		cursor string
		want   error
	}{
		{now, nil},
		{"0." + epoch, nil},
		{"4." + epoch, events.ErrFutureCursor},
		{"99999999999." + epoch, events.ErrFutureCursor},
		{"99999999999", events.ErrBadCursor},
		{"x." + epoch, events.ErrBadCursor},
		{"1.", events.ErrBadCursor},
		{"1.zzzzzz", events.ErrStaleCursor},
	} {
		sctx, scancel := context.WithCancel(ctx)
		_, err := bus.Subscribe(sctx, events.Filter{}, tc.cursor)
		scancel()
		if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
			t.Errorf("Subscribe(after %q) = %v, want %v", tc.cursor, err, tc.want)
		}
	}

	// Reset the stream: the old cursor's epoch no longer matches.
	if err := e.JetStream().DeleteStream(ctx, events.EventsStream); err != nil {
		t.Fatal(err)
	}
	bus, err = events.NewBus(ctx, e.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bus.Subscribe(ctx, events.Filter{}, "0."+epoch); !errors.Is(err, events.ErrStaleCursor) {
		t.Errorf("a cursor of the reset stream: %v, want ErrStaleCursor", err)
	}
}

// openBus starts an embedded JetStream with the event streams on it.
func openBus(ctx context.Context, t *testing.T) (*engine.Engine, *events.Bus) {
	t.Helper()
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	bus, err := events.NewBus(ctx, e.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	return e, bus
}
