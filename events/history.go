package events

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// MaxHistoryScan bounds the stream positions one History call looks at
// when it reads by position (a scope with more owners than one read of the
// newest events answers: staff, who may see the whole stream), so that a
// filter that selects little cannot turn one page into a walk of the whole
// retained stream. A page that reaches it holds fewer events than asked
// for and says where to go on (History.Next).
const MaxHistoryScan = 5000

// historyWindow is the first window of stream positions History reads by
// position (at least twice the page); each further window doubles.
const historyWindow = 128

// MaxHistoryLimit bounds the events of one page.
const MaxHistoryLimit = 500

// HistoryReads bounds the messages one History page reads from the stream
// by subject, known before it is read: the newest event of each of the
// scope's subjects (at most maxLastSubjects), then one read per event
// taken, plus the events the filter's Match turns away, at most
// historySkips. A page that reaches it holds fewer events than asked for
// and says where to go on.
func HistoryReads(limit int) int { return maxLastSubjects + limit + 1 + historySkips }

// HistoryFixedReads is what a page of one corporation's scope reads
// before its first event, whatever its size: the newest event of each of
// the scope's subjects (one per banking-side source and event name: the
// names asked for, or every banking-side name when names is 0), plus one.
// It is known before anything is read, so the complexity limit counts it
// for every page of a request, aliases included.
func HistoryFixedReads(names int) int {
	if names <= 0 {
		names = len(bankingSideNames)
	}
	return 1 + bankingSideSources*min(names, maxLastSubjects)
}

// bankingSideSources are the sources a corporation's events are stored
// under (SourceGateway, SourceBanking).
const bankingSideSources = 2

// historySkips bounds the events of a page's scope that its Match turns
// away.
const historySkips = 64

// maxLastSubjects is the server's bound on the subjects one read of their
// newest events answers.
const maxLastSubjects = 1024

// History is one page of the events already on the stream, newest first.
type History struct {
	// Events are newest first, each with its Cursor set, as a subscriber
	// would have got them.
	Events []*Event
	// More is true when older events the filter selects may remain.
	More bool
	// Next, when More, is where to go on: the cursor to pass as before to
	// read the events older than this page. It is the cursor of the last
	// event of Events, or, when the page stopped at its bound, the
	// position where reading stopped.
	Next string
	// Head, on a page read from the newest, is the cursor of the newest
	// event of the filter's scope (CursorFor): subscribing with it as the
	// cursor misses nothing that came after this page's newest event.
	Head string
}

// History reads the events older than the cursor before ("" reads from the
// newest), newest first, that f selects: up to limit of them. It reads by
// subject, so that only f's scope's events are read at all: the newest of
// each of its subjects, then, event by event, the one before the newest
// taken on its subject (a merge, newest first, of the subjects' events).
// Cursors are the ones subscriptions hand out, so a client can read the
// newest page, then subscribe after its newest event and miss nothing. A
// before cursor from another stream is ErrStaleCursor, a malformed one
// ErrBadCursor.
func (b *Bus) History(ctx context.Context, f Filter, before string, limit int) (*History, error) {
	if limit < 1 || limit > MaxHistoryLimit {
		return nil, fmt.Errorf("events: history limit %d not in 1..%d", limit, MaxHistoryLimit)
	}
	names, err := f.nameSet()
	if err != nil {
		return nil, err
	}
	pos, err := b.position(ctx)
	if err != nil {
		return nil, fmt.Errorf("events: history: %w", err)
	}
	from := pos.last + 1 // read the sequences below from
	if before != "" {
		if from, err = parseCursor(before, pos); err != nil {
			return nil, err
		}
	}
	h, err := b.history(ctx, f, names, from, limit, pos)
	if err != nil {
		return nil, err
	}
	if before == "" && len(h.Events) == 0 {
		if h.Head, err = b.CursorFor(ctx, f); err != nil {
			return nil, err
		}
	}
	return h, nil
}

func (b *Bus) history(ctx context.Context, f Filter, names map[string]struct{}, from uint64, limit int, pos position) (*History, error) {
	h := &History{}
	subjects := f.subjects(names)
	if len(subjects) == 0 || from <= 1 {
		return h, nil
	}
	rd, err := b.newReader(ctx)
	if err != nil {
		return nil, fmt.Errorf("events: history: %w", err)
	}
	defer rd.close()
	heads, err := rd.lastBefore(subjects, from-1, pos)
	if errors.Is(err, errTooManySubjects) {
		return b.historyByPosition(ctx, f, names, subjects, from, limit, pos, h)
	}
	if err != nil {
		return nil, fmt.Errorf("events: history: %w", err)
	}
	q := headQueue(heads)
	heap.Init(&q)
	skips := 0
	for q.Len() > 0 {
		top := heap.Pop(&q).(*head)
		e, ok := decodeAt(top.data, top.seq, pos.codec)
		if ok && wantsName(names, e.Name) && (f.Match == nil || f.Match(e)) {
			if len(h.Events) == limit {
				h.More, h.Next = true, h.Events[limit-1].Cursor
				return h, nil
			}
			h.Events = append(h.Events, e)
		} else if skips++; skips > historySkips {
			h.More, h.Next = true, pos.codec.format(top.seq)
			return h, nil
		}
		if top.seq <= pos.first {
			continue
		}
		prev, err := rd.lastBefore([]string{top.subject}, top.seq-1, pos)
		if err != nil {
			return nil, fmt.Errorf("events: history: %w", err)
		}
		for _, p := range prev {
			heap.Push(&q, p)
		}
	}
	return h, nil
}

func wantsName(names map[string]struct{}, name string) bool {
	if names == nil {
		return true
	}
	_, ok := names[name]
	return ok
}

// head is the newest event of one subject at or before a position.
type head struct {
	seq     uint64
	subject string
	data    []byte
}

// headQueue is a max-heap of heads by position.
type headQueue []*head

func (q headQueue) Len() int           { return len(q) }
func (q headQueue) Less(i, j int) bool { return q[i].seq > q[j].seq }
func (q headQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *headQueue) Push(x any)        { *q = append(*q, x.(*head)) }
func (q *headQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

var errTooManySubjects = errors.New("events: more subjects than one read answers")

// reader reads the stream directly (JetStream's direct get), every
// answer on one inbox of its own.
type reader struct {
	b   *Bus
	ctx context.Context
	sub *nats.Subscription
}

func (b *Bus) newReader(ctx context.Context) (*reader, error) {
	sub, err := b.js.Conn().SubscribeSync(b.js.Conn().NewInbox())
	if err != nil {
		return nil, err
	}
	return &reader{b: b, ctx: ctx, sub: sub}, nil
}

func (rd *reader) close() { _ = rd.sub.Unsubscribe() }

// lastBefore reads the newest event at or before position upTo of each
// subject matching subjects (wildcards allowed), with one direct read of
// the stream: the server looks them up by subject, and answers nothing of
// any other subject.
func (b *Bus) lastBefore(ctx context.Context, subjects []string, upTo uint64, pos position) ([]*head, error) {
	rd, err := b.newReader(ctx)
	if err != nil {
		return nil, err
	}
	defer rd.close()
	return rd.lastBefore(subjects, upTo, pos)
}

func (rd *reader) lastBefore(subjects []string, upTo uint64, pos position) ([]*head, error) {
	if upTo == 0 || upTo < pos.first {
		return nil, nil
	}
	req, err := json.Marshal(struct {
		MultiLast []string `json:"multi_last"`
		UpTo      uint64   `json:"up_to_seq"`
	}{subjects, upTo})
	if err != nil {
		return nil, err
	}
	if err := rd.b.js.Conn().PublishRequest("$JS.API.DIRECT.GET."+EventsStream, rd.sub.Subject, req); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(rd.ctx, 5*time.Second)
	defer cancel()
	var out []*head
	for {
		msg, err := rd.sub.NextMsgWithContext(ctx)
		if err != nil {
			return nil, err
		}
		switch msg.Header.Get("Status") {
		case "":
		case "204": // end of the answer
			return out, nil
		case "404": // no such events
			return out, nil
		case "413":
			return nil, errTooManySubjects
		default:
			return nil, fmt.Errorf("events: stream read answered %s %s", msg.Header.Get("Status"), msg.Header.Get("Description"))
		}
		seq, err := strconv.ParseUint(msg.Header.Get(jetstream.SequenceHeader), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("events: stream read without a sequence")
		}
		rd.b.reads.Add(1)
		out = append(out, &head{seq: seq, subject: msg.Header.Get(jetstream.SubjectHeader), data: msg.Data})
	}
}

// historyByPosition is History for a scope of more subjects than one read
// answers (staff, who may see every event): windows of positions, newest
// first, each read forward by a short-lived consumer on the scope's
// subjects, at most MaxHistoryScan positions.
func (b *Bus) historyByPosition(ctx context.Context, f Filter, names map[string]struct{}, subjects []string, from uint64, limit int, pos position, h *History) (*History, error) {
	oldest := max(pos.first, 1)
	budget, window := uint64(MaxHistoryScan), uint64(max(historyWindow, 2*(limit+1)))
	// Windows of positions [lo, hi], newest first, each read forward.
	for hi := from - 1; hi >= oldest && hi < from; {
		if budget == 0 {
			h.More, h.Next = true, pos.codec.format(hi+1)
			return h, nil
		}
		n := min(window, budget, hi-oldest+1)
		lo := hi - n + 1
		got, err := b.readRange(ctx, subjects, lo, hi, pos.codec)
		if err != nil {
			return nil, fmt.Errorf("events: history: %w", err)
		}
		budget -= n
		for i := len(got) - 1; i >= 0; i-- {
			e := got[i]
			if !wantsName(names, e.Name) || (f.Match != nil && !f.Match(e)) {
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

// readRange returns the events at positions lo..hi on the given subjects,
// oldest first, read by a short-lived consumer: one request for the whole
// range instead of one per position. The server filters the subjects.
func (b *Bus) readRange(ctx context.Context, subjects []string, lo, hi uint64, codec *cursorCodec) ([]*Event, error) {
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
			b.reads.Add(1)
			if md.Sequence.Stream > hi {
				continue // past the window: the newer windows had it
			}
			if e, ok := decodeAt(msg.Data(), md.Sequence.Stream, codec); ok {
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
