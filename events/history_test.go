package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fingraph/fingraph/events"
)

func publishN(ctx context.Context, t *testing.T, bus *events.Bus, prefix, name string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		ev := events.Event{Source: events.SourceGateway, ID: fmt.Sprintf("%s%d", prefix, i), Name: name,
			Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), CreatedAt: time.Now()}
		if err := bus.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHistoryReadsBackwardsToTheStartOnce pages through the stream newest
// first with pages of 7: every event once, in reverse order, More false
// exactly on the last page, each page's Next continuing the previous.
func TestHistoryReadsBackwardsToTheStartOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eng, bus := openBus(ctx, t)

	empty, err := bus.History(ctx, events.Filter{}, "", 7)
	if err != nil || len(empty.Events) != 0 || empty.More || empty.Head == "" {
		t.Fatalf("empty stream: %+v, %v", empty, err)
	}

	const n = 30 // 4 pages of 7 and one of 2
	publishN(ctx, t, bus, "a-", "CardIssued", 0, n)
	for _, size := range []int{7, 10, n} {
		var got []string
		before := ""
		for page := 0; ; page++ {
			h, err := bus.History(ctx, events.Filter{}, before, size)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range h.Events {
				got = append(got, e.ID)
			}
			if h.More != (len(got) < n) {
				t.Fatalf("size %d page %d: More %v after %d of %d", size, page, h.More, len(got), n)
			}
			if !h.More {
				break
			}
			if h.Next != h.Events[len(h.Events)-1].Cursor {
				t.Fatalf("size %d page %d: Next %s is not the last event's cursor", size, page, h.Next)
			}
			before = h.Next
		}
		for i, id := range got {
			if want := fmt.Sprintf("a-%d", n-1-i); id != want {
				t.Fatalf("size %d: position %d is %s, want %s (newest first, once each)", size, i, id, want)
			}
		}
		if len(got) != n {
			t.Fatalf("size %d: %d events, want %d", size, len(got), n)
		}
	}
	// Every page's reading consumer is gone again.
	st, err := eng.JetStream().Stream(ctx, events.EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Consumers != 0 {
		t.Errorf("%d consumers left on the stream after reading the history", info.State.Consumers)
	}
}

// TestHistoryFiltersAndHandsOverToASubscription reads the newest page of one
// name, subscribes after its newest event, and gets exactly what came
// later.
func TestHistoryFiltersAndHandsOverToASubscription(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, bus := openBus(ctx, t)
	publishN(ctx, t, bus, "x-", "CardIssued", 0, 5)
	publishN(ctx, t, bus, "y-", "PersonBlocked", 0, 5)
	publishN(ctx, t, bus, "x-", "CardIssued", 5, 10)

	odd := func(e *events.Event) bool { return strings.HasSuffix(e.ID, "1") || strings.HasSuffix(e.ID, "3") }
	h, err := bus.History(ctx, events.Filter{Names: []string{"CardIssued"}, Match: odd}, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range h.Events {
		ids = append(ids, e.ID)
	}
	if strings.Join(ids, ",") != "x-3,x-1" || h.More {
		t.Fatalf("CardIssued ending in 1 or 3: %v (more %v)", ids, h.More)
	}

	page, err := bus.History(ctx, events.Filter{Names: []string{"CardIssued", "PersonBlocked"}}, "", 3)
	if err != nil || len(page.Events) != 3 || page.Events[0].ID != "x-9" {
		t.Fatalf("newest page: %+v, %v", page, err)
	}
	sub, err := bus.Subscribe(ctx, events.Filter{}, page.Events[0].Cursor)
	if err != nil {
		t.Fatal(err)
	}
	publishN(ctx, t, bus, "z-", "CardIssued", 0, 3)
	if err := receiveInOrder(ctx, sub, "z-", 0, 3); err != nil {
		t.Fatalf("after the newest page: %v", err)
	}

	for _, bad := range []string{"nonsense", "1.otherepoch"} {
		if _, err := bus.History(ctx, events.Filter{}, bad, 5); !errors.Is(err, events.ErrBadCursor) && !errors.Is(err, events.ErrStaleCursor) {
			t.Errorf("before %q: %v", bad, err)
		}
	}
	if _, err := bus.History(ctx, events.Filter{Names: []string{"no spaces"}}, "", 5); !errors.Is(err, events.ErrBadName) {
		t.Errorf("bad name: %v", err)
	}
}

// TestHistoryScanIsBounded: a filter that selects only the oldest event,
// behind more than MaxHistoryScan others, finds it on its first page,
// reading a handful of messages rather than the others.
func TestHistoryScanIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("publishes MaxHistoryScan events")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	_, bus := openBus(ctx, t)
	publishN(ctx, t, bus, "old-", "PersonBlocked", 0, 1)
	publishN(ctx, t, bus, "new-", "CardIssued", 0, events.MaxHistoryScan+5)

	f := events.Filter{Names: []string{"PersonBlocked"}}
	before := bus.Reads()
	h, err := bus.History(ctx, f, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Events) != 1 || h.Events[0].ID != "old-0" || h.More {
		t.Fatalf("first page: %d events, more %v", len(h.Events), h.More)
	}
	if read := bus.Reads() - before; read > 4 {
		t.Fatalf("the page read %d messages to find one event", read)
	}
}

// publishCorp publishes n banking-side events of corporation corp.
func publishCorp(ctx context.Context, t *testing.T, bus *events.Bus, corp, prefix string, n int) {
	t.Helper()
	for i := range n {
		ev := events.Event{Source: events.SourceGateway, ID: fmt.Sprintf("%s%d", prefix, i), Name: "PersonBlocked",
			Payload: json.RawMessage(fmt.Sprintf(`{"corporation_id":%q,"n":%d}`, corp, i)), CreatedAt: time.Now()}
		if err := bus.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
}

// A tenant's reads cost what it may see: twenty newest pages of one event,
// a resume from an old cursor and the newest cursor of a corporation's
// scope read as many messages with 1,600 payments events and another
// corporation's events in the stream as without them, and its cursor does
// not move with them.
func TestScopedReadsCostTheScopesEventsOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	_, bus := openBus(ctx, t)
	scope := events.Filter{Scope: &events.Scope{Corporations: []string{"corp-a"}}}
	publishCorp(ctx, t, bus, "corp-a", "a-", 3)
	old, err := bus.CursorFor(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	publishCorp(ctx, t, bus, "corp-a", "a2-", 2)

	measure := func() (reads int64, newest string, cursor string) {
		before := bus.Reads()
		for range 20 {
			h, err := bus.History(ctx, scope, "", 1)
			if err != nil || len(h.Events) != 1 || !h.More {
				t.Fatalf("history: %+v %v", h, err)
			}
			newest = h.Events[0].ID
		}
		sctx, scancel := context.WithCancel(ctx)
		defer scancel()
		sub, err := bus.Subscribe(sctx, scope, old)
		if err != nil {
			t.Fatal(err)
		}
		if err := receiveInOrderIDs(ctx, sub, "a2-0", "a2-1"); err != nil {
			t.Fatal(err)
		}
		if cursor, err = bus.CursorFor(ctx, scope); err != nil {
			t.Fatal(err)
		}
		return bus.Reads() - before, newest, cursor
	}
	quiet, newest, cursor := measure()
	for i := range 1600 {
		if err := bus.Publish(ctx, events.Event{Source: events.SourcePayments, ID: fmt.Sprintf("p-%d", i), Name: "OrderCreated",
			Payload: json.RawMessage(`{"order_id":"o"}`), CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	publishCorp(ctx, t, bus, "corp-b", "b-", 100)
	busy, newestBusy, cursorBusy := measure()
	if busy != quiet || newestBusy != newest {
		t.Fatalf("the scope's reads: %d messages without other tenants' events, %d with them (newest %s, %s)", quiet, busy, newest, newestBusy)
	}
	if cursorBusy != cursor {
		t.Fatalf("the scope's cursor moved with other tenants' events: %s, then %s", cursor, cursorBusy)
	}
}
