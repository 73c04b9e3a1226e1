package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/fingraph/fingraph/events"
)

// TestPublishNewSaysWhetherTheStreamTookTheEvent: a mutation whose change
// id the stream already holds learns it, to announce its own change under
// an id of its own (resolvers.announceChange).
func TestPublishNewSaysWhetherTheStreamTookTheEvent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, bus := openBus(ctx, t)
	e := events.Event{Source: events.SourceBanking, ID: events.ChangeID("s", "v"), Name: "PersonUpdated", Payload: []byte(`{}`), CreatedAt: time.Now()}
	for i, want := range []bool{true, false} {
		fresh, err := bus.PublishNew(ctx, e)
		if err != nil || fresh != want {
			t.Fatalf("publish %d: fresh %v, %v; want %v", i, fresh, err, want)
		}
		e.Source = events.SourceGateway // one key space for both sources
	}
}
