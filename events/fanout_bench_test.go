package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fingraph/fingraph/events"
)

// BenchmarkFanout publishes one event at a time to 1,000 subscribers on
// one bus (each read by its own goroutine, as a websocket writer would) and
// waits until the last one has it. It reports how long the last receiver
// waited after the publish began, and deliveries
// per second over the whole run.
//
//	go test -run '^$' -bench Fanout -benchtime 200x ./events
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) { benchFanout(b, n) })
	}
}

func benchFanout(b *testing.B, n int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, bus := openBus(ctx, b)
	var wg sync.WaitGroup
	received := make(chan time.Time, n)
	for range n {
		sub, err := bus.Subscribe(ctx, events.Filter{Names: []string{"IndividualActivated"}}, "")
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range sub.C {
				received <- time.Now()
			}
		}()
	}
	var last time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		t0 := time.Now()
		if err := bus.Publish(ctx, events.Event{Source: events.SourcePayments, ID: fmt.Sprint("b-", i), Name: "IndividualActivated",
			Payload: json.RawMessage(`{"individual_id":"x"}`)}); err != nil {
			b.Fatal(err)
		}
		var latest time.Time
		for range n {
			if t := <-received; t.After(latest) {
				latest = t
			}
		}
		last += latest.Sub(t0)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(last.Microseconds())/float64(b.N), "last-receiver-µs")
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "deliveries/s")
	cancel()
	wg.Wait()
}
