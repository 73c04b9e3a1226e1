package session

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
