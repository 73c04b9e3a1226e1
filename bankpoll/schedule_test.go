package bankpoll

import (
	"testing"
	"time"
)

// TestScheduleKeepsTheIntervalWhateverPollsTake: polls start at the
// holding's start plus whole intervals. A poll's duration does not push
// the next one back, an overrunning poll skips the slots it covered rather
// than polling again at once to catch up, and a back-off lands on the first
// slot after it.
func TestScheduleKeepsTheIntervalWhateverPollsTake(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := schedule{start: start, every: 10 * time.Second}
	at := func(d time.Duration) time.Time { return start.Add(d) }
	cases := []struct {
		name string
		cur  int64
		now  time.Time
		wait time.Duration
		want int64
	}{
		{"a quick poll: the next slot", 0, at(300 * time.Millisecond), 0, 1},
		{"a slow poll still inside its slot: the next slot, not a full interval after it ended", 3, at(39 * time.Second), 0, 4},
		{"a poll that ended exactly on the next slot's start", 0, at(10 * time.Second), 0, 1},
		{"a poll that overran one slot: the next slot ahead", 1, at(25 * time.Second), 0, 3},
		{"a poll that overran many slots: one poll, at the next slot ahead", 1, at(71 * time.Second), 0, 8},
		{"a failure with two intervals of back-off: the first slot after it", 2, at(21 * time.Second), 20 * time.Second, 5},
		{"a clock that went back: never the same slot again", 4, at(5 * time.Second), 0, 5},
	}
	for _, c := range cases {
		if got := s.next(c.cur, c.now, c.wait); got != c.want {
			t.Errorf("%s: slot %d, want %d", c.name, got, c.want)
		}
	}
	// Over a run of slow polls (7 s each, at 10 s) the polls start every
	// 10 s: 10 polls in 100 s, where waiting an interval after each poll
	// made 6.
	slot, polls := int64(0), 0
	for s.at(slot).Before(at(100 * time.Second)) {
		polls++
		slot = s.next(slot, s.at(slot).Add(7*time.Second), 0)
	}
	if polls != 10 {
		t.Errorf("%d polls of 7 s in 100 s at 10 s intervals, want 10", polls)
	}
}
