package session

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkCachePut is one put into a cache of 100,000 sessions (the
// replica's bound), with its expiry sweep (sweepPerPut entries). Before
// the sweep was bounded, the put that found the map doubled walked all of
// it under the lock: ~7 ms at this size (docs/performance.md, "Issue 15,
// eighth pass").
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
	s := &Session{Kind: APIClient, ExpiresAt: exp}
	rev := uint64(1)
	b.ReportAllocs()
	for b.Loop() {
		rev++
		c.mu.Lock()
		c.putLocked(keys[rev%cacheLimit], s, rev)
		c.mu.Unlock()
	}
}
