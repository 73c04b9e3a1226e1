package resolvers

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/fingraph/fingraph/events"
)

// An idle subscription holds a channel of a few slots, not one of
// events.SubscriberBuffer for its whole life; a burst of SubscriberBuffer
// events to a reader that starts late still arrives whole and in order
// through the backlog, and the subscription stays open after it.
func TestIdleSubscriptionHoldsASmallChannelBurstsStillArriveWhole(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, bus := busResolver(ctx, t)
	f := events.Filter{Names: []string{"IndividualActivated"}}
	ch, err := r.subscribe(ctx, &eventScope{payments: true}, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := cap(ch); c > 8 {
		t.Fatalf("an idle subscription's channel has %d slots, want at most 8 (%d events may wait in all)", c, events.SubscriberBuffer)
	}
	n := events.SubscriberBuffer - 1 // and the marker: a full buffer
	for i := range n {
		if err := bus.Publish(ctx, events.Event{Source: events.SourcePayments, ID: fmt.Sprint("ev-", i), Name: "IndividualActivated",
			Payload: json.RawMessage(`{"individual_id":"ind-1"}`), CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	// Marker after the burst: once it is read, everything before it was.
	if err := bus.Publish(ctx, events.Event{Source: events.SourcePayments, ID: "marker", Name: "IndividualActivated",
		Payload: json.RawMessage(`{"individual_id":"ind-1"}`), CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for i := range n + 1 {
		want := fmt.Sprint("ev-", i)
		if i == n {
			want = "marker"
		}
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("the subscription ended after %d events, want %d and open", i, n+1)
			}
			if ev.Event.ID != want {
				t.Fatalf("event %d: %s, want %s", i, ev.Event.ID, want)
			}
		case <-ctx.Done():
			t.Fatalf("%d of %d events arrived", i, n+1)
		}
	}
}
