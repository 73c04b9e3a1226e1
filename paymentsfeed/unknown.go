package paymentsfeed

import (
	lru "github.com/hashicorp/golang-lru/v2"
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
