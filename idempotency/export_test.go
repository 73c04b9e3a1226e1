package idempotency

import "time"

// WithLease sets how long a claim holds a key (DefaultLease).
func WithLease(d time.Duration) Option { return func(s *Store) { s.lease = d } }

// WithMaxWait sets how long a call waits for a concurrent one with the same
// key (DefaultMaxWait).
func WithMaxWait(d time.Duration) Option { return func(s *Store) { s.maxWait = d } }

// WithClock sets the clock leases are read with; tests move it.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }
