package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// SubscriberBuffer is how many events one subscriber may have waiting.
// When it is full the subscriber is dropped (ErrSlowSubscriber) rather than
// delaying the events of every other subscriber on the replica.
const SubscriberBuffer = 256

// catchUpBuffer bounds the live events kept for a subscriber while it
// replays from its cursor; a replay that falls this far behind the live
// stream is dropped like a slow subscriber.
const catchUpBuffer = 4 * SubscriberBuffer

// ErrSlowSubscriber ends a subscription whose reader fell SubscriberBuffer
// events behind: it may resume with the cursor of the last event it got.
var ErrSlowSubscriber = errors.New("events: subscriber too slow, dropped; resume with the cursor of the last event received")

// ErrBusClosed ends subscriptions when the bus stops or loses its stream.
var ErrBusClosed = errors.New("events: event stream ended")

// Filter selects events; empty fields select everything.
type Filter struct {
	Names []string
	// Match, when set, further selects among the events of Names. It runs
	// on the fan-out's goroutine: it must be quick and must not block.
	Match func(*Event) bool
	// Corporations, when set, says the subscriber sees nothing but the
	// banking-side events of these corporations (a person, an
	// introducer): the fan-out then offers it only those, instead of
	// checking it for every event of the stream.
	Corporations []string
	// Scope, when set, is what the subscriber may see: its reads of the
	// stream (history, a resume, the newest cursor) name only its
	// subjects, so that they never read another tenant's events. Nil with
	// Corporations empty reads the whole stream.
	Scope *Scope
}

// nameSet is f's names as a set, nil for every name; a name that cannot be
// an event's is ErrBadName.
func (f Filter) nameSet() (map[string]struct{}, error) {
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
	return names, nil
}

// Subscription is one subscriber's view of the stream.
type Subscription struct {
	// C delivers the events in stream order, each once. It closes when the
	// subscriber's context ends or the subscription is dropped; Err then
	// says why. An event is shared by every subscriber that gets it: read
	// it, never change it.
	C <-chan *Event

	s *subscriber
}

// Err is nil while C is open and after the subscriber's context ended;
// otherwise it is why the subscription was ended (ErrSlowSubscriber,
// ErrBusClosed).
func (s *Subscription) Err() error {
	s.s.fan.mu.Lock()
	defer s.s.fan.mu.Unlock()
	return s.s.err
}

// Sink receives one subscriber's events.
type Sink interface {
	// Offer hands over a live event without waiting; false means the
	// subscriber's buffer is full, and it is dropped (ErrSlowSubscriber).
	Offer(e *Event) bool
	// Send hands over a replayed event, waiting for room until ctx ends.
	Send(ctx context.Context, e *Event) error
	// Close ends the subscription, once: err is nil when the subscriber's
	// context ended, else why it was ended (ErrSlowSubscriber,
	// ErrBusClosed, a failed replay).
	Close(err error)
}

// chanSink delivers to a channel.
type chanSink chan *Event

func (c chanSink) Offer(e *Event) bool {
	select {
	case c <- e:
		return true
	default:
		return false
	}
}

func (c chanSink) Send(ctx context.Context, e *Event) error {
	select {
	case c <- e:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c chanSink) Close(error) { close(c) }

type subscriber struct {
	fan   *fanout
	names map[string]struct{}
	match func(*Event) bool
	corps []string
	sink  Sink
	// after is the subscriber's cursor: the fan-out, which may not have
	// reached it yet, skips what it already has.
	after uint64

	// Guarded by fan.mu. While catching is set, the catch-up goroutine
	// owns the sink (it sends and closes it) and live events wait in pending;
	// afterwards the fan-out sends, and end closes.
	catching bool
	pending  []*Event
	closed   bool
	err      error
}

func (s *subscriber) wants(e *Event) bool {
	if e.seq <= s.after {
		return false
	}
	if s.names != nil {
		if _, ok := s.names[e.Name]; !ok {
			return false
		}
	}
	return s.match == nil || s.match(e)
}

// fanout reads the EVENTS stream once for the replica, through one ordered
// consumer, and hands each event to the subscribers that want it.
type fanout struct {
	codec *cursorCodec
	done  chan struct{}
	// reads is the bus's count of messages read for readers.
	reads *atomic.Int64

	mu   sync.Mutex
	subs map[*subscriber]struct{}
	// open are the subscribers checked for every event; byCorp the
	// others, by the corporations whose banking-side events they see.
	open   map[*subscriber]struct{}
	byCorp map[string]map[*subscriber]struct{}
	// last is the stream sequence of the newest event handed out: a
	// subscriber registered now gets, live, exactly the events after it.
	last   uint64
	failed bool
}

// Subscribe streams events matching f, starting after cursor (or with new
// events when cursor is empty), until ctx ends. All subscriptions of the
// bus share one ordered consumer; each has a bounded buffer, and one that
// lets it fill is dropped (ErrSlowSubscriber) so the others never wait. A
// subscription with a cursor first replays what it missed through a
// temporary consumer, then joins the shared one with no gap and no
// duplicate. An idle subscription costs no goroutine here.
func (b *Bus) Subscribe(ctx context.Context, f Filter, cursor string) (*Subscription, error) {
	ch := make(chan *Event, SubscriberBuffer)
	sub := &Subscription{C: ch}
	s, err := b.subscribe(ctx, f, cursor, chanSink(ch))
	if err != nil {
		return nil, err
	}
	sub.s = s
	return sub, nil
}

// SubscribeSink is Subscribe delivering to sink instead of a channel, for a
// subscriber that turns events into values of its own: it needs no
// goroutine in between. Offer and Close are called under the fan-out's
// lock, so they must never block.
func (b *Bus) SubscribeSink(ctx context.Context, f Filter, cursor string, sink Sink) error {
	_, err := b.subscribe(ctx, f, cursor, sink)
	return err
}

func (b *Bus) subscribe(ctx context.Context, f Filter, cursor string, sink Sink) (*subscriber, error) {
	names, err := f.nameSet()
	if err != nil {
		return nil, err
	}
	subjects := f.subjects(names)
	var from uint64
	if cursor != "" {
		pos, err := b.position(ctx)
		if err != nil {
			return nil, fmt.Errorf("events: subscribe: %w", err)
		}
		if from, err = parseCursor(cursor, pos); err != nil {
			return nil, err
		}
	}
	fan, err := b.fanout(ctx)
	if err != nil {
		return nil, fmt.Errorf("events: subscribe: %w", err)
	}
	s := &subscriber{fan: fan, names: names, match: f.Match, corps: f.corporations(), sink: sink, after: from}

	fan.mu.Lock()
	if fan.failed {
		fan.mu.Unlock()
		return nil, fmt.Errorf("events: subscribe: %w", ErrBusClosed)
	}
	live := fan.last
	s.catching = cursor != "" && from < live && len(subjects) > 0
	fan.add(s)
	fan.mu.Unlock()

	context.AfterFunc(ctx, func() {
		fan.mu.Lock()
		defer fan.mu.Unlock()
		fan.end(s, nil)
	})
	if s.catching {
		go s.catchUp(ctx, b.js, subjects, from, live)
	}
	return s, nil
}

// end removes s, recording why (nil: its subscriber left). Call with mu held.
func (f *fanout) end(s *subscriber, err error) {
	if s.closed {
		return
	}
	s.closed, s.err = true, err
	delete(f.subs, s)
	delete(f.open, s)
	for _, c := range s.corps {
		delete(f.byCorp[c], s)
		if len(f.byCorp[c]) == 0 {
			delete(f.byCorp, c)
		}
	}
	s.pending = nil
	if !s.catching {
		s.sink.Close(err)
	}
}

// catchUp replays the events in (from, live] that s wants, then hands s to
// the live fan-out, which has kept every event after live for it.
func (s *subscriber) catchUp(ctx context.Context, js jetstream.JetStream, subjects []string, from, live uint64) {
	fan := s.fan
	err := s.replay(ctx, js, subjects, from, live)
	fan.mu.Lock()
	for err == nil && !s.closed {
		batch := s.pending
		s.pending = nil
		if len(batch) == 0 {
			s.catching = false // the fan-out sends from now on
			fan.mu.Unlock()
			return
		}
		fan.mu.Unlock()
		for _, e := range batch {
			if err = s.sink.Send(ctx, e); err != nil {
				break
			}
		}
		fan.mu.Lock()
	}
	if err != nil && ctx.Err() == nil {
		fan.end(s, fmt.Errorf("events: resume: %w", err))
	} else {
		fan.end(s, nil)
	}
	s.sink.Close(s.err)
	fan.mu.Unlock()
}

// replay sends s the events after from up to live, read from the stream by a
// temporary ordered consumer.
func (s *subscriber) replay(ctx context.Context, js jetstream.JetStream, subjects []string, from, live uint64) error {
	// A lost consumer is noticed, and given one attempt at a new one, as
	// the fan-out's is (see fanoutHeartbeat); then the replay fails and the
	// subscriber resumes from its last cursor, rather than wait for
	// nats.go's growing pauses.
	cons, err := js.OrderedConsumer(ctx, EventsStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: subjects, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from + 1,
		MaxResetAttempts: 1,
	})
	if err != nil {
		return err
	}
	it, err := cons.Messages(jetstream.PullHeartbeat(fanoutHeartbeat))
	if err != nil {
		return err
	}
	defer it.Stop()
	if info := cons.CachedInfo(); info != nil && info.NumPending == 0 {
		return nil // nothing it wants was published in between
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		md, err := msg.Metadata()
		if err != nil {
			return err
		}
		if md.Sequence.Stream > live {
			return nil // the live fan-out has it
		}
		s.fan.reads.Add(1)
		if e, ok := s.fan.decode(msg.Data(), md.Sequence.Stream); ok && (s.match == nil || s.match(e)) {
			if err := s.sink.Send(ctx, e); err != nil {
				return err
			}
		}
		if md.Sequence.Stream == live || md.NumPending == 0 {
			return nil
		}
	}
}

func (f *fanout) decode(data []byte, seq uint64) (*Event, bool) {
	return decodeAt(data, seq, f.codec)
}

// decodeAt decodes the event stored at seq of the stream whose cursors
// codec seals.
func decodeAt(data []byte, seq uint64, codec *cursorCodec) (*Event, bool) {
	e := &Event{}
	if json.Unmarshal(data, e) != nil {
		return nil, false
	}
	e.seq = seq
	e.Cursor = codec.format(seq)
	e.payload = &payloadFields{}
	return e, true
}

// fanout returns the running fan-out, starting it when there is none.
func (b *Bus) fanout(ctx context.Context) (*fanout, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fan != nil {
		select {
		case <-b.fan.done:
		default:
			return b.fan, nil
		}
	}
	if b.ctx.Err() != nil {
		return nil, ErrBusClosed
	}
	pos, err := b.position(ctx)
	if err != nil {
		return nil, err
	}
	// Start right after the newest event, so that fan.last is exact.
	it, err := b.follow(ctx, pos.last)
	if err != nil {
		return nil, err
	}
	f := &fanout{codec: pos.codec, reads: &b.reads, done: make(chan struct{}), subs: map[*subscriber]struct{}{},
		open: map[*subscriber]struct{}{}, byCorp: map[string]map[*subscriber]struct{}{}, last: pos.last}
	go func() {
		defer close(f.done)
		f.run(b, it)
	}()
	b.fan = f
	return f, nil
}

// A lost consumer (its server stopped, the stream's leader moved) is
// noticed when two heartbeats are missed, and the fan-out then makes a new
// one where it left off. nats.go's ordered consumer would notice after 10 s
// (heartbeats every 5 s) and then make the new one itself with growing
// pauses: up to 10 s for an answer, then 1, 2, 4, 8 and 10 s between
// attempts, so that on a busy machine, while the cluster elected a leader,
// a replica's subscribers got the events published meanwhile more than 40
// s late (TestClusterLosesANodeWithoutLoss). The fan-out gives it one
// attempt and makes its own, a short pause apart, and its subscribers stay
// attached throughout: the events come late by the election, never lost.
const (
	fanoutHeartbeat = 2 * time.Second
	fanoutRetry     = 250 * time.Millisecond
	fanoutAttempt   = 10 * time.Second
)

// follow reads the stream after seq through a new ordered consumer.
func (b *Bus) follow(ctx context.Context, seq uint64) (jetstream.MessagesContext, error) {
	cons, err := b.js.OrderedConsumer(ctx, EventsStream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: seq + 1,
		// One attempt when the consumer is lost; then follow again (run).
		MaxResetAttempts: 1,
	})
	if err != nil {
		return nil, err
	}
	return cons.Messages(jetstream.PullHeartbeat(fanoutHeartbeat))
}

// run hands out every event of the stream. When its consumer fails it
// follows the stream again after the last event handed out, with the same
// subscribers, until the bus closes or the stream is gone or was reset
// (another epoch): then it ends every subscription, which may resume from
// its last cursor.
func (f *fanout) run(b *Bus, it jetstream.MessagesContext) {
	for it != nil {
		stop := context.AfterFunc(b.ctx, it.Stop)
		f.hand(it)
		stop()
		it.Stop()
		it = f.followAgain(b)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = true
	for s := range f.subs {
		f.end(s, ErrBusClosed)
	}
}

// hand hands out the events of it until it fails.
func (f *fanout) hand(it jetstream.MessagesContext) {
	for {
		msg, err := it.Next()
		if err != nil {
			return
		}
		md, err := msg.Metadata()
		if err != nil {
			continue
		}
		e, ok := f.decode(msg.Data(), md.Sequence.Stream)
		f.mu.Lock()
		f.last = md.Sequence.Stream
		if ok {
			f.dispatch(e)
		}
		f.mu.Unlock()
	}
}

// errBehind: the stream answers an older position than the fan-out's.
var errBehind = errors.New("events: the stream is behind the fan-out")

// followAgain makes a new consumer after the last event handed out,
// trying until one is made; nil when the bus closed or the stream is gone
// or was reset (another epoch).
func (f *fanout) followAgain(b *Bus) jetstream.MessagesContext {
	const maxBehind = 40 // 10 s of fanoutRetry
	behind := 0
	for b.ctx.Err() == nil {
		f.mu.Lock()
		last := f.last
		f.mu.Unlock()
		ctx, cancel := context.WithTimeout(b.ctx, fanoutAttempt)
		pos, err := b.position(ctx)
		var it jetstream.MessagesContext
		switch {
		case err != nil:
		case pos.codec.epoch != f.codec.epoch:
			cancel()
			return nil // reset: its cursors are refused as stale
		case pos.last < last:
			// A leader just elected may not yet have applied every
			// event the last one delivered: ask again, a while. A
			// stream that stays behind was put back (restored from an
			// older copy): end the subscriptions, whose cursors it
			// refuses as past its end.
			if behind++; behind > maxBehind {
				cancel()
				return nil
			}
			err = errBehind
		default:
			it, err = b.follow(ctx, last)
		}
		cancel()
		switch {
		case err == nil:
			return it
		case errors.Is(err, jetstream.ErrStreamNotFound), errors.Is(err, nats.ErrConnectionClosed):
			return nil
		}
		select {
		case <-b.ctx.Done():
		case <-time.After(fanoutRetry):
		}
	}
	return nil
}

// add registers s. Call with mu held.
func (f *fanout) add(s *subscriber) {
	f.subs[s] = struct{}{}
	if len(s.corps) == 0 {
		f.open[s] = struct{}{}
		return
	}
	for _, c := range s.corps {
		if f.byCorp[c] == nil {
			f.byCorp[c] = map[*subscriber]struct{}{}
		}
		f.byCorp[c][s] = struct{}{}
	}
}

// dispatch gives e to every subscriber that wants it, never waiting. Call
// with mu held.
func (f *fanout) dispatch(e *Event) {
	f.offer(e, f.open)
	if BankingSide(e.Source) {
		if c := e.PayloadString(PayloadCorporation); c != "" {
			f.offer(e, f.byCorp[c])
		}
	}
}

func (f *fanout) offer(e *Event, subs map[*subscriber]struct{}) {
	for s := range subs {
		if !s.wants(e) {
			continue
		}
		if s.catching {
			if len(s.pending) >= catchUpBuffer {
				f.end(s, ErrSlowSubscriber)
				continue
			}
			s.pending = append(s.pending, e)
			continue
		}
		if !s.sink.Offer(e) {
			f.end(s, ErrSlowSubscriber)
		}
	}
}

// Close stops the fan-out, ending every subscription with ErrBusClosed.
func (b *Bus) Close() {
	b.cancel()
	b.mu.Lock()
	fan := b.fan
	b.mu.Unlock()
	if fan != nil {
		<-fan.done
	}
}
