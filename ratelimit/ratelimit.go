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

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// New returns buckets that refill perSecond tokens a second up to burst.
func New(perSecond float64, burst int) *Keyed {
	return &Keyed{limit: rate.Limit(perSecond), burst: max(burst, 1), buckets: map[string]*bucket{}}
}

// PerMinute returns buckets of n tokens that refill n a minute.
func PerMinute(n int) *Keyed { return New(float64(n)/60, n) }

// Allow takes one token from key's bucket, or reports how long until one is
// there.
func (k *Keyed) Allow(key string) (bool, time.Duration) {
	ok, wait, _ := k.Take(key)
	return ok, wait
}

// Take is Allow for an attempt that is known to count only once it is
// done (a sign-in counts when it fails): it takes a token now, so that
// attempts running at the same time cannot all slip through, and returns
// refund, which gives the token back when the attempt turned out not to
// count. refund does nothing when no token was taken.
func (k *Keyed) Take(key string) (ok bool, wait time.Duration, refund func()) {
	now := time.Now()
	b := k.bucket(key, now)
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d, func() {}
	}
	// Cancelled as of the moment it was taken: a reservation cancelled
	// after its own time gives nothing back.
	return true, 0, func() { r.CancelAt(now) }
}

// bucket returns key's bucket, made on first use, and drops idle ones.
func (k *Keyed) bucket(key string, now time.Time) *bucket {
	k.mu.Lock()
	defer k.mu.Unlock()
	if now.Sub(k.swept) > idle {
		for key, b := range k.buckets {
			if now.Sub(b.seen) > idle {
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
