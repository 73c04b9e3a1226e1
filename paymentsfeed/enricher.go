package paymentsfeed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/upstream/payments"
	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// Enricher reads stored webhooks, fetches each event's content from the
// upstream, and publishes the enriched event. Replicas share one durable
// consumer, so each webhook is enriched once.
type Enricher struct {
	// Queue holds the webhooks to enrich; Bus is where their events go.
	Queue *Queue
	Bus   Publisher
	// Events reads each webhook's event, and PendingActions the pending
	// action of a PendingAction event (payments.Client's services).
	Events         EventReader
	PendingActions PendingActionReader
	// Breaker, when set, tells when a read the event routes' breaker
	// refused may be tried again (payments.Client); unset, it is tried
	// again every breakerPoll.
	Breaker EventsBreaker
	Logger  *slog.Logger
	// Unknown, when set, remembers ids the upstream answered 404 for, so
	// that they are never asked about again.
	Unknown *Unknown
	// Workers bounds the enrichments in flight (default 8): a slow or
	// refused one does not hold back the rest.
	Workers int
	// Lag, when set, is told how long each published event waited: from
	// the moment its webhook was stored (and so acknowledged) to its
	// enriched event being stored on EVENTS. Enrichment is durable and may
	// fall behind during a burst; this is how far.
	Lag func(time.Duration)
	// BusyWorkers bounds the enrichments in flight during a burst of
	// webhooks (within BusyWindow, the intake stored one while another was
	// being stored); default 1, and Workers or more turns the narrowing
	// off. Enrichment and the acknowledgements share the CPU, and the
	// acknowledgement is what the sender waits for: enrichment is durable
	// in the stream, so during a burst it yields and catches up after.
	BusyWorkers int
	// BusyWindow is how long a burst lasts after its last overlapping
	// store (default 10 ms).
	BusyWindow time.Duration
	// MaxDefer bounds the yielding: a webhook stored longer ago than this
	// is enriched at full width even during a burst (default 2 s), so that
	// a long burst cannot hold enrichment narrow for ever.
	MaxDefer time.Duration

	slots  chan struct{}
	narrow chan struct{} // nil: no narrowing
	// stopping ends the waits of webhooks held while the breaker is open.
	stopping context.Context
	stop     context.CancelFunc
	// busyWindow and maxDefer are BusyWindow and MaxDefer with defaults.
	busyWindow, maxDefer time.Duration
	working              sync.WaitGroup

	mu      sync.Mutex
	cc      jetstream.ConsumeContext
	lastErr error
}

// enricherBackoff spaces redeliveries of a webhook whose event could not be
// read: the n-th failed attempt is retried after the n-th delay, and every
// one after the last after the last. A webhook is never given up for a
// failure to read (only an event the upstream does not know is dropped): it
// waits in WEBHOOKS, up to the stream's MaxAge, until the upstream answers.
var enricherBackoff = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute}

// pullHeartbeat is the heartbeat of the enricher's pulls, as the bus's
// fan-out asks of its own: a pull left with a lost server is noticed after
// two missed (see Start).
const pullHeartbeat = 2 * time.Second

// enricherAckWait is how long a delivery may go unanswered before the
// server delivers it again: after a crash, how soon another replica (or
// the restarted one) takes over the webhooks that were in hand. A webhook
// being worked on, or held while the breaker is open, says so every
// enricherAckWait/3 (InProgress), so a slow read is not delivered twice.
const enricherAckWait = 10 * time.Second

// breakerPoll is how often a webhook held while the upstream's breaker is
// open looks again.
const breakerPoll = 250 * time.Millisecond

// Start begins consuming; it returns once the consumer exists.
func (e *Enricher) Start(ctx context.Context) error {
	// Redeliveries are spaced by the enricher itself (NakWithDelay along
	// enricherBackoff): a consumer BackOff applies only to deliveries
	// left unanswered, not to a Nak, which the server redelivers at once.
	cons, err := e.Queue.js.CreateOrUpdateConsumer(ctx, WebhooksStream, jetstream.ConsumerConfig{
		Durable:    "enricher",
		AckPolicy:  jetstream.AckExplicitPolicy,
		AckWait:    enricherAckWait,
		MaxDeliver: -1,
	})
	if err != nil {
		return fmt.Errorf("paymentsfeed: enricher consumer: %w", err)
	}
	workers := e.Workers
	if workers <= 0 {
		workers = 8
	}
	e.slots = make(chan struct{}, workers)
	busy := e.BusyWorkers
	if busy <= 0 {
		busy = 1
	}
	if busy < workers {
		e.narrow = make(chan struct{}, busy)
	}
	e.stopping, e.stop = context.WithCancel(context.Background())
	e.busyWindow, e.maxDefer = e.BusyWindow, e.MaxDefer
	if e.busyWindow <= 0 {
		e.busyWindow = 10 * time.Millisecond
	}
	if e.maxDefer <= 0 {
		e.maxDefer = 2 * time.Second
	}
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		// Consume hands messages over one at a time; each is enriched in
		// its own goroutine, at most Workers at once, so that a webhook
		// whose upstream call is slow (or forged, and refused) does not
		// delay the ones behind it. During a burst of webhooks, at most
		// BusyWorkers at once, until the webhook has waited MaxDefer.
		var stored time.Time
		if md, err := msg.Metadata(); err == nil {
			stored = md.Timestamp
		}
		e.slots <- struct{}{}
		narrow := e.yields(stored)
		if narrow {
			// A slow upstream read can hold the narrow slot: the wait for
			// it ends with the webhook's deferral, not with the read.
			wait := time.NewTimer(e.maxDefer - time.Since(stored))
			select {
			case e.narrow <- struct{}{}:
			case <-wait.C:
				narrow = false
			}
			wait.Stop()
		}
		e.working.Add(1)
		go func() {
			defer func() {
				if narrow {
					<-e.narrow
				}
				<-e.slots
				e.working.Done()
			}()
			e.handle(msg, stored)
		}()
	},
		jetstream.PullMaxMessages(2*workers),
		// A pull left with a lost server (the consumer's leader moved) is
		// noticed after two missed heartbeats and asked again of the new
		// leader: 4 s, where nats.go's default (15 s) took 30 s, longer
		// than the reconciler's default round (pullHeartbeat).
		jetstream.PullHeartbeat(pullHeartbeat))
	if err != nil {
		return fmt.Errorf("paymentsfeed: enricher: %w", err)
	}
	e.mu.Lock()
	e.cc = cc
	e.mu.Unlock()
	return nil
}

// Stop stops consuming and waits for the message in hand.
func (e *Enricher) Stop() {
	e.mu.Lock()
	cc := e.cc
	e.mu.Unlock()
	if e.stop != nil {
		e.stop()
	}
	if cc != nil {
		cc.Drain()
		<-cc.Closed()
	}
	e.working.Wait()
}

// Health reports the last enrichment failure, nil when the last one worked.
func (e *Enricher) Health() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cc == nil {
		return errors.New("not started")
	}
	return e.lastErr
}

func (e *Enricher) setErr(err error) {
	e.mu.Lock()
	e.lastErr = err
	e.mu.Unlock()
}

// yields reports whether a webhook stored at stored waits for one of the
// BusyWorkers slots: webhooks are arriving in a burst, and this one has not
// waited MaxDefer yet.
func (e *Enricher) yields(stored time.Time) bool {
	if e.narrow == nil {
		return false
	}
	now := time.Now()
	last := e.Queue.burstAt.Load()
	return now.UnixNano()-last < int64(e.busyWindow) && now.Sub(stored) < e.maxDefer
}

func (e *Enricher) handle(msg jetstream.Msg, stored time.Time) {
	var w webhook
	if err := json.Unmarshal(msg.Data(), &w); err != nil {
		_ = msg.Term()
		return
	}
	if e.Unknown.Has(w.ID) {
		_ = msg.Term()
		return
	}
	// The delivery stays ours while it is worked on or held.
	beat := time.NewTicker(enricherAckWait / 3)
	defer beat.Stop()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-beat.C:
				_ = msg.InProgress()
			case <-done:
				return
			}
		}
	}()
	var err error
	for {
		err = e.attempt(w)
		if !errors.Is(err, roundtrip.ErrCircuitOpen) {
			break
		}
		// The breaker refused the read without asking the upstream: no
		// attempt was spent, and none is until the breaker lets calls
		// through again.
		e.setErr(err)
		if !e.waitBreaker() {
			_ = msg.Nak() // stopping: another replica, or the next start, takes it
			return
		}
	}
	if payments.IsNotFound(err) {
		// Announced but unknown upstream: forged, or not ours. Nothing is
		// published from a webhook body alone, and the id is remembered.
		// Should the upstream list it later after all, the reconciler
		// publishes it.
		e.Unknown.Add(w.ID)
		e.Logger.Warn("webhook for an event the upstream does not know; dropped", "event_id", w.ID)
		_ = msg.Term()
		return
	}
	if err != nil {
		e.setErr(err)
		delay := enricherBackoff[len(enricherBackoff)-1]
		if md, merr := msg.Metadata(); merr == nil && md.NumDelivered >= 1 && md.NumDelivered <= uint64(len(enricherBackoff)) {
			delay = enricherBackoff[md.NumDelivered-1]
		}
		e.Logger.Warn("could not enrich an event; it will be retried", "event_id", w.ID, "retry_in", delay.String(), "err", err)
		_ = msg.NakWithDelay(delay)
		return
	}
	e.setErr(nil)
	_ = msg.Ack()
	if e.Lag != nil && !stored.IsZero() {
		e.Lag(time.Since(stored))
	}
}

// attempt reads the webhook's event and publishes it.
func (e *Enricher) attempt(w webhook) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ev, err := e.enrich(ctx, w)
	if err != nil {
		return err
	}
	return e.Bus.Publish(ctx, *ev)
}

// waitBreaker waits breakerPoll, then until the event routes' breaker is no
// longer open; false when the enricher stops first.
func (e *Enricher) waitBreaker() bool {
	t := time.NewTicker(breakerPoll)
	defer t.Stop()
	for {
		select {
		case <-e.stopping.Done():
			return false
		case <-t.C:
		}
		if e.Breaker == nil || e.Breaker.EventsBreakerState() != "open" {
			return true
		}
	}
}

func (e *Enricher) enrich(ctx context.Context, w webhook) (*events.Event, error) {
	got, err := e.Events.Get(ctx, w.ID)
	if err != nil {
		return nil, err
	}
	return paymentsEvent(ctx, e.PendingActions, got)
}

// paymentsEvent is the bus event of an upstream payments event, with its
// pending action read when it has one: the enricher and the reconciler
// publish alike.
func paymentsEvent(ctx context.Context, actions PendingActionReader, got *payments.Event) (*events.Event, error) {
	ev := &events.Event{Source: events.SourcePayments, ID: got.ID, Name: got.Name, Payload: got.Payload, CreatedAt: got.CreatedAt}
	if events.HasPendingAction(got.Name) {
		pa, err := actions.ByEvent(ctx, got.ID)
		if payments.IsNotFound(err) {
			err = nil
		}
		if err != nil {
			return nil, err
		}
		ev.PendingAction = pa
	}
	return ev, nil
}
