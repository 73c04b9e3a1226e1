// Package events is the gateway's event bus on NATS JetStream and the
// vocabulary of its events. The bus is one durable stream, EVENTS,
// deduplicated by event id (Nats-Msg-Id) and laid out by source and owner
// (subjects.go), that each replica reads once and fans out in memory to its
// subscribers (fanout.go), with history pages, resume cursors sealed per
// stream epoch (cursor.go) and the look-up of an event by its cursor. The
// vocabulary is the Event itself and the names, change ids and versions of
// the banking-side events (names.go, change.go, versions.go), which the
// gateway's mutations (resolvers) and the banking poller (bankpoll) announce
// alike.
//
// What feeds the bus the payments upstream's events (webhooks, their
// enrichment, the reconciliation poll) is package paymentsfeed. The package
// knows no GraphQL.
package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fingraph/fingraph/upstream/payments"
)

// The stream's name and its subjects' prefix.
const (
	EventsStream = "EVENTS"
	eventSubject = "fingraph.events."
)

// Sources of events.
const (
	SourcePayments = "payments"
	SourceGateway  = "gateway"
)

// Event is an enriched event as it travels on the bus. It never carries card
// data: payments events hold ids, amounts and statuses only.
type Event struct {
	Source    string          `json:"source"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt time.Time       `json:"created_at"`
	// PendingAction is the pending action tied to the event, read with the
	// event so subscribers need no request of their own.
	PendingAction *payments.PendingAction `json:"pending_action,omitempty"`
	// Cursor is the event's position in the stream; resume after it.
	Cursor string `json:"-"`

	// seq is the stream sequence behind Cursor, which orders the hand-over
	// from a catch-up to the live fan-out.
	seq uint64
	// payload, when set, decodes Payload once for every subscriber that
	// filters on it, instead of once per subscriber.
	payload *payloadFields
}

type payloadFields struct {
	once sync.Once
	m    map[string]any

	memoMu sync.Mutex
	memo   map[string]any
}

// Memo returns build(e), built once per event and key for every subscriber
// that asks (the GraphQL value of an event is the same for all of them).
// The value is shared: it must be read-only.
func (e *Event) Memo(key string, build func(*Event) any) any {
	if e.payload == nil {
		return build(e)
	}
	p := e.payload
	p.memoMu.Lock()
	defer p.memoMu.Unlock()
	if v, ok := p.memo[key]; ok {
		return v
	}
	v := build(e)
	if p.memo == nil {
		p.memo = map[string]any{}
	}
	p.memo[key] = v
	return v
}

// PayloadString returns a string field of the payload, or "".
func (e *Event) PayloadString(key string) string {
	var m map[string]any
	if e.payload != nil {
		e.payload.once.Do(func() { _ = json.Unmarshal(e.Payload, &e.payload.m) })
		m = e.payload.m
	} else if json.Unmarshal(e.Payload, &m) != nil {
		return ""
	}
	s, _ := m[key].(string)
	return s
}

var tokenRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// IsToken reports whether s can be an event's source or name: 1 to 128
// letters, digits, '_' and '-', which need no escaping in JSON and make
// one subject token. Publish refuses an event whose source or name is not
// one; the payments feed asks it of webhook ids too.
func IsToken(s string) bool { return tokenRe.MatchString(s) }

// Bus is the EVENTS stream and this replica's fan-out of it.
type Bus struct {
	js jetstream.JetStream

	// The fan-out is started by the first subscription, and again after
	// it failed; ctx ends it (Close).
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	fan    *fanout

	// codecs is the cursor codec of the stream's epoch, kept while the
	// epoch stays.
	codecs atomic.Pointer[cursorCodec]
	// reads counts the messages read from the stream for readers (history,
	// lookups, resumes), not the replica's one live fan-out.
	reads atomic.Int64
}

// Reads is how many messages the bus has read from the stream for readers
// (history pages, lookups by id, resumes from a cursor), not counting the
// replica's one live fan-out: what a tenant's reads cost.
func (b *Bus) Reads() int64 { return b.reads.Load() }

// Dedupe is how long an event id is remembered: longer than the upstream's
// whole retry schedule (31 s) and than a reconciliation gap.
const Dedupe = 2 * time.Hour

// Retention is how far back a subscriber can resume.
const Retention = 7 * 24 * time.Hour

// BusOption configures NewBus.
type BusOption func(*busOptions)

type busOptions struct{ replicas int }

// WithReplicas keeps n copies of each stream (on a NATS cluster); an
// existing stream with fewer is raised to n.
func WithReplicas(n int) BusOption { return func(o *busOptions) { o.replicas = n } }

// NewBus creates or updates the EVENTS stream.
func NewBus(ctx context.Context, js jetstream.JetStream, opts ...BusOption) (*Bus, error) {
	o := busOptions{replicas: 1}
	for _, opt := range opts {
		opt(&o)
	}
	if err := createEvents(ctx, js, o.replicas); err != nil {
		return nil, fmt.Errorf("events: stream %s: %w", EventsStream, err)
	}
	bctx, cancel := context.WithCancel(context.Background())
	return &Bus{js: js, ctx: bctx, cancel: cancel}, nil
}

// createEvents creates or updates the EVENTS stream, keeping the epoch of
// an existing one. Replicas starting together on a fresh cluster each find
// no stream and draw an epoch; the first to create it wins, and the others,
// refused because their configuration differs (its epoch), read the
// winner's epoch and update with it, so that every replica hands out
// cursors of one epoch. A stream an older version laid out by name only is
// laid out anew first (migrateLayout).
func createEvents(ctx context.Context, js jetstream.JetStream, replicas int) error {
	for tries := 0; ; tries++ {
		epoch, laidOut, err := streamEpoch(ctx, js)
		if err != nil {
			return err
		}
		if !laidOut {
			if err := migrateLayout(ctx, js); err != nil {
				return err
			}
		}
		_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:        EventsStream,
			Subjects:    []string{eventSubject + ">"},
			Retention:   jetstream.LimitsPolicy,
			Storage:     jetstream.FileStorage,
			Duplicates:  Dedupe,
			MaxAge:      Retention,
			Replicas:    replicas,
			AllowDirect: true,
			Metadata:    map[string]string{epochKey: epoch, layoutKey: layoutScoped},
		})
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) && tries < 3 {
			continue // created meanwhile by another replica: take its epoch
		}
		return err
	}
}

// migrateLayout moves the events an older version stored under
// "fingraph.events.<source>.<name>" to the scoped subjects
// (subjectOf), then removes them. They get new positions after every event
// already there; their cursors, like every cursor of the older form, are
// refused as stale (the epoch is drawn anew with the layout), so a client
// reads state again rather than resuming at a wrong place. Each copy carries
// a message id of its old position, so replicas migrating at once copy
// each event once.
func migrateLayout(ctx context.Context, js jetstream.JetStream) error {
	const old = eventSubject + "*.*"
	st, err := js.Stream(ctx, EventsStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for seq := max(st.CachedInfo().State.FirstSeq, 1); ; {
		msg, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(old))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return err
		}
		var e Event
		if json.Unmarshal(msg.Data, &e) == nil && tokenRe.MatchString(e.Source) && tokenRe.MatchString(e.Name) {
			if _, err := js.Publish(ctx, subjectOf(&e), msg.Data, jetstream.WithMsgID(fmt.Sprintf("layout:%d", msg.Sequence))); err != nil {
				return err
			}
		}
		seq = msg.Sequence + 1
	}
	return st.Purge(ctx, jetstream.WithPurgeSubject(old))
}

// msgID is the stream's dedupe key of an event. The banking-side sources
// share one key space: a change the gateway made (SourceGateway) and the
// same change found by polling (SourceBanking) carry one ChangeID, and the
// stream keeps whichever came first.
func msgID(source, id string) string {
	if BankingSide(source) {
		source = SourceGateway
	}
	return source + ":" + id
}

// Publish puts an enriched event on the EVENTS stream, deduplicated by id.
// Gateway mutations publish their own events through it too.
func (b *Bus) Publish(ctx context.Context, e Event) error {
	_, _, err := b.PublishNew(ctx, e)
	return err
}

// PublishNew is Publish that reports whether the stream took the event.
// When it already held an event with its id (within Dedupe) and dropped
// this one, held is when the stream stored the one it holds, or the zero
// time if that event is gone or cannot be read.
func (b *Bus) PublishNew(ctx context.Context, e Event) (taken bool, held time.Time, err error) {
	if !tokenRe.MatchString(e.Source) || !tokenRe.MatchString(e.Name) || e.ID == "" {
		return false, time.Time{}, fmt.Errorf("events: bad event source %q, name %q or id", e.Source, e.Name)
	}
	data, err := json.Marshal(e)
	if err != nil {
		return false, time.Time{}, err
	}
	ack, err := b.js.Publish(ctx, subjectOf(&e), data, jetstream.WithMsgID(msgID(e.Source, e.ID)))
	if err != nil {
		return false, time.Time{}, err
	}
	if !ack.Duplicate {
		return true, time.Time{}, nil
	}
	// A duplicate's acknowledgement names the sequence of the one held.
	st, err := b.js.Stream(ctx, EventsStream)
	if err != nil {
		return false, time.Time{}, nil
	}
	m, err := st.GetMsg(ctx, ack.Sequence)
	if err != nil {
		return false, time.Time{}, nil
	}
	return false, m.Time, nil
}

// Cursor returns the cursor of the newest event of the whole stream (a
// position before every event when there is none). A client that reads
// state and then subscribes with after: this cursor misses nothing in
// between. A tenant's reader asks CursorFor, which says nothing of the
// other tenants' events.
func (b *Bus) Cursor(ctx context.Context) (string, error) {
	pos, err := b.position(ctx)
	if err != nil {
		return "", fmt.Errorf("events: cursor: %w", err)
	}
	return pos.codec.format(pos.last), nil
}

// CursorFor returns the cursor of the newest event f's scope sees (names
// aside), or of a position before every event when it sees none: resuming
// after it misses none of its events, and it moves only when one of them
// arrives.
func (b *Bus) CursorFor(ctx context.Context, f Filter) (string, error) {
	pos, err := b.position(ctx)
	if err != nil {
		return "", fmt.Errorf("events: cursor: %w", err)
	}
	if f.scope() == nil {
		return pos.codec.format(pos.last), nil
	}
	subjects := Filter{Scope: f.scope()}.subjects(nil)
	var last uint64
	if len(subjects) > 0 {
		heads, err := b.lastBefore(ctx, subjects, pos.last, pos)
		if err != nil && !errors.Is(err, errTooManySubjects) {
			return "", fmt.Errorf("events: cursor: %w", err)
		}
		if err != nil {
			// More owners than one read answers (staff): all the
			// stream is theirs to see.
			last = pos.last
		}
		for _, h := range heads {
			last = max(last, h.seq)
		}
	}
	return pos.codec.format(last), nil
}

type position struct {
	codec *cursorCodec
	last  uint64
	first uint64
}

func (b *Bus) position(ctx context.Context) (position, error) {
	st, err := b.js.Stream(ctx, EventsStream)
	if err != nil {
		return position{}, err
	}
	info := st.CachedInfo() // js.Stream has just read it
	return position{codec: b.codec(epochOf(info)), last: info.State.LastSeq, first: info.State.FirstSeq}, nil
}

// codec returns the cursor codec of epoch, made once per epoch.
func (b *Bus) codec(epoch string) *cursorCodec {
	if c := b.codecs.Load(); c != nil && c.epoch == epoch {
		return c
	}
	c := newCursorCodec(epoch)
	b.codecs.Store(c)
	return c
}

// Stream metadata: epochKey names the entry holding the epoch of its
// cursors, layoutKey the layout of its subjects.
const (
	epochKey     = "fingraph_cursor_epoch"
	layoutKey    = "fingraph_subject_layout"
	layoutScoped = "source.owner.name"
)

// streamEpoch is the epoch the EVENTS stream's cursors carry: the one it
// already has, or a new one when the stream is new or laid out by an older
// version (laidOut false: it must be migrated, and its older cursors,
// which showed their epoch, are refused from now on). It is kept in the
// stream's metadata because the stream's creation time is not stable: the
// server rewrites it when the stream is updated at start.
func streamEpoch(ctx context.Context, js jetstream.JetStream) (epoch string, laidOut bool, err error) {
	st, err := js.Stream(ctx, EventsStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return newEpoch(), true, nil
	}
	if err != nil {
		return "", false, err
	}
	info := st.CachedInfo()
	if info.Config.Metadata[layoutKey] != layoutScoped {
		return newEpoch(), false, nil
	}
	return epochOf(info), true, nil
}

// epochOf is the epoch of the stream's cursors.
func epochOf(info *jetstream.StreamInfo) string {
	return info.Config.Metadata[epochKey]
}

var (
	// ErrBadCursor means a resume cursor is not one this stream handed out.
	ErrBadCursor = errors.New("events: bad cursor")
	// ErrStaleCursor means the cursor is from an earlier event stream (it
	// was reset): the client must read state again and subscribe afresh.
	ErrStaleCursor = errors.New("events: cursor from an earlier event stream")
	// ErrFutureCursor means the cursor names a position the stream has not
	// reached: resuming there would deliver nothing, possibly for ever.
	ErrFutureCursor = errors.New("events: cursor past the newest event")
)

// ErrBadName means an event name in a filter is not a name events can have
// (letters, digits, '_' and '-').
var ErrBadName = errors.New("events: bad event name")
