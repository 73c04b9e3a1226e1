package resolvers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
)

// A subscription whose reader stalls is dropped once its buffer is full,
// and ends with a RATE_LIMITED reason for the client (after the events it
// had), while a subscription that reads gets everything; both get the same
// GraphQL value of each event, built once.
func TestSlowSubscriptionEndsWithAReasonOthersGetEverything(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, bus := busResolver(ctx, t)
	f := events.Filter{Names: []string{"IndividualActivated"}}

	slowCtx, end := gqlerr.WithStreamEnd(ctx)
	slow, err := r.subscribe(slowCtx, &eventScope{payments: true}, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	live, err := r.subscribe(ctx, &eventScope{payments: true}, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := events.SubscriberBuffer + 20
	got := make(chan []*model.LiveEvent, 1)
	go func() {
		var all []*model.LiveEvent
		for ev := range live {
			if all = append(all, ev); len(all) == n {
				break
			}
		}
		got <- all
	}()
	for i := range n {
		if err := bus.Publish(ctx, events.Event{Source: events.SourcePayments, ID: fmt.Sprint("ev-", i), Name: "IndividualActivated",
			Payload: json.RawMessage(`{"individual_id":"ind-1"}`), CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	all := <-got
	if len(all) != n {
		t.Fatalf("the reading subscription got %d of %d events", len(all), n)
	}
	i := 0
	for ev := range slow {
		if want := fmt.Sprint("ev-", i); ev.Event.ID != want {
			t.Fatalf("slow subscription, event %d: %s, want %s", i, ev.Event.ID, want)
		}
		if ev != all[i] {
			t.Fatalf("event %d was converted once per subscription, want once", i)
		}
		i++
	}
	if i != events.SubscriberBuffer {
		t.Fatalf("slow subscription got %d events before it ended, want its buffer, %d", i, events.SubscriberBuffer)
	}
	reason, ok := gqlerr.As(end.Take())
	if !ok || reason.Code != gqlerr.RateLimited {
		t.Fatalf("slow subscription ended with %v, want RATE_LIMITED", reason)
	}
}

// busResolver is a Resolver over a bus on an embedded JetStream of its own,
// both closed when the test ends.
func busResolver(ctx context.Context, t *testing.T) (*Resolver, *events.Bus) {
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
	t.Cleanup(bus.Close)
	return &Resolver{Events: bus, Logger: slog.New(slog.DiscardHandler)}, bus
}
