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

// Buses created at the same moment on a JetStream with no EVENTS stream
// (replicas starting together on a fresh cluster) all start, and hand out
// cursors of one epoch: each accepts the other's.
func TestBusesCreatedTogetherShareOneEpoch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	js := e.JetStream()
	for round := range 20 {
		_ = js.DeleteStream(ctx, events.EventsStream)
		start := make(chan struct{})
		type made struct {
			bus *events.Bus
			err error
		}
		out := make(chan made, 2)
		for range 2 {
			go func() {
				<-start
				b, err := events.NewBus(ctx, js)
				out <- made{b, err}
			}()
		}
		close(start)
		var buses []*events.Bus
		for range 2 {
			m := <-out
			if m.err != nil {
				t.Fatalf("round %d: a bus created beside another: %v", round, m.err)
			}
			buses = append(buses, m.bus)
		}
		if err := buses[0].Publish(ctx, events.Event{Source: events.SourcePayments, ID: fmt.Sprintf("together-%d", round), Name: "IndividualActivated"}); err != nil {
			t.Fatal(err)
		}
		c, err := buses[0].Cursor(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sctx, scancel := context.WithCancel(ctx)
		_, err = buses[1].Subscribe(sctx, events.Filter{}, c)
		scancel()
		if err != nil {
			t.Fatalf("round %d: one bus refuses the other's cursor %s: %v", round, c, err)
		}
		for _, b := range buses {
			b.Close()
		}
	}
}
