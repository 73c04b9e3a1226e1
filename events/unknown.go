package events

import (
	"net"
	"net/http"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"
)

// Unknown remembers event ids the upstream answered 404 for: forged or not
// ours. The intake acknowledges a repeat of one without storing it, and the
// enricher never asks the upstream about it again, so a flood of forged
// webhooks costs the upstream (and the merchant's token) one call per
// distinct id, at most, per replica. Bounded; the oldest ids go first.
type Unknown struct{ ids *lru.Cache[string, struct{}] }

// NewUnknown remembers up to size ids.
func NewUnknown(size int) *Unknown {
	c, _ := lru.New[string, struct{}](size)
	return &Unknown{ids: c}
}

// Add remembers id. A nil Unknown remembers nothing.
func (u *Unknown) Add(id string) {
	if u != nil {
		u.ids.Add(id, struct{}{})
	}
}

// Has reports whether id is known to be unknown upstream.
func (u *Unknown) Has(id string) bool { return u != nil && u.ids.Contains(id) }

// senderLimiter keeps a token bucket per sending address, so that one
// forger cannot fill the webhook stream; idle buckets are dropped.
type senderLimiter struct {
	limit rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*senderBucket
	swept   time.Time
}

type senderBucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newSenderLimiter(perSecond float64, burst int) *senderLimiter {
	return &senderLimiter{limit: rate.Limit(perSecond), burst: burst, buckets: map[string]*senderBucket{}}
}

func (l *senderLimiter) allow(r *http.Request) bool {
	addr, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		addr = r.RemoteAddr
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > time.Minute {
		for a, b := range l.buckets {
			if now.Sub(b.seen) > time.Minute {
				delete(l.buckets, a)
			}
		}
		l.swept = now
	}
	b := l.buckets[addr]
	if b == nil {
		b = &senderBucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[addr] = b
	}
	b.seen = now
	return b.lim.AllowN(now, 1)
}
