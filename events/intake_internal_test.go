package events

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fingraph/fingraph/engine"
)

// The intake writes stored webhooks by hand; the enricher and the
// reconciler's path read and write them with encoding/json. The bytes must
// be the same.
func TestWebhookAppendJSONMatchesEncodingJSON(t *testing.T) {
	zone := time.FixedZone("", 2*3600+30*60)
	for _, w := range []webhook{
		{Source: SourcePayments, ID: "evt_1", Name: "OrderCreated"},
		{Source: SourcePayments, ID: "e-1", Name: "IndividualActivated", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{Source: SourcePayments, ID: "E_9", Name: "PendingActionCreated", CreatedAt: time.Date(2026, 11, 23, 12, 0, 0, 123456789, zone)},
		{Source: SourcePayments, ID: "x", Name: "y", CreatedAt: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)},
	} {
		want, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.appendJSON(nil); string(got) != string(want) {
			t.Errorf("appendJSON %s, encoding/json %s", got, want)
		}
	}
}

// Webhooks stored one at a time, however many, are no burst; a store that
// starts while another is in flight is (the enricher then yields).
func TestOnlyOverlappingStoresMarkABurst(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	bus, err := NewBus(ctx, e.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := bus.storeWebhook(ctx, webhook{Source: SourcePayments, ID: "one-" + string(rune('a'+i)), Name: "OrderCreated"}); err != nil {
			t.Fatal(err)
		}
	}
	if bus.burstAt.Load() != 0 || bus.storing.Load() != 0 {
		t.Fatalf("sequential stores: burst mark %d, %d in flight", bus.burstAt.Load(), bus.storing.Load())
	}
	bus.storing.Add(1) // another store in flight
	if err := bus.storeWebhook(ctx, webhook{Source: SourcePayments, ID: "two", Name: "OrderCreated"}); err != nil {
		t.Fatal(err)
	}
	bus.storing.Add(-1)
	if bus.burstAt.Load() == 0 {
		t.Fatal("an overlapping store did not mark a burst")
	}
}
