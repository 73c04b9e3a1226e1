package events

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// MaxHistoryScan bounds the stream positions one History call looks at,
// so a filter that selects little cannot turn one page into a walk of the
// whole retained stream. A page that reaches it holds fewer events than
// asked for and says where to go on (History.Next).
const MaxHistoryScan = 5000

// historyWindow is the first window of stream positions History reads
// (at least twice the page); each further window doubles.
const historyWindow = 128

// MaxHistoryLimit bounds the events of one page.
const MaxHistoryLimit = 500

// History is one page of the events already on the stream, newest first.
type History struct {
	// Events are newest first, each with its Cursor set, as a subscriber
	// would have got them.
	Events []*Event
	// More is true when older events the filter selects may remain.
	More bool
	// Next, when More, is where to go on: the cursor to pass as before to
	// read the events older than this page. It is the cursor of the last
	// event of Events, or, when the page stopped at MaxHistoryScan, the
	// position where reading stopped.
	Next string
	// Head is the cursor of the newest event on the stream when the page
	// was read: subscribing with it as the cursor misses nothing that came
	// after this page's newest event.
	Head string
}

// History reads the events older than the cursor before ("" reads from the
// newest), newest first, that f selects: up to limit of them, looking at
// no more than MaxHistoryScan stream positions. Cursors are the ones
// subscriptions hand out, so a client can read the newest page, then
// subscribe after its newest event and miss nothing. A before cursor from
// another stream is ErrStaleCursor, a malformed one ErrBadCursor.
func (b *Bus) History(ctx context.Context, f Filter, before string, limit int) (*History, error) {
	if limit < 1 || limit > MaxHistoryLimit {
		return nil, fmt.Errorf("events: history limit %d not in 1..%d", limit, MaxHistoryLimit)
	}
	names, err := f.nameSet()
	if err != nil {
		return nil, err
	}
	st, err := b.js.Stream(ctx, EventsStream)
	if err != nil {
		return nil, fmt.Errorf("events: history: %w", err)
	}
	info := st.CachedInfo() // js.Stream has just read it
	pos := position{epoch: epochOf(info), last: info.State.LastSeq}
	h := &History{Head: formatCursor(pos.last, pos.epoch)}
	from := pos.last + 1 // read the sequences below from
	if before != "" {
		if from, err = parseCursor(before, pos); err != nil {
			return nil, err
		}
	}
	oldest := max(info.State.FirstSeq, 1)
	var subjects []string
	for n := range names {
		subjects = append(subjects, eventSubject+"*."+n)
	}
	budget, window := uint64(MaxHistoryScan), uint64(max(historyWindow, 2*(limit+1)))
	// Windows of positions [lo, hi], newest first, each read forward.
	for hi := from - 1; hi >= oldest && hi < from; {
		if budget == 0 {
			h.More, h.Next = true, formatCursor(hi+1, pos.epoch)
			return h, nil
		}
		n := min(window, budget, hi-oldest+1)
		lo := hi - n + 1
		got, err := b.readRange(ctx, subjects, lo, hi, pos.epoch)
		if err != nil {
			return nil, fmt.Errorf("events: history: %w", err)
		}
		budget -= n
		for i := len(got) - 1; i >= 0; i-- {
			e := got[i]
			if f.Match != nil && !f.Match(e) {
				continue
			}
			if len(h.Events) == limit {
				h.More, h.Next = true, h.Events[limit-1].Cursor
				return h, nil
			}
			h.Events = append(h.Events, e)
		}
		hi, window = lo-1, window*2
	}
	return h, nil
}

// readRange returns the events at positions lo..hi on the given subjects
// (all when none), oldest first, read by a short-lived consumer: one
// request for the whole range instead of one per position. The server
// filters the subjects.
func (b *Bus) readRange(ctx context.Context, subjects []string, lo, hi uint64, epoch string) ([]*Event, error) {
	cfg := jetstream.ConsumerConfig{
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       lo,
		AckPolicy:         jetstream.AckNonePolicy,
		InactiveThreshold: time.Minute, // removed below; this only covers a crash in between
		MemoryStorage:     true,
		FilterSubjects:    subjects,
	}
	cons, err := b.js.CreateConsumer(ctx, EventsStream, cfg)
	if err != nil {
		return nil, err
	}
	name := cons.CachedInfo().Name
	defer func() {
		// A background context: the consumer must go even when the
		// request's context has ended.
		dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = b.js.DeleteConsumer(dctx, EventsStream, name)
	}()
	var out []*Event
	for {
		batch, err := cons.FetchNoWait(int(min(hi-lo+1, 1000)))
		if err != nil {
			return nil, err
		}
		more := false
		for msg := range batch.Messages() {
			md, err := msg.Metadata()
			if err != nil {
				return nil, err
			}
			if md.Sequence.Stream > hi {
				continue // past the window: the newer windows had it
			}
			if e, ok := decodeAt(msg.Data(), md.Sequence.Stream, epoch); ok {
				out = append(out, e)
			}
			more = md.Sequence.Stream < hi && md.NumPending > 0
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return nil, err
		}
		if !more {
			return out, nil
		}
	}
}
