package events_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/events"
)

// A stream an older version laid out by source and name is laid out anew
// at start: its events are found again by their corporation's scope, and
// its older cursors are refused as stale rather than resumed at a wrong
// place.
func TestOlderLayoutIsMigrated(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	js := e.JetStream()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: events.EventsStream, Subjects: []string{"fingraph.events.>"},
		Metadata: map[string]string{"fingraph_cursor_epoch": "older"}}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct{ subject, data string }{
		{"fingraph.events.gateway.PersonBlocked", `{"source":"gateway","id":"old-1","name":"PersonBlocked","payload":{"corporation_id":"corp-a"}}`},
		{"fingraph.events.payments.OrderCreated", `{"source":"payments","id":"old-2","name":"OrderCreated","payload":{}}`},
	} {
		if _, err := js.Publish(ctx, m.subject, []byte(m.data)); err != nil {
			t.Fatal(err)
		}
	}
	bus, err := events.NewBus(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	h, err := bus.History(ctx, events.Filter{Scope: &events.Scope{Corporations: []string{"corp-a"}}}, "", 10)
	if err != nil || len(h.Events) != 1 || h.Events[0].ID != "old-1" {
		t.Fatalf("corp-a's history after the migration: %+v %v", h, err)
	}
	h, err = bus.History(ctx, events.Filter{Scope: &events.Scope{Payments: true}}, "", 10)
	if err != nil || len(h.Events) != 1 || h.Events[0].ID != "old-2" {
		t.Fatalf("the payments history after the migration: %+v %v", h, err)
	}
	st, err := js.Stream(ctx, events.EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.CachedInfo().State.Msgs; n != 2 {
		t.Fatalf("%d messages after the migration, want the 2 events once each", n)
	}
	if _, err := bus.History(ctx, events.Filter{}, "2.older", 10); !errors.Is(err, events.ErrStaleCursor) {
		t.Fatalf("an older cursor: %v, want ErrStaleCursor", err)
	}
	// A second start finds the stream laid out: nothing moves again.
	again, err := events.NewBus(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := again.History(ctx, events.Filter{}, h.Events[0].Cursor, 10); err != nil {
		t.Fatalf("a cursor of the migrated stream after a restart: %v", err)
	}
}
