package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/fingraph/fingraph/events"
)

// BenchmarkHistory reads one page of the event history from a stream of
// MaxHistoryScan events: a full page of 100 (the largest first; its first
// window spans 256 positions), and the worst case, a filter that selects
// nothing, which reads up to the scan bound. It reports the stream
// positions read per page.
//
//	go test -run '^$' -bench History -benchmem ./events
func BenchmarkHistory(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, bus := openBus(ctx, b)
	for i := range events.MaxHistoryScan {
		ev := events.Event{Source: events.SourcePayments, ID: fmt.Sprintf("e-%d", i), Name: "IndividualActivated",
			Payload: json.RawMessage(`{"individual_id":"i-1"}`), CreatedAt: time.Now()}
		if err := bus.Publish(ctx, ev); err != nil {
			b.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		f       events.Filter
		scanned int
	}{
		{"page=100", events.Filter{}, 256},
		{"no-match", events.Filter{Match: func(*events.Event) bool { return false }}, events.MaxHistoryScan},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bus.History(ctx, tc.f, "", 100); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tc.scanned), "msgs/page")
		})
	}
}
