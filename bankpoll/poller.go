// Package bankpoll finds the banking changes made outside the gateway and
// announces them on the event bus. The banking upstream sends no webhooks,
// so for every corporation with at least one live subscriber the gateway
// reads the listings that change (wallets, wallet transactions, cards and
// card transactions, KYC documents, limits, invoices, persons), compares
// them with what it saw last, and publishes one event per change
// (events.SourceBanking).
//
// One poll loop serves a corporation for all of its subscribers and all
// replicas: replicas with subscribers of a corporation compete for its lease
// (a key in a JetStream bucket, renewed while held, taken over when its
// holder stops renewing it), and only the holder polls. The others'
// subscribers get the events through the shared stream. The holder polls
// with the credentials of one of its own subscribers' sessions, so no
// session's credential leaves the replica that serves it.
//
// What was seen last (a digest per entity) is kept in JetStream next to the
// lease, so that a restart or a hand-over never announces a change twice;
// every announcement's id is events.ChangeID(subject, version), the id the
// gateway's own mutations give the same change, and the stream's duplicate
// window drops a repeat. A corporation's first reading announces nothing,
// so it is taken (Baseline) before a session of it is given a point to
// follow the events from.
package bankpoll

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/upstream/banking"
)

// Buckets of the poller's state in JetStream. Their names are older than
// the package's and stay: renaming them would drop every replica's leases
// and snapshots on upgrade, and a snapshot lost is a baseline taken again,
// which announces nothing of what changed meanwhile.
const (
	// LeaseBucket holds one key per corporation polled somewhere: the
	// replica that polls it.
	LeaseBucket = "live_leases"
	// SnapshotBucket holds what the last poll of each corporation saw.
	SnapshotBucket = "live_snapshots"
)

// MinInterval is the shortest poll interval allowed.
const MinInterval = time.Second

// DefaultInterval is the poll interval unless configured otherwise.
const DefaultInterval = 10 * time.Second

// Publisher is where changes are announced (events.Bus).
type Publisher interface {
	Publish(ctx context.Context, e events.Event) error
}

// Poller runs the poll loops of this replica. Watch registers demand;
// Close stops every loop and hands their leases back.
type Poller struct {
	// Banking is what the poller reads (UpstreamOf a banking client).
	Banking Upstream
	Bus     Publisher
	// Leases and Snapshots are the JetStream buckets LeaseBucket and
	// SnapshotBucket (no TTL: leases expire by not being renewed).
	Leases    jetstream.KeyValue
	Snapshots jetstream.KeyValue
	// Interval is how often a corporation is polled.
	Interval time.Duration
	Logger   *slog.Logger

	// replica names this replica in the leases it holds.
	replica string

	mu     sync.Mutex
	corps  map[string]*corporation
	closed bool
	wg     sync.WaitGroup
	// baselines are the baseline reads under way, by corporation, so
	// that concurrent requests wait for one read.
	baselines map[string]*baselineRead

	stats Stats
}

// Stats counts what the poller did, for metrics.
type Stats struct {
	// Polling is how many corporations this replica polls now (holds the
	// lease of).
	Polling atomic.Int64
	// Polls counts completed polls; Changes the changes announced; Errors
	// the polls that failed (upstream or JetStream).
	Polls, Changes, Errors atomic.Int64
	// Takeovers counts leases taken from a holder that stopped renewing.
	Takeovers atomic.Int64
	// Subscribers is how many live subscribers this replica watches for.
	Subscribers atomic.Int64
}

// Stats returns the poller's counters.
func (p *Poller) Stats() *Stats { return &p.stats }

// corporation is this replica's demand for one corporation: the live
// subscribers' contexts (each carrying its session's credentials), oldest
// first, and the loop serving them.
type corporation struct {
	id     string
	creds  []*credential
	cancel context.CancelFunc
}

type credential struct {
	ctx     context.Context
	refused bool
}

// Watch registers a live subscriber of corporationID whose banking calls
// authenticate with ctx (its session), for as long as ctx lives: the
// corporation is polled while it has one, by this replica or another.
func (p *Poller) Watch(ctx context.Context, corporationID string) {
	if corporationID == "" {
		return
	}
	c := &credential{ctx: ctx}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.init()
	corp := p.corps[corporationID]
	if corp == nil {
		lctx, cancel := context.WithCancel(context.Background())
		corp = &corporation{id: corporationID, cancel: cancel}
		p.corps[corporationID] = corp
		p.wg.Add(1)
		go func() { defer p.wg.Done(); p.run(lctx, corp) }()
	}
	corp.creds = append(corp.creds, c)
	p.stats.Subscribers.Add(1)
	p.mu.Unlock()
	context.AfterFunc(ctx, func() { p.leave(corp, c) })
}

// init sets the defaults; p.mu is held.
func (p *Poller) init() {
	if p.corps == nil {
		p.corps = map[string]*corporation{}
		p.baselines = map[string]*baselineRead{}
		if p.replica == "" {
			p.replica = uuid.NewString()
		}
		if p.Logger == nil {
			p.Logger = slog.New(slog.DiscardHandler)
		}
	}
}

type baselineRead struct {
	done chan struct{}
}

// Baseline makes sure corporationID has a snapshot for its next poll to
// compare with, reading one now with the session of ctx when the
// corporation was never polled: a poll's first reading of a corporation
// announces nothing, so whatever changes after Baseline returns is
// announced by a later poll. The gateway calls it before it gives a
// client a starting point (eventsCursor) or starts a subscription's
// delivery. A corporation with a snapshot costs one bucket read; a
// failed read is logged and left to the poll loop, which then starts from
// its own baseline.
func (p *Poller) Baseline(ctx context.Context, corporationID string) {
	if corporationID == "" {
		return
	}
	key := leaseKey(corporationID)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.init()
	if b := p.baselines[corporationID]; b != nil {
		p.mu.Unlock()
		select {
		case <-b.done:
		case <-ctx.Done():
		}
		return
	}
	b := &baselineRead{done: make(chan struct{})}
	p.baselines[corporationID] = b
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.baselines, corporationID)
		p.mu.Unlock()
		close(b.done)
	}()
	if _, err := p.Snapshots.Get(ctx, key); err == nil {
		return
	} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
		if ctx.Err() == nil { // a subscriber that left at once is no failure
			p.Logger.Warn("bankpoll: a corporation's snapshot could not be read", "err", err)
		}
		return
	}
	if err := p.pollOnce(ctx, corporationID, ctx); err != nil && ctx.Err() == nil {
		p.Logger.Warn("bankpoll: a corporation's baseline could not be read; its first poll takes it", "err", logSafe(err))
	}
}

// leave removes one subscriber's credential; the last one stops the loop.
func (p *Poller) leave(corp *corporation, c *credential) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range corp.creds {
		if x == c {
			corp.creds = append(corp.creds[:i:i], corp.creds[i+1:]...)
			p.stats.Subscribers.Add(-1)
			break
		}
	}
	if len(corp.creds) == 0 && p.corps[corp.id] == corp {
		delete(p.corps, corp.id)
		corp.cancel()
	}
}

// credential returns the context of the oldest live session not refused,
// or nil when every one ended or was refused.
func (p *Poller) credential(corp *corporation) *credential {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range corp.creds {
		if !c.refused && c.ctx.Err() == nil {
			return c
		}
	}
	return nil
}

func (p *Poller) refuse(c *credential) {
	p.mu.Lock()
	c.refused = true
	p.mu.Unlock()
}

// Close stops every loop, handing back the leases held, and waits.
func (p *Poller) Close() {
	p.mu.Lock()
	p.closed = true
	for id, corp := range p.corps {
		corp.cancel()
		delete(p.corps, id)
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Poller) interval() time.Duration {
	if p.Interval < MinInterval {
		return DefaultInterval
	}
	return p.Interval
}

// Lease timing, in intervals: the holder renews every half interval; a
// contender checks every quarter, and takes a lease whose revision has not
// moved for 1.5 intervals. A holder that died is replaced within 2
// intervals of its last renewal, and a slow poll never costs the lease
// (renewal runs beside it).
func (p *Poller) renewEvery() time.Duration { return p.interval() / 2 }
func (p *Poller) checkEvery() time.Duration { return p.interval() / 4 }
func (p *Poller) expiry() time.Duration     { return p.interval() * 3 / 2 }

// leaseKey is a bucket key for a corporation id, whatever its characters.
func leaseKey(corporationID string) string {
	return "c." + base64.RawURLEncoding.EncodeToString([]byte(corporationID))
}

type leaseValue struct {
	Replica string    `json:"replica"`
	At      time.Time `json:"at"`
}

// run competes for the corporation's lease until ctx ends (its last local
// subscriber left), and polls while it holds it.
func (p *Poller) run(ctx context.Context, corp *corporation) {
	key := leaseKey(corp.id)
	var seenRev uint64
	var seenAt time.Time
	t := time.NewTicker(p.checkEvery())
	defer t.Stop()
	for {
		if p.credential(corp) == nil {
			// Every local subscriber's session was refused: leave the
			// lease to a replica whose subscribers can still read.
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				continue
			}
		}
		rev, took, err := p.acquire(ctx, key, &seenRev, &seenAt)
		if err != nil && ctx.Err() == nil {
			p.Logger.Debug("bankpoll: lease check failed", "err", err)
		}
		if rev != 0 {
			if took {
				p.stats.Takeovers.Add(1)
			}
			p.hold(ctx, corp, key, rev)
			seenRev, seenAt = 0, time.Time{}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// acquire takes the lease when nobody holds it, or when its revision has
// not moved for expiry() (its holder died). It returns the lease's
// revision when taken, 0 otherwise.
func (p *Poller) acquire(ctx context.Context, key string, seenRev *uint64, seenAt *time.Time) (rev uint64, took bool, err error) {
	val, _ := json.Marshal(leaseValue{Replica: p.replica, At: time.Now().UTC()})
	e, err := p.Leases.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		rev, err = p.Leases.Create(ctx, key, val)
		if err != nil {
			return 0, false, nilIfConflict(err)
		}
		return rev, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if e.Revision() != *seenRev {
		*seenRev, *seenAt = e.Revision(), time.Now()
		return 0, false, nil
	}
	if time.Since(*seenAt) < p.expiry() {
		return 0, false, nil
	}
	rev, err = p.Leases.Update(ctx, key, val, e.Revision())
	if err != nil {
		return 0, false, nilIfConflict(err)
	}
	return rev, true, nil
}

func nilIfConflict(err error) error {
	if isConflict(err) {
		return nil
	}
	return err
}

func isConflict(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
		return true
	}
	return errors.Is(err, jetstream.ErrKeyExists)
}

// hold polls the corporation while the lease is ours: a goroutine renews
// it, and ends the holding when it is lost (taken by another replica, or
// not renewed in time). When ctx ends the lease is handed back (deleted) so
// that another replica with subscribers takes it at once.
func (p *Poller) hold(ctx context.Context, corp *corporation, key string, rev uint64) {
	p.stats.Polling.Add(1)
	defer p.stats.Polling.Add(-1)
	hctx, lost := context.WithCancel(ctx)
	defer lost()
	var last atomic.Uint64
	last.Store(rev)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.renew(hctx, lost, key, &last)
	}()
	p.pollLoop(hctx, corp)
	lost()
	<-done
	if ctx.Err() != nil || p.credential(corp) == nil {
		// Handed back on purpose: the last subscriber here left, the
		// gateway stops, or no local session may read any more.
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := p.Leases.Delete(dctx, key, jetstream.LastRevision(last.Load())); err != nil && !isConflict(err) {
			p.Logger.Debug("bankpoll: could not hand the lease back; it expires", "err", err)
		}
	}
}

func (p *Poller) renew(ctx context.Context, lost context.CancelFunc, key string, last *atomic.Uint64) {
	t := time.NewTicker(p.renewEvery())
	defer t.Stop()
	renewed := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		val, _ := json.Marshal(leaseValue{Replica: p.replica, At: time.Now().UTC()})
		rctx, cancel := context.WithTimeout(ctx, p.renewEvery())
		rev, err := p.Leases.Update(rctx, key, val, last.Load())
		cancel()
		switch {
		case err == nil:
			last.Store(rev)
			renewed = time.Now()
		case isConflict(err):
			p.Logger.Info("bankpoll: another replica took over a corporation's polling")
			lost()
			return
		case time.Since(renewed) >= p.interval():
			// Another replica may take it from now on: stop before
			// it does, rather than poll beside it.
			p.Logger.Warn("bankpoll: the poll lease could not be renewed; polling stops here", "err", err)
			lost()
			return
		}
	}
}

// pollLoop polls at once (or once its last reading is an interval old), then on a fixed schedule: at a random offset
// within the first interval of the holding plus a whole number of intervals, so that a corporation is read
// every interval however long its polls take. A poll that overruns its
// slot is followed by the next slot still ahead, never by polls bunched to
// catch up. After a failure it backs off (doubling, up to maxBackoff
// intervals) to the first slot after the back-off. It ends when ctx ends
// or no credential is left.
func (p *Poller) pollLoop(ctx context.Context, corp *corporation) {
	// The first poll is at once, unless the corporation was read less
	// than an interval ago (the Baseline of the subscriber that started
	// this loop, or the last poll of a holder that just handed over): then
	// one interval after that reading, so that a new subscriber does not
	// cost a second reading of every listing straight after its baseline.
	// The timetable after it starts at a random point of the interval, so
	// that corporations whose leases are taken together (a replica's
	// start, a hand-over) are not polled, and do not call the upstream, in
	// step.
	if due := p.nextReading(ctx, corp.id); due > 0 {
		t := time.NewTimer(due)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	sched := schedule{start: time.Now().Add(rand.N(p.interval())), every: p.interval()}
	slot := int64(0)
	failures := 0
	for {
		cred := p.credential(corp)
		if cred == nil {
			return
		}
		err := p.pollWith(ctx, corp, cred)
		if ctx.Err() != nil {
			return
		}
		var wait time.Duration
		if err != nil {
			p.stats.Errors.Add(1)
			failures++
			wait = backoff(p.interval(), failures)
		} else {
			failures = 0
		}
		slot = sched.next(slot, time.Now(), wait)
		at := sched.at(slot)
		if err != nil {
			p.Logger.Warn("bankpoll: polling a corporation failed; backing off", "retry_in", time.Until(at).Round(time.Millisecond), "err", logSafe(err))
		}
		t := time.NewTimer(time.Until(at))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// nextReading is how long until corporationID's snapshot is an interval
// old: 0 when there is none, or it cannot be read (the poll then reads at
// once and reports what failed).
func (p *Poller) nextReading(ctx context.Context, corporationID string) time.Duration {
	e, err := p.Snapshots.Get(ctx, leaseKey(corporationID))
	if err != nil {
		return 0
	}
	return max(0, time.Until(e.Created().Add(p.interval())))
}

// schedule is a poll loop's fixed timetable: slot k starts at
// start + k*every.
type schedule struct {
	start time.Time
	every time.Duration
}

func (s schedule) at(slot int64) time.Time { return s.start.Add(time.Duration(slot) * s.every) }

// next is the slot to poll in after the poll of slot cur ended at now: the
// first slot after cur that starts no earlier than now + wait (wait is the
// back-off after a failure, 0 after a success). Slots that passed during
// an overrunning poll are skipped, never made up.
func (s schedule) next(cur int64, now time.Time, wait time.Duration) int64 {
	due := now.Add(wait).Sub(s.start)
	k := int64(due / s.every)
	if due%s.every != 0 {
		k++
	}
	return max(k, cur+1)
}

// maxBackoff caps the back-off, in intervals.
const maxBackoff = 16

// backoff is the wait after failures in a row: 2, 4, 8 … intervals, at
// most maxBackoff.
func backoff(interval time.Duration, failures int) time.Duration {
	n := maxBackoff
	if failures < bits.Len(maxBackoff) {
		n = min(1<<failures, maxBackoff)
	}
	return interval * time.Duration(n)
}

// logSafe keeps upstream bodies out of logs: an upstream error is logged
// by its status only.
func logSafe(err error) string {
	var e *banking.ErrorResponse
	if errors.As(err, &e) {
		return fmt.Sprintf("banking upstream answered %d", e.StatusCode)
	}
	return err.Error()
}

// pollWith polls with one credential; a refused one (401) is dropped and
// the next live subscriber's session is tried at once.
func (p *Poller) pollWith(ctx context.Context, corp *corporation, cred *credential) error {
	for cred != nil {
		err := p.pollOnce(ctx, corp.id, cred.ctx)
		switch {
		case err == nil || ctx.Err() != nil:
			return err
		case cred.ctx.Err() != nil:
			// Its subscriber left during the poll: poll with the next.
		case banking.IsUnauthorized(err):
			p.refuse(cred)
			p.Logger.Info("bankpoll: a subscriber's session was refused upstream; polling with another")
		default:
			return err
		}
		cred = p.credential(corp)
	}
	return nil
}

// callContext carries the session of cred (its banking token source) and
// ends with ctx or with the session's subscription, whichever first.
func callContext(ctx, cred context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(context.WithoutCancel(cred))
	stop1 := context.AfterFunc(ctx, cancel)
	stop2 := context.AfterFunc(cred, cancel)
	return c, func() { stop1(); stop2(); cancel() }
}
