package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/events"
)

// TestASlowSubscriberDoesNotHoldBackOthers leaves one subscriber's channel
// unread and publishes more than its buffer holds: that subscriber is
// dropped with ErrSlowSubscriber once its buffer is full (having got the
// first SubscriberBuffer events, in order), while a subscriber that reads
// gets every event, in order, once each.
func TestASlowSubscriberDoesNotHoldBackOthers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, bus := openBus(ctx, t)
	f := events.Filter{Names: []string{"IndividualActivated"}}
	start, err := bus.Cursor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := bus.Subscribe(ctx, f, start) // not read until the end
	if err != nil {
		t.Fatal(err)
	}
	live, err := bus.Subscribe(ctx, f, start)
	if err != nil {
		t.Fatal(err)
	}
	n := events.SubscriberBuffer * 2
	got := make(chan error, 1)
	go func() { got <- receiveInOrder(ctx, live, "e-", 0, n) }()
	for i := range n {
		ev := events.Event{Source: events.SourcePayments, ID: fmt.Sprintf("e-%d", i), Name: "IndividualActivated",
			Payload: json.RawMessage(`{}`), CreatedAt: time.Now()}
		if err := bus.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	// The slow one holds exactly its buffer, then its channel is closed.
	if err := receiveInOrder(ctx, slow, "e-", 0, events.SubscriberBuffer); err != nil {
		t.Fatalf("slow subscriber: %v", err)
	}
	if ev, ok := <-slow.C; ok {
		t.Fatalf("slow subscriber got %s past its buffer", ev.ID)
	}
	if !errors.Is(slow.Err(), events.ErrSlowSubscriber) {
		t.Fatalf("slow subscriber ended with %v, want ErrSlowSubscriber", slow.Err())
	}
	if live.Err() != nil {
		t.Fatalf("live subscriber: %v", live.Err())
	}
}

// receiveInOrder reads events prefix<from>..prefix<to-1> from s, in order.
func receiveInOrder(ctx context.Context, s *events.Subscription, prefix string, from, to int) error {
	for i := from; i < to; i++ {
		select {
		case ev, ok := <-s.C:
			if !ok {
				return fmt.Errorf("channel closed after %d of %d events (err %v)", i-from, to-from, s.Err())
			}
			if want := fmt.Sprintf("%s%d", prefix, i); ev.ID != want {
				return fmt.Errorf("event %d: got %s, want %s (in order, once each)", i, ev.ID, want)
			}
		case <-ctx.Done():
			return fmt.Errorf("stopped after %d of %d events", i-from, to-from)
		}
	}
	return nil
}

// receiveInOrderIDs reads the events ids from s, in order.
func receiveInOrderIDs(ctx context.Context, s *events.Subscription, ids ...string) error {
	for _, want := range ids {
		select {
		case ev, ok := <-s.C:
			if !ok {
				return fmt.Errorf("channel closed before %s (err %v)", want, s.Err())
			}
			if ev.ID != want {
				return fmt.Errorf("got %s, want %s", ev.ID, want)
			}
		case <-ctx.Done():
			return fmt.Errorf("no %s", want)
		}
	}
	return nil
}

// Defects issue, item 10: a cursor the stream has not reached is refused
// (it would starve the subscriber), and a cursor of a stream that was reset
// is refused as stale rather than matched against the new numbering.
func TestCursorsPastTheEndOrFromAResetStreamAreRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, bus := openBus(ctx, t)
	for i := range 3 {
		if err := bus.Publish(ctx, events.Event{Source: events.SourcePayments, ID: fmt.Sprintf("c-%d", i), Name: "IndividualActivated"}); err != nil {
			t.Fatal(err)
		}
	}
	now, err := bus.Cursor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h, err := bus.History(ctx, events.Filter{}, "", 3)
	if err != nil || len(h.Events) != 3 {
		t.Fatalf("history: %v %v", h, err)
	}
	if h.Events[0].Cursor != now {
		t.Fatalf("the stream's cursor %q is not its newest event's %q", now, h.Events[0].Cursor)
	}
	for _, tc := range []struct {
		cursor string
		want   error
	}{
		{now, nil},
		{h.Events[2].Cursor, nil},
		{"3.epoch", events.ErrStaleCursor}, // the older form
		{"99999999999", events.ErrBadCursor},
		{"x.y", events.ErrBadCursor},
		{"1.", events.ErrBadCursor},
		{"AAAAAAAAAAAAAAAAAAAAAA", events.ErrStaleCursor},
		{now + "A", events.ErrBadCursor},
	} {
		sctx, scancel := context.WithCancel(ctx)
		_, err := bus.Subscribe(sctx, events.Filter{}, tc.cursor)
		scancel()
		if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
			t.Errorf("Subscribe(after %q) = %v, want %v", tc.cursor, err, tc.want)
		}
	}

	// Reset the stream: the old cursors are refused, whether or not the
	// new stream has reached their position.
	if err := e.JetStream().DeleteStream(ctx, events.EventsStream); err != nil {
		t.Fatal(err)
	}
	bus, err = events.NewBus(ctx, e.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := bus.Publish(ctx, events.Event{Source: events.SourcePayments, ID: fmt.Sprintf("d-%d", i), Name: "IndividualActivated"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bus.Subscribe(ctx, events.Filter{}, h.Events[2].Cursor); !errors.Is(err, events.ErrStaleCursor) {
		t.Errorf("a cursor of the reset stream: %v, want ErrStaleCursor", err)
	}
}

// openBus starts an embedded JetStream with the event stream on it.
func openBus(ctx context.Context, t testing.TB) (*engine.Engine, *events.Bus) {
	t.Helper()
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	bus, err := events.NewBus(ctx, e.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	return e, bus
}

// TestResumeHandsOverToLiveWithNoGapOrDuplicate resumes from the start of
// the stream while more events are published during the catch-up: the
// replay cannot finish (nobody reads yet, and it holds more than the
// subscriber's buffer), so the new events wait in the live fan-out's
// hand-over buffer. Every event must then arrive once, in order.
func TestResumeHandsOverToLiveWithNoGapOrDuplicate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, bus := openBus(ctx, t)
	start, err := bus.Cursor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	publish := func(from, to int) {
		for i := from; i < to; i++ {
			// Another name in between, which the filter leaves out.
			for _, name := range []string{"IndividualActivated", "OrderCaptured"} {
				if err := bus.Publish(ctx, events.Event{Source: events.SourcePayments, ID: fmt.Sprintf("%s-%d", name, i), Name: name,
					Payload: json.RawMessage(`{}`), CreatedAt: time.Now()}); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}
	// A live subscriber first, so the shared fan-out runs through it all.
	if _, err := bus.Subscribe(ctx, events.Filter{Names: []string{"Nothing"}}, ""); err != nil {
		t.Fatal(err)
	}
	before := events.SubscriberBuffer + 50
	publish(0, before)
	sub, err := bus.Subscribe(ctx, events.Filter{Names: []string{"IndividualActivated"}}, start)
	if err != nil {
		t.Fatal(err)
	}
	publish(before, before+100) // during the catch-up
	done := make(chan struct{})
	go func() { defer close(done); publish(before+100, before+200) }() // while it hands over
	if err := receiveInOrder(ctx, sub, "IndividualActivated-", 0, before+200); err != nil {
		t.Fatal(err)
	}
	<-done
	select {
	case ev, ok := <-sub.C:
		if ok {
			t.Fatalf("extra event %s", ev.ID)
		}
		t.Fatalf("subscription ended: %v", sub.Err())
	case <-time.After(200 * time.Millisecond): // nothing more, as it should be
	}
}

// TestIdleSubscriptionsCostNoGoroutines counts goroutines before and after
// many live subscriptions: they share the bus's one consumer, so the count
// must not grow with them. Then they end with their contexts.
func TestIdleSubscriptionsCostNoGoroutines(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, bus := openBus(ctx, t)
	// The first subscription starts the shared consumer.
	if _, err := bus.Subscribe(ctx, events.Filter{}, ""); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	const n = 500
	subCtx, subCancel := context.WithCancel(ctx)
	subs := make([]*events.Subscription, n)
	for i := range subs {
		var err error
		if subs[i], err = bus.Subscribe(subCtx, events.Filter{Names: []string{"IndividualActivated"}}, ""); err != nil {
			t.Fatal(err)
		}
	}
	if d := runtime.NumGoroutine() - before; d > 2 {
		t.Fatalf("%d idle subscriptions added %d goroutines, want none", n, d)
	}
	if err := bus.Publish(ctx, events.Event{Source: events.SourcePayments, ID: "one", Name: "IndividualActivated", Payload: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	for i, s := range subs {
		if ev := <-s.C; ev.ID != "one" {
			t.Fatalf("subscriber %d got %+v", i, ev)
		}
	}
	subCancel()
	for i, s := range subs {
		if _, ok := <-s.C; ok || s.Err() != nil {
			t.Fatalf("subscriber %d: open after its context ended, or err %v", i, s.Err())
		}
	}
}
