// Package idempotency runs money movements, and every call that creates an
// upstream record, at most once per client-chosen key, and owns the whole
// protocol (Store.Run): claim the key, send, remember an unknown outcome,
// look it up once it has settled, answer. A call declares an Intent (its
// scope, how to send it, how to find its record, what proves a record its
// own); a retry either replays the result of the attempt that succeeded, or
// carries what the earlier failed attempt left behind (the payments spec's
// rule 3: the order id from the upstream's refusal), instead of charging
// twice.
//
// An attempt whose outcome is unknown (the request went out, the answer
// was lost) is remembered as such, with what identifies it upstream (Sent)
// and when it ran, and is never repeated blindly: the next call with the
// key gets it as prior with Unknown set, and must find out what happened
// upstream before it sends anything again (see Func).
//
// Attempts live in a JetStream key-value bucket with a TTL, shared by every
// replica. A call claims its key with the bucket's compare-and-set (Create
// when the key is new, Update at the revision it read otherwise), so two
// concurrent calls with one key, on one replica or on two, never both reach
// the upstream: the loser waits for the winner's outcome. A process-local
// mutex could not give that across replicas.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Bucket is the key-value bucket's name; TTL how long an attempt is kept.
const (
	Bucket = "order_attempts"
	TTL    = 24 * time.Hour
)

// Defaults of the tunable durations.
const (
	// DefaultLease is how long a claim holds a key while its call runs. It
	// must outlast the slowest upstream call (the clients' deadline is 10 s):
	// a claim older than its lease is taken to belong to a replica that died
	// mid-call, and the key becomes claimable again.
	DefaultLease = time.Minute
	// DefaultMaxWait is how long a call waits for a concurrent call with
	// the same key to finish before giving up with ErrInProgress.
	DefaultMaxWait = 20 * time.Second
	// recordTimeout bounds writing the outcome once the call has run.
	recordTimeout = 5 * time.Second
)

// Errors a caller translates for its client.
var (
	// ErrFingerprintMismatch: the key was used for a different request.
	ErrFingerprintMismatch = errors.New("idempotency: key was used for a different request")
	// ErrInProgress: a call with the same key is still running.
	ErrInProgress = errors.New("idempotency: a call with this key is still in progress")
)

// Attempt is what is remembered of one call. It never holds a card token,
// a card number or a secret: callers put only ids and upstream results in it.
type Attempt struct {
	// ID is the upstream's id for the attempt: for a failed one, what a
	// retry must carry (the order id of a refused order); for a succeeded
	// one, the id of what was created.
	ID string `json:"id,omitempty"`
	// Succeeded is set once the call had its effect; later calls with the
	// key get this attempt back and run nothing.
	Succeeded bool `json:"succeeded,omitempty"`
	// Fingerprint identifies what the call asked for, so that a key reused
	// for a different request is refused. Do sets it.
	Fingerprint string `json:"fingerprint"`
	// Result is the upstream's answer of a succeeded call, as the caller
	// wants to replay it.
	Result json.RawMessage `json:"result,omitempty"`
	// Unknown marks an attempt that reached the upstream (or may have)
	// and whose answer was lost: it may or may not have had its effect.
	Unknown bool `json:"unknown,omitempty"`
	// Sent is what identifies an unknown attempt in the upstream's
	// listings: the fields the caller sent, a reference it chose. It never
	// holds a card token or a secret.
	Sent json.RawMessage `json:"sent,omitempty"`
	// SentAt and EndedAt (Unix milliseconds) bound when an unknown attempt
	// ran: whatever it did upstream happened in between.
	SentAt  int64 `json:"sent_at,omitempty"`
	EndedAt int64 `json:"ended_at,omitempty"`
	// Why says what a lookup of an unknown attempt could not tell.
	Why string `json:"why,omitempty"`
	// LaneMark names the send of an attempt of unknown outcome in its
	// lane (see Intent.Lane): a lookup that finds the lane still marked so
	// knows nothing else was sent in it since.
	LaneMark string `json:"lane_mark,omitempty"`
	// Final marks an unknown attempt no lookup can ever tell (see
	// Unknown.Final).
	Final bool `json:"final,omitempty"`
}

// record is the stored value: the attempt, and while a call runs, the end of
// its claim.
type record struct {
	Attempt
	// LeaseUntil (Unix milliseconds) is set while a call holds the key;
	// ClaimedAt is when it took it.
	LeaseUntil int64 `json:"lease_until,omitempty"`
	ClaimedAt  int64 `json:"claimed_at,omitempty"`
}

func (r record) held(now time.Time) bool { return r.LeaseUntil > now.UnixMilli() }

// Func is the guarded call. prior is the failed or unknown attempt a retry
// resumes, nil on the first try. It returns the attempt to remember:
// Succeeded when the call had its effect, Unknown when its answer was lost,
// otherwise a failed attempt whose ID the next retry gets as prior. An error
// means nothing happened upstream that a retry must know of: the key is
// released as it was (an unknown prior stays unknown), and the error
// returned.
//
// A prior with Unknown set must not be sent again as it is: Func first looks
// for it upstream (by prior.Sent, between prior.SentAt and prior.EndedAt)
// and returns what it found as Succeeded, or, when it cannot tell, an error
// (the prior stays remembered), or sends again only once it knows the
// attempt had no effect.
type Func func(ctx context.Context, prior *Attempt) (Attempt, error)

// Store keeps attempts in a JetStream key-value bucket.
type Store struct {
	kv      jetstream.KeyValue
	lease   time.Duration
	maxWait time.Duration
	now     func() time.Time
	log     *slog.Logger
}

// Option tunes a Store.
type Option func(*Store)

// WithLogger sets where a failure to remember a succeeded call is logged.
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// New wraps an opened bucket (see Bucket and TTL).
func New(kv jetstream.KeyValue, opts ...Option) *Store {
	s := &Store{kv: kv, lease: DefaultLease, maxWait: DefaultMaxWait, now: time.Now, log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Key derives the bucket key of (scope, key): keys are client text and
// bucket keys allow a small alphabet only, so they are hashed together with
// their scope. Scopes keep principals (and kinds of call) apart.
func Key(scope, key string) string {
	sum := sha256.Sum256([]byte(scope + "\x00" + key))
	return hex.EncodeToString(sum[:])
}

// Do runs fn at most once to success for (scope, key):
//   - the first call claims the key and runs fn with prior nil;
//   - a call after a success returns the remembered attempt without running
//     fn;
//   - a call after a failure runs fn with the failed attempt as prior;
//   - a call while another holds the key waits for its outcome (at most the
//     store's max wait, then ErrInProgress);
//   - a call whose fingerprint differs from the remembered one gets
//     ErrFingerprintMismatch.
//
// It returns the attempt fn returned (or the remembered success). When fn
// succeeded but the outcome could not be stored, Do logs it and still
// returns the attempt without error: failing then would invite the client to
// retry a call that already moved money.
func (s *Store) Do(ctx context.Context, scope, key, fingerprint string, fn Func) (Attempt, error) {
	k := Key(scope, key)
	deadline := time.Now().Add(s.maxWait)
	for {
		c, replay, err := s.claim(ctx, k, fingerprint, deadline)
		if err != nil {
			return Attempt{}, err
		}
		if replay != nil {
			return *replay, nil
		}
		if c == nil {
			continue // lost a race for the key; read it again
		}
		return s.run(ctx, c, fingerprint, fn)
	}
}

// claimed is a key this call holds.
type claimed struct {
	key   string
	rev   uint64
	prior *Attempt // the failed attempt being resumed; nil for a new key
}

// claim takes the key, or returns the remembered success, or waits while
// another call holds it. It returns (nil, nil, nil) when another call won a
// compare-and-set in between, for the caller to read the key again.
func (s *Store) claim(ctx context.Context, k, fp string, deadline time.Time) (*claimed, *Attempt, error) {
	e, err := s.kv.Get(ctx, k)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		b, _ := json.Marshal(record{Attempt: Attempt{Fingerprint: fp}, LeaseUntil: s.leaseEnd(), ClaimedAt: s.now().UnixMilli()})
		rev, err := s.kv.Create(ctx, k, b)
		if casLost(err) {
			return nil, nil, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("idempotency: claim: %w", err)
		}
		return &claimed{key: k, rev: rev}, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("idempotency: read: %w", err)
	}
	var r record
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return nil, nil, fmt.Errorf("idempotency: decode: %w", err)
	}
	if r.Fingerprint != fp {
		return nil, nil, ErrFingerprintMismatch
	}
	if r.Succeeded {
		return nil, &r.Attempt, nil
	}
	if r.held(s.now()) {
		return nil, nil, s.wait(ctx, k, e.Revision(), time.UnixMilli(r.LeaseUntil), deadline)
	}
	// A failed attempt, or a claim whose holder died: resume it. A holder
	// that died while it held the key may have sent its call: that attempt's
	// outcome is unknown, and is resumed as such.
	prior := r.Attempt
	if r.LeaseUntil != 0 {
		if !prior.Unknown {
			prior.SentAt = r.ClaimedAt
		}
		prior.Unknown, prior.EndedAt = true, s.now().UnixMilli()
	}
	b, _ := json.Marshal(record{Attempt: prior, LeaseUntil: s.leaseEnd(), ClaimedAt: s.now().UnixMilli()})
	rev, err := s.kv.Update(ctx, k, b, e.Revision())
	if casLost(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("idempotency: claim: %w", err)
	}
	var p *Attempt
	if prior.ID != "" || prior.Unknown {
		p = &prior
	}
	return &claimed{key: k, rev: rev, prior: p}, nil, nil
}

// run calls fn under the claim and stores its outcome with the claim's
// revision, so nothing written meanwhile is overwritten.
func (s *Store) run(ctx context.Context, c *claimed, fp string, fn Func) (a Attempt, err error) {
	settled := false
	defer func() {
		if !settled { // fn panicked: give the key back before the panic goes on
			s.release(ctx, c, fp)
		}
	}()
	a, err = fn(ctx, c.prior)
	settled = true
	if err != nil {
		s.release(ctx, c, fp)
		return a, err
	}
	a.Fingerprint = fp
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	b, _ := json.Marshal(record{Attempt: a})
	if _, err := s.kv.Update(wctx, c.key, b, c.rev); err != nil {
		if a.Unknown {
			// Not remembering it would let a retry send it again blindly;
			// the claim stays until its lease ends, so no retry runs
			// before then, and the caller answers "outcome unknown".
			s.log.ErrorContext(ctx, "idempotency: could not remember an attempt of unknown outcome", "err", err)
			return a, nil
		}
		if !a.Succeeded {
			return a, fmt.Errorf("idempotency: record attempt: %w", err)
		}
		s.log.ErrorContext(ctx, "idempotency: could not remember a succeeded call", "id", a.ID, "err", err)
	}
	return a, nil
}

// ownerKey is the bucket key that names the call an upstream record (of a
// kind of records) belongs to: one namespace per kind, whoever made it.
func ownerKey(records, id string) string { return Key("owner\x00"+records, id) }

// own marks the record as mine, unless it is already another's: the first
// to own a record keeps it. It reports whether mine owns it now.
func (s *Store) own(ctx context.Context, owner, mine string) (bool, error) {
	_, err := s.kv.Create(ctx, owner, []byte(mine))
	if err == nil {
		return true, nil
	}
	if !casLost(err) {
		return false, fmt.Errorf("idempotency: own: %w", err)
	}
	e, err := s.kv.Get(ctx, owner)
	if err != nil {
		return false, fmt.Errorf("idempotency: own: %w", err)
	}
	return string(e.Value()) == mine, nil
}

// release gives the key back as it was before the claim: deleted when it was
// new, the prior failed attempt otherwise. A failure leaves the claim to
// expire with its lease.
func (s *Store) release(ctx context.Context, c *claimed, fp string) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	var err error
	if c.prior == nil {
		err = s.kv.Delete(wctx, c.key, jetstream.LastRevision(c.rev))
	} else {
		// The whole prior goes back: an unknown attempt must stay unknown,
		// with what identifies it, until a retry finds out.
		prior := *c.prior
		prior.Fingerprint = fp
		b, _ := json.Marshal(record{Attempt: prior})
		_, err = s.kv.Update(wctx, c.key, b, c.rev)
	}
	if err != nil {
		s.log.WarnContext(ctx, "idempotency: could not release a key; it frees itself when its lease ends", "err", err)
	}
}

// wait blocks until the entry at k changes from revision rev, its lease
// ends, or the caller's wait is over.
func (s *Store) wait(ctx context.Context, k string, rev uint64, leaseEnd, deadline time.Time) error {
	w, err := s.kv.Watch(ctx, k, jetstream.UpdatesOnly())
	if err != nil {
		return fmt.Errorf("idempotency: watch: %w", err)
	}
	defer func() { _ = w.Stop() }()
	// The holder may have finished between the read and the watch.
	if e, err := s.kv.Get(ctx, k); err != nil || e.Revision() != rev {
		return nil
	}
	lease := time.NewTimer(max(leaseEnd.Sub(s.now()), 0))
	defer lease.Stop()
	giveUp := time.NewTimer(time.Until(deadline))
	defer giveUp.Stop()
	for {
		select {
		case e := <-w.Updates():
			if e != nil {
				return nil
			}
		case <-lease.C:
			return nil
		case <-giveUp.C:
			return ErrInProgress
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *Store) leaseEnd() int64 { return s.now().Add(s.lease).UnixMilli() }

// casLost reports a compare-and-set that another writer won.
func casLost(err error) bool {
	return err != nil && errors.Is(err, jetstream.ErrKeyExists)
}
