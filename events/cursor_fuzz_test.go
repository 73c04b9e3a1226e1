package events

import (
	"errors"
	"testing"
)

// FuzzParseCursor checks cursor parsing against a fixed stream position:
// it never panics, accepts only what the codec seals for this epoch up to
// the newest event, and round-trips what it accepts.
// Run: go test -run '^$' -fuzz FuzzParseCursor -fuzztime 60s ./events
func FuzzParseCursor(f *testing.F) {
	pos := position{codec: newCursorCodec("0123456789abcdef0123456789abcdef"), last: 42}
	other := newCursorCodec("fedcba9876543210fedcba9876543210")
	for _, s := range []string{pos.codec.format(0), pos.codec.format(42), pos.codec.format(43), other.format(1),
		"99999999999", "1.", ".", "1.zz", "", "AAAAAAAAAAAAAAAAAAAAAA"} {
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
		if again, err := parseCursor(pos.codec.format(seq), pos); err != nil || again != seq {
			t.Fatalf("round trip of %q: %d %v", c, again, err)
		}
	})
}
