package ratelimit

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	mrand "math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Limiter is a set of token buckets, one per key: Keyed on one replica,
// Shared across the replicas of one JetStream.
type Limiter interface {
	Allow(key string) (bool, time.Duration)
	Take(key string) (ok bool, wait time.Duration, done func(counts bool))
}

var (
	_ Limiter = (*Keyed)(nil)
	_ Limiter = (*Shared)(nil)
)

// Bucket is the JetStream key-value bucket of the shared limits, and
// BucketTTL how long a key is kept after its last change: longer than any
// shared limit takes to refill from empty, so that a key that expires was
// full anyway.
const (
	Bucket    = "ratelimits"
	BucketTTL = idle
)

// claimTTL is how long a claim of an attempt in flight is kept when the
// replica that made it never ends it (it stopped): longer than any
// attempt runs (the operation timeout).
const claimTTL = 2 * time.Minute

// sharedTries bounds the compare-and-set retries of one change; sharedWait
// bounds the time JetStream is waited for. Past either, the replica's own
// buckets decide.
//
// Ending a claim gets more of both: a claim left behind holds a token
// until claimTTL, so under contention (many attempts of one address at
// once, each writing the same entry) giving up on an end would leak
// tokens until the limit refused attempts that never failed.
const (
	sharedTries = 16
	sharedWait  = 2 * time.Second
	endTries    = 256
	endWait     = 10 * time.Second
)

// Shared is Keyed with its buckets kept in a JetStream key-value bucket,
// so that every replica on the stream sees the same tokens and the same
// attempts in flight: N replicas allow what one does. Each change is a
// compare-and-set on the key's one entry. When JetStream cannot be reached
// the replica's own buckets decide, so an outage neither opens the limits
// wholly nor locks anyone out.
type Shared struct {
	kv     jetstream.KeyValue
	prefix string
	limit  float64
	burst  float64
	local  *Keyed

	// Keys are bounded in number, whatever the number of addresses or
	// accounts: a bucket that is full again (no token taken, no claim) is
	// deleted rather than kept until it expires, and this replica creates
	// at most MaxNewKeysPerMinute keys of the limiter a minute; past it, a
	// new key's bucket is this replica's own (local).
	newMu     sync.Mutex
	newWindow time.Time
	newKeys   int
}

// MaxNewKeysPerMinute bounds the shared buckets one replica creates for
// one limiter a minute: with BucketTTL, at most ten times as many keys of
// it per replica at any moment.
const MaxNewKeysPerMinute = 1000

// errTooManyKeys refuses to create a shared key past MaxNewKeysPerMinute.
var errTooManyKeys = errors.New("ratelimit: too many new shared keys this minute")

// allowNewKey counts one new key in the current minute, or reports false
// past MaxNewKeysPerMinute.
func (s *Shared) allowNewKey(now time.Time) bool {
	s.newMu.Lock()
	defer s.newMu.Unlock()
	if now.Sub(s.newWindow) >= time.Minute {
		s.newWindow, s.newKeys = now, 0
	}
	if s.newKeys >= MaxNewKeysPerMinute {
		return false
	}
	s.newKeys++
	return true
}

// full reports whether st is what a missing key reads as: every token
// there and no claim.
func (s *Shared) full(st *sharedState) bool {
	return st.Tokens >= s.burst && len(st.Claims) == 0
}

// NewShared returns buckets named name in kv that refill perSecond tokens
// a second up to burst.
func NewShared(kv jetstream.KeyValue, name string, perSecond float64, burst int) *Shared {
	return &Shared{kv: kv, prefix: name, limit: perSecond, burst: float64(max(burst, 1)), local: New(perSecond, burst)}
}

// SharedPerMinute returns shared buckets of n tokens that refill n a
// minute.
func SharedPerMinute(kv jetstream.KeyValue, name string, n int) *Shared {
	return NewShared(kv, name, float64(n)/60, n)
}

// sharedState is one key's bucket: its tokens at a time, and the claims of
// the attempts in flight (claim id to expiry).
type sharedState struct {
	Tokens float64          `json:"t"`
	At     int64            `json:"a"`
	Claims map[string]int64 `json:"c,omitempty"`
}

// advance refills the tokens to now and drops expired claims.
func (s *Shared) advance(st *sharedState, now time.Time) {
	if elapsed := now.UnixNano() - st.At; elapsed > 0 {
		st.Tokens = math.Min(s.burst, st.Tokens+float64(elapsed)/float64(time.Second)*s.limit)
		st.At = now.UnixNano()
	}
	for id, exp := range st.Claims {
		if exp < now.UnixNano() {
			delete(st.Claims, id)
		}
	}
}

// wait is how long until st has a token no claim holds.
func (s *Shared) wait(st *sharedState) time.Duration {
	short := float64(len(st.Claims)+1) - st.Tokens
	if short <= 0 {
		return 0
	}
	if s.limit <= 0 {
		return claimTTL
	}
	return time.Duration(short / s.limit * float64(time.Second))
}

// key is the entry of a key: a digest, since keys hold addresses and
// account names that neither fit a JetStream key nor belong in one.
func (s *Shared) key(k string) string {
	sum := sha256.Sum256([]byte(k))
	return s.prefix + "." + hex.EncodeToString(sum[:16])
}

var errContended = errors.New("ratelimit: the shared bucket changed under every try")

// change reads key's bucket, lets f change it (f reports whether to
// write), and writes it back if nobody wrote it meanwhile, else tries
// again. f may run more than once.
func (s *Shared) change(key string, f func(st *sharedState, now time.Time) bool) error {
	return s.changeWithin(key, sharedTries, sharedWait, f)
}

// changeWithin is change with its own bounds on tries and time.
func (s *Shared) changeWithin(key string, tries int, within time.Duration, f func(st *sharedState, now time.Time) bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	k := s.key(key)
	for try := range tries {
		now := time.Now()
		st := sharedState{Tokens: s.burst, At: now.UnixNano()}
		var rev uint64
		e, err := s.kv.Get(ctx, k)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return err
		default:
			rev = e.Revision()
			if json.Unmarshal(e.Value(), &st) != nil {
				st = sharedState{Tokens: s.burst, At: now.UnixNano()}
			}
		}
		s.advance(&st, now)
		if !f(&st, now) {
			return nil
		}
		switch {
		case s.full(&st) && rev == 0:
			return nil // a missing key reads as full
		case s.full(&st):
			// Compaction: a full bucket is deleted, not kept.
			err = s.kv.Delete(ctx, k, jetstream.LastRevision(rev))
		case rev == 0 && !s.allowNewKey(now):
			return errTooManyKeys
		default:
			var b []byte
			if b, err = json.Marshal(st); err != nil {
				return err
			}
			if rev == 0 {
				_, err = s.kv.Create(ctx, k, b)
			} else {
				_, err = s.kv.Update(ctx, k, b, rev)
			}
		}
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		// Another replica wrote first (or the write failed): read again
		// after a random pause, so that writers in step fall out of it.
		pause := time.Duration(mrand.Int64N(int64(100*time.Microsecond) << min(try, 6)))
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return errContended
}

// Allow takes one token from key's bucket, or reports how long until one is
// there (a token claimed by an attempt in flight is not there).
func (s *Shared) Allow(key string) (bool, time.Duration) {
	var ok bool
	var wait time.Duration
	err := s.change(key, func(st *sharedState, _ time.Time) bool {
		if wait = s.wait(st); wait > 0 {
			ok = false
			return false
		}
		st.Tokens--
		ok = true
		return true
	})
	if err != nil {
		return s.local.Allow(key)
	}
	return ok, wait
}

// Take is Keyed.Take across replicas: the attempt's claim is kept in the
// shared bucket while it runs, so that attempts on different replicas at
// once cannot together pass more than the bucket holds, and done(counts)
// takes the claimed token only when the attempt counts. A claim whose
// replica stops before it ends expires after claimTTL.
func (s *Shared) Take(key string) (ok bool, wait time.Duration, done func(counts bool)) {
	var idb [8]byte
	_, _ = rand.Read(idb[:])
	id := hex.EncodeToString(idb[:])
	err := s.change(key, func(st *sharedState, now time.Time) bool {
		if wait = s.wait(st); wait > 0 {
			ok = false
			return false
		}
		if st.Claims == nil {
			st.Claims = map[string]int64{}
		}
		st.Claims[id] = now.Add(claimTTL).UnixNano()
		ok = true
		return true
	})
	if err != nil {
		return s.local.Take(key)
	}
	if !ok {
		return false, wait, func(bool) {}
	}
	var once sync.Once
	return true, 0, func(counts bool) {
		once.Do(func() {
			err := s.changeWithin(key, endTries, endWait, func(st *sharedState, _ time.Time) bool {
				_, claimed := st.Claims[id]
				delete(st.Claims, id)
				if counts {
					// The claim kept the token there; a counted attempt
					// is never lost, even one that outlived its claim.
					st.Tokens--
				}
				return claimed || counts
			})
			if err != nil && counts {
				// Counted on this replica at least.
				s.local.Allow(key)
			}
		})
	}
}
