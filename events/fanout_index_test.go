package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fingraph/fingraph/events"
)

// TestFanoutChecksOnlyTheCorporationsSubscribers: with many corporations'
// subscribers on a replica, a banking-side event of one corporation is
// offered to that corporation's subscribers and to the unscoped ones, and
// no other subscriber is even checked. Checking every subscriber for every
// event made the fan-out's work grow with corporations × subscribers: at
// 10,000 persons of 1,000 corporations it fell tens of seconds behind
// (docs/performance-events.md, "Live events at scale").
func TestFanoutChecksOnlyTheCorporationsSubscribers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, bus := openBus(ctx, t)
	start, err := bus.Cursor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const corps = 200
	checks := make([]atomic.Int64, corps)
	subs := make([]*events.Subscription, corps)
	for i := range corps {
		corp := fmt.Sprintf("corp-%d", i)
		subs[i], err = bus.Subscribe(ctx, events.Filter{Corporations: []string{corp}, Match: func(e *events.Event) bool {
			checks[i].Add(1)
			return e.PayloadString(events.PayloadCorporation) == corp
		}}, start)
		if err != nil {
			t.Fatal(err)
		}
	}
	var openChecks atomic.Int64
	open, err := bus.Subscribe(ctx, events.Filter{Match: func(*events.Event) bool { openChecks.Add(1); return true }}, start)
	if err != nil {
		t.Fatal(err)
	}

	publish := func(source, id, corp string) {
		payload, _ := json.Marshal(map[string]string{events.PayloadCorporation: corp})
		if err := bus.Publish(ctx, events.Event{Source: source, ID: id, Name: "WalletBalanceChanged",
			Payload: payload, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	publish(events.SourceBanking, "change-1", "corp-7")
	publish(events.SourcePayments, "marker", "")
	// The open subscriber sees both, in stream order: once it has the
	// marker, the change was offered to everyone it was going to be.
	if err := receiveInOrderIDs(ctx, open, "change-1", "marker"); err != nil {
		t.Fatal(err)
	}
	if err := receiveInOrderIDs(ctx, subs[7], "change-1"); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for i := range checks {
		if n := checks[i].Load(); n > 0 && i != 7 {
			checked++
		}
	}
	if checked != 0 || checks[7].Load() != 1 || openChecks.Load() != 2 {
		t.Fatalf("other corporations' subscribers checked: %d (want 0); corp-7's checks %d (want 1); the open subscriber's %d (want 2)",
			checked, checks[7].Load(), openChecks.Load())
	}
}
