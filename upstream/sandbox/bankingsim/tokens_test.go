package bankingsim

import (
	"fmt"
	"testing"
	"time"
)

// lockedSim is a sandbox on a clock the caller moves (*now), held locked
// for the test, and an API client's principal to issue tokens for.
func lockedSim(tb testing.TB) (s *Sim, now *time.Time, p principal) {
	tb.Helper()
	clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s = New(Options{Now: func() time.Time { return clock }})
	s.mu.Lock()
	tb.Cleanup(s.mu.Unlock)
	return s, &clock, principal{kind: kindAPI, id: "key", corpID: "corp"}
}

// Tokens nobody can use any more are forgotten, and the scans that find
// them cost O(1) per issued token however many tokens are live: a scan
// runs when the live tokens have doubled since the last one.
func TestTokenPruningIsBoundedAndAmortised(t *testing.T) {
	s, now, p := lockedSim(t)
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
		*now = (*now).Add(time.Millisecond)
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

// Superseded tokens are forgotten as their grace ends, by the issues that
// follow, not by a scan of the map under the sandbox's lock: once the calls
// are steady, no scan runs at all, and the map and the queue hold the
// tokens of the last grace period.
func TestSupersededTokensAreForgottenWithoutAScan(t *testing.T) {
	s, now, p := lockedSim(t)
	base := len(s.tokens) // the seed's
	grace := int(DefaultTokenGrace / time.Millisecond)

	// 16 clients, one call per millisecond between them, for a minute.
	var prunesAfterGrace int
	maxKept, maxQueued := 0, 0
	for i := range 60000 {
		if i == grace {
			prunesAfterGrace = s.prunes
		}
		*now = (*now).Add(time.Millisecond)
		s.issueTokenLocked(p, fmt.Sprint("client-", i%16))
		maxKept = max(maxKept, len(s.tokens)-base)
		maxQueued = max(maxQueued, len(s.superseded.items)-s.superseded.head)
	}
	if got := s.prunes - prunesAfterGrace; got != 0 {
		t.Errorf("%d scans of the map once the calls were steady, want none", got)
	}
	// The tokens of the last grace period, and each chain's newest.
	if limit := grace + 16 + 1; maxKept > limit {
		t.Errorf("the map held up to %d tokens, want at most %d", maxKept, limit)
	}
	if maxQueued > grace+1 {
		t.Errorf("the queue held up to %d tokens, want at most %d", maxQueued, grace+1)
	}
	if cap(s.superseded.items) > 4*(grace+1) {
		t.Errorf("the queue's slice has room for %d tokens, want it to hold about what it queues", cap(s.superseded.items))
	}

	// A token within its grace still works, one past it does not.
	s.issueTokenLocked(p, "late")
	old := s.chains["late"]
	*now = (*now).Add(time.Millisecond)
	s.issueTokenLocked(p, "late")
	if s.tokens[old] == nil {
		t.Fatal("a token superseded a millisecond ago was forgotten")
	}
	*now = (*now).Add(DefaultTokenGrace + time.Millisecond)
	s.issueTokenLocked(p, "other")
	if s.tokens[old] != nil {
		t.Fatal("a token past its grace was kept")
	}
}

// BenchmarkTokenMapScan times one scan of the token map as 16 busy clients
// leave it when it has doubled (~58k tokens, half of them past their
// grace): the time every call waited behind the lock when the scans alone
// forgot superseded tokens (docs/performance.md, "Smaller benchmarks").
func BenchmarkTokenMapScan(b *testing.B) {
	s, now, p := lockedSim(b)
	fill := func() {
		s.pruneAt = 1 << 30       // no scan while filling
		s.superseded = jtiQueue{} // and nothing forgotten from the queue
		for i := range 58000 {
			if i == 29000 {
				*now = (*now).Add(DefaultTokenGrace + time.Second)
			}
			s.tokens[fmt.Sprint("fill-", i)] = &tokenState{chain: fmt.Sprint("client-", i%16), p: p,
				expires: now.Add(DefaultTokenTTL), supersededAt: *now}
		}
		*now = (*now).Add(time.Second)
	}
	for b.Loop() {
		b.StopTimer()
		fill()
		b.StartTimer()
		s.pruneTokensLocked(*now)
	}
}
