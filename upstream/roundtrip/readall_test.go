package roundtrip

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// readAll reads an announced length in one allocation, and still behaves as
// io.ReadAll when the body is shorter or longer than announced, or has none.
func TestReadAllFollowsTheBodyNotTheAnnouncement(t *testing.T) {
	for _, tc := range []struct {
		body    string
		length  int64
		wantErr error
	}{
		{`{"a":1}`, 7, nil},
		{`{"a":1}`, -1, nil},
		{``, 0, nil},
		{`{"a":1}`, 3, nil},                    // longer than announced: read on
		{`{"a"`, 7, io.ErrUnexpectedEOF},       // shorter: what came, and the error
		{strings.Repeat("x", 5000), 5000, nil}, // more than one read
		{strings.Repeat("z", 70000), -1, nil},  // unannounced, many reads
		{``, -1, nil},
	} {
		got, err := readAll(strings.NewReader(tc.body), tc.length)
		want := tc.body
		if string(got) != want || !errors.Is(err, tc.wantErr) {
			t.Errorf("readAll(%d bytes, length %d) = %d bytes, %v; want %d bytes, %v", len(tc.body), tc.length, len(got), err, len(want), tc.wantErr)
		}
	}
	body := strings.Repeat("y", 3000)
	r := strings.NewReader(body)
	allocs := testing.AllocsPerRun(100, func() { r.Reset(body); _, _ = readAll(r, int64(len(body))) })
	if allocs > 1 {
		t.Errorf("readAll of an announced length: %.0f allocations, want 1", allocs)
	}
}

// Unannounced (chunked), an answer is read through a pooled buffer and
// kept as one copy of its exact size: no growing copies (the other
// allocation is the reader's size limit).
func TestReadAllOfAnUnannouncedLengthKeepsOneCopy(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled buffers at random")
	}
	body := strings.Repeat("w", 11000)
	r := strings.NewReader(body)
	allocs := testing.AllocsPerRun(100, func() { r.Reset(body); _, _ = readAll(r, -1) })
	if allocs > 2 {
		t.Errorf("readAll of an unannounced length: %.0f allocations, want 2", allocs)
	}
}
