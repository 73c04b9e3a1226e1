package session

import (
	"time"

	"github.com/fingraph/fingraph/upstream/banking"
)

// SetCacheLimit lowers the cache's bound, for tests.
func SetCacheLimit(s *JetStreamStore, n int) {
	s.cache.mu.Lock()
	s.cache.limit = n
	s.cache.mu.Unlock()
}

// CacheLen is the number of cached sessions, for tests.
func CacheLen(s *JetStreamStore) int {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	return len(s.cache.entries)
}

// SetHoldFor changes how long a request holds its token arrivals before
// writing them, for tests.
func SetHoldFor(h *Handler, d time.Duration) { h.holdFor = d }

// SweepPerPut is how many cached entries a put examines for expiry.
const SweepPerPut = sweepPerPut

// SetNow replaces the store's clock, for tests. Call it before the store
// is used concurrently.
func SetNow(s *JetStreamStore, now func() time.Time) {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	s.now = now
	s.cache.now = now
}

// Count is the number of tracked connections, for tests.
func (s *Sockets) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, conns := range s.byKey {
		n += len(conns)
	}
	return n
}

// TokenHeader is the banking upstream's token header, both ways.
const TokenHeader = banking.HeaderAccessToken
