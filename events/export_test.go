package events

import "time"

// MarkBurst makes b's intake look in a burst of webhooks now, for tests of
// the enricher's yielding that cannot hold two stores in flight at will.
func MarkBurst(b *Bus) { b.burstAt.Store(time.Now().UnixNano()) }
