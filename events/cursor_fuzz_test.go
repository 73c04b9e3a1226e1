package events

import (
	"errors"
	"strconv"
	"testing"
)

// FuzzParseCursor checks cursor parsing against a fixed stream position:
// it never panics, accepts only what formatCursor makes for this epoch up
// to the newest event, and round-trips what it accepts.
// Run: go test -run '^$' -fuzz FuzzParseCursor -fuzztime 60s ./events
func FuzzParseCursor(f *testing.F) {
	pos := position{epoch: strconv.FormatInt(1_700_000_000_000_000_000, 36), last: 42}
	for _, s := range []string{"0." + pos.epoch, "42." + pos.epoch, "43." + pos.epoch, "99999999999", "1.", ".", "-1." + pos.epoch, "18446744073709551616." + pos.epoch, "1.zz", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, c string) {
		seq, err := parseCursor(c, pos)
		if err != nil {
			if !errors.Is(err, ErrBadCursor) && !errors.Is(err, ErrStaleCursor) && !errors.Is(err, ErrFutureCursor) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if seq > pos.last {
			t.Fatalf("accepted %q past the end", c)
		}
		if again, err := parseCursor(formatCursor(seq, pos.epoch), pos); err != nil || again != seq {
			t.Fatalf("round trip of %q: %d %v", c, again, err)
		}
	})
}
