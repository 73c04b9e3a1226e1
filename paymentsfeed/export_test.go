package paymentsfeed

import "time"

// MarkBurst makes q's intake look in a burst of webhooks now, for tests of
// the enricher's yielding that cannot hold two stores in flight at will.
func MarkBurst(q *Queue) { q.burstAt.Store(time.Now().UnixNano()) }
