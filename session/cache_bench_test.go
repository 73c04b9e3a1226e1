package session

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkCachePut is one put into a cache of 100,000 sessions (the
// replica's bound), with its expiry sweep (sweepPerPut entries). walk-all
// is what the sweep cost before it was bounded, on the put that found the
// map doubled: every entry checked under the lock (docs/performance.md,
// "Smaller benchmarks").
func BenchmarkCachePut(b *testing.B) {
	var c cache
	c.init(time.Now)
	c.live = true
	exp := time.Now().Add(time.Hour)
	keys := make([]string, cacheLimit)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
		c.entries[keys[i]] = cached{sess: Session{Kind: APIClient, ExpiresAt: exp}, rev: 1}
	}
	b.Run("put", func(b *testing.B) {
		s := &Session{Kind: APIClient, ExpiresAt: exp}
		rev := uint64(1)
		b.ReportAllocs()
		for b.Loop() {
			rev++
			c.mu.Lock()
			c.putLocked(keys[rev%cacheLimit], s, rev)
			c.mu.Unlock()
		}
	})
	b.Run("walk-all", func(b *testing.B) {
		for b.Loop() {
			c.mu.Lock()
			now := c.now()
			for k, e := range c.entries {
				if !now.Before(e.sess.ExpiresAt) {
					delete(c.entries, k)
				}
			}
			c.mu.Unlock()
		}
	})
}
