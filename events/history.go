package events

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// MaxHistoryScan bounds the stream messages one History call reads, so a
// filter that selects little cannot turn one page into a walk of the whole
// retained stream. A page that reaches it holds fewer events than asked
// for and says where to go on (History.Next).
const MaxHistoryScan = 2000

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
// no more than MaxHistoryScan stream messages. Cursors are the ones
// subscriptions hand out, so a client can read the newest page, then
// subscribe after its newest event and miss nothing. A before cursor from
// another stream is ErrStaleCursor, a malformed one ErrBadCursor.
func (b *Bus) History(ctx context.Context, f Filter, before string, limit int) (*History, error) {
	if limit < 1 || limit > MaxHistoryLimit {
		return nil, fmt.Errorf("events: history limit %d not in 1..%d", limit, MaxHistoryLimit)
	}
	var names map[string]struct{}
	for _, n := range f.Names {
		if !tokenRe.MatchString(n) {
			return nil, ErrBadName
		}
		if names == nil {
			names = make(map[string]struct{}, len(f.Names))
		}
		names[n] = struct{}{}
	}
	st, err := b.js.Stream(ctx, EventsStream)
	if err != nil {
		return nil, fmt.Errorf("events: history: %w", err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("events: history: %w", err)
	}
	pos := position{epoch: epochOf(info), last: info.State.LastSeq}
	h := &History{Head: formatCursor(pos.last, pos.epoch)}
	from := pos.last + 1 // read the sequences below from
	if before != "" {
		if from, err = parseCursor(before, pos); err != nil {
			return nil, err
		}
	}
	oldest := max(info.State.FirstSeq, 1)
	scanned := 0
	for seq := from - 1; seq >= oldest && seq < from; seq-- {
		if scanned == MaxHistoryScan {
			h.More, h.Next = true, formatCursor(seq+1, pos.epoch)
			return h, nil
		}
		scanned++
		msg, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // deleted, or aged out while we read
		}
		if err != nil {
			return nil, fmt.Errorf("events: history: %w", err)
		}
		if names != nil {
			if _, ok := names[msg.Subject[strings.LastIndexByte(msg.Subject, '.')+1:]]; !ok {
				continue
			}
		}
		e, ok := decodeAt(msg.Data, seq, pos.epoch)
		if !ok || (f.Match != nil && !f.Match(e)) {
			continue
		}
		if len(h.Events) == limit {
			h.More, h.Next = true, h.Events[limit-1].Cursor
			return h, nil
		}
		h.Events = append(h.Events, e)
	}
	return h, nil
}
