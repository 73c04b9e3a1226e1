package bankingsim

import (
	"testing"
	"time"
)

// Tokens nobody can use any more are forgotten, and the scans that find
// them cost O(1) per issued token however many tokens are live: a scan
// runs when the live tokens have doubled since the last one.
func TestTokenPruningIsBoundedAndAmortised(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s := New(Options{Now: func() time.Time { return now }})
	p := principal{kind: kindAPI, id: "key", corpID: "corp"}
	s.mu.Lock()
	defer s.mu.Unlock()
	base := len(s.tokens) // the seed's
	prunes0 := s.prunes

	// 20,000 live tokens (one call each, all within the grace): a scan
	// at every 1,024 issues would make ~20; doubling makes ~5.
	const live = 20000
	const chain = "one-sign-in"
	for range live {
		s.issueTokenLocked(p, chain)
	}
	if got := s.prunes - prunes0; got > 6 {
		t.Fatalf("%d scans for %d live tokens, want at most 6", got, live)
	}
	// One call per millisecond from here: with the 10 s grace, 10,000
	// tokens are live at any time, and the scans keep the map within
	// twice that (the 20,000 above die a minute in).
	maxKept := 0
	for range 60000 {
		now = now.Add(time.Millisecond)
		s.issueTokenLocked(p, chain)
		maxKept = max(maxKept, len(s.tokens)-base)
	}
	if limit := 2*int(DefaultTokenGrace/time.Millisecond) + 2; len(s.tokens)-base > limit {
		t.Fatalf("%d tokens kept at the end, want at most %d", len(s.tokens)-base, limit)
	}
	if maxKept >= 2*live+2 {
		t.Fatalf("the map grew to %d tokens, want under %d", maxKept, 2*live+2)
	}
}
