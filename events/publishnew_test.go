package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/fingraph/fingraph/events"
)

// TestPublishNewSaysWhetherTheStreamTookTheEvent: a mutation whose change
// id the stream already holds learns it, and when the held one was stored,
// to tell a poll's announcement of its own change from an older one
// (resolvers.announceChange).
func TestPublishNewSaysWhetherTheStreamTookTheEvent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, bus := openBus(ctx, t)
	e := events.Event{Source: events.SourceBanking, ID: events.ChangeID("s", "v"), Name: "PersonUpdated", Payload: []byte(`{}`), CreatedAt: time.Now()}
	before := time.Now().Add(-time.Second)
	for i, want := range []bool{true, false} {
		fresh, held, err := bus.PublishNew(ctx, e)
		if err != nil || fresh != want {
			t.Fatalf("publish %d: fresh %v, %v; want %v", i, fresh, err, want)
		}
		if !fresh && (held.Before(before) || held.After(time.Now())) {
			t.Fatalf("publish %d: the held event was stored at %v, want since %v", i, held, before)
		}
		e.Source = events.SourceGateway // one key space for both sources
	}
}
