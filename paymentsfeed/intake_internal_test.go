package paymentsfeed

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/events"
)

// The intake writes stored webhooks by hand; the enricher and the
// reconciler's path read and write them with encoding/json. The bytes must
// be the same.
func TestWebhookAppendJSONMatchesEncodingJSON(t *testing.T) {
	zone := time.FixedZone("", 2*3600+30*60)
	for _, w := range []webhook{
		{Source: events.SourcePayments, ID: "evt_1", Name: "OrderCreated"},
		{Source: events.SourcePayments, ID: "e-1", Name: "IndividualActivated", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{Source: events.SourcePayments, ID: "E_9", Name: "PendingActionCreated", CreatedAt: time.Date(2026, 11, 23, 12, 0, 0, 123456789, zone)},
		{Source: events.SourcePayments, ID: "x", Name: "y", CreatedAt: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)},
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
	q, err := NewQueue(ctx, e.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := q.store(ctx, webhook{Source: events.SourcePayments, ID: "one-" + string(rune('a'+i)), Name: "OrderCreated"}); err != nil {
			t.Fatal(err)
		}
	}
	if q.burstAt.Load() != 0 || q.storing.Load() != 0 {
		t.Fatalf("sequential stores: burst mark %d, %d in flight", q.burstAt.Load(), q.storing.Load())
	}
	q.storing.Add(1) // another store in flight
	if err := q.store(ctx, webhook{Source: events.SourcePayments, ID: "two", Name: "OrderCreated"}); err != nil {
		t.Fatal(err)
	}
	q.storing.Add(-1)
	if q.burstAt.Load() == 0 {
		t.Fatal("an overlapping store did not mark a burst")
	}
}
