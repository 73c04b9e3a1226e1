// Package ratelimit keeps one token bucket per key (a client address, an
// account, a session, a webhook sender), for the gateway's rate limits.
// Buckets idle for a while are dropped, so memory follows the set of
// recent keys, not every key ever seen.
package ratelimit

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// idle is how long an unused bucket is kept.
const idle = 10 * time.Minute

// Keyed is a set of token buckets, one per key. It is safe for concurrent
// use.
type Keyed struct {
	limit rate.Limit
	burst int

	// mu guards the map and every bucket, and orders the clock: each
	// reading of it is taken under mu, so a bucket never sees time go back.
	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
	// inFlight counts attempts taken and not yet done. Each holds a claim
	// on one of the bucket's tokens without taking it, so that attempts
	// running at once cannot together pass more than the bucket holds;
	// only one that turns out to count takes its token.
	inFlight int
}

// New returns buckets that refill perSecond tokens a second up to burst.
func New(perSecond float64, burst int) *Keyed {
	return &Keyed{limit: rate.Limit(perSecond), burst: max(burst, 1), buckets: map[string]*bucket{}}
}

// PerMinute returns buckets of n tokens that refill n a minute.
func PerMinute(n int) *Keyed { return New(float64(n)/60, n) }

// Allow takes one token from key's bucket, or reports how long until one is
// there (a token claimed by an attempt in flight is not there).
func (k *Keyed) Allow(key string) (bool, time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := time.Now()
	b := k.bucket(key, now)
	if wait := k.wait(b, now); wait > 0 {
		return false, wait
	}
	b.lim.ReserveN(now, 1)
	return true, 0
}

// Take is Allow for an attempt that is known to count only once it is
// done (a sign-in counts when it fails). It admits the attempt when a
// token is free, and claims that token while the attempt runs, so that
// attempts running at the same time cannot all slip through; done(counts)
// ends the attempt and takes the token only when counts. Nothing is taken
// and given back: a bucket's tokens move only when an attempt counts and
// as the clock refills them, so attempts that never count can never empty
// it, however many overlap. done does nothing when the attempt was refused,
// and nothing the second time.
func (k *Keyed) Take(key string) (ok bool, wait time.Duration, done func(counts bool)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := time.Now()
	b := k.bucket(key, now)
	if wait := k.wait(b, now); wait > 0 {
		return false, wait, func(bool) {}
	}
	b.inFlight++
	ended := false
	return true, 0, func(counts bool) {
		k.mu.Lock()
		defer k.mu.Unlock()
		if ended {
			return
		}
		ended = true
		b.inFlight--
		now := time.Now()
		b.seen = now
		if counts {
			// The claim guaranteed the token is there; ReserveN takes it
			// whatever the float arithmetic says, so a counted attempt is
			// never lost.
			b.lim.ReserveN(now, 1)
		}
	}
}

// wait is how long until b has a token that no attempt in flight claims:
// zero when it has one now. k.mu must be held.
func (k *Keyed) wait(b *bucket, now time.Time) time.Duration {
	short := float64(b.inFlight+1) - b.lim.TokensAt(now)
	if short <= 0 {
		return 0
	}
	if k.limit <= 0 {
		return rate.InfDuration
	}
	return time.Duration(short / float64(k.limit) * float64(time.Second))
}

// bucket returns key's bucket, made on first use, and drops idle ones (never
// one with an attempt in flight, whose end would go to a bucket no longer
// in the map). k.mu must be held.
func (k *Keyed) bucket(key string, now time.Time) *bucket {
	if now.Sub(k.swept) > idle {
		for key, b := range k.buckets {
			if b.inFlight == 0 && now.Sub(b.seen) > idle {
				delete(k.buckets, key)
			}
		}
		k.swept = now
	}
	b := k.buckets[key]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(k.limit, k.burst)}
		k.buckets[key] = b
	}
	b.seen = now
	return b
}
