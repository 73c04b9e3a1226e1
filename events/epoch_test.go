package events_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/events"
)

// The cursor epoch changes only when the stream is new: across four starts
// of JetStream on one data directory, the cursor handed out before the
// first restart is still accepted, and so is each later one.
func TestCursorEpochSurvivesRestarts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	var cursors []string
	for start := range 4 {
		e, err := engine.Open(ctx, engine.Config{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		bus, err := events.NewBus(ctx, e.JetStream())
		if err != nil {
			e.Close()
			t.Fatal(err)
		}
		for i, c := range cursors {
			sctx, scancel := context.WithCancel(ctx)
			_, err := bus.Subscribe(sctx, events.Filter{}, c)
			scancel()
			if err != nil {
				t.Errorf("start %d: the cursor of start %d (%s): %v", start, i, c, err)
			}
		}
		if err := bus.Publish(ctx, events.Event{Source: events.SourcePayments, ID: fmt.Sprintf("restart-%d", start), Name: "IndividualActivated"}); err != nil {
			t.Fatal(err)
		}
		c, err := bus.Cursor(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cursors = append(cursors, c)
		bus.Close()
		e.Close()
	}
}
