package events_test

import (
	"context"
	"encoding/json"
	"fmt"
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
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	bus, err := events.NewBus(ctx, e.JetStream())
	if err != nil {
		t.Fatal(err)
	}
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
