package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/idempotency"
)

var errLost = errors.New("answer lost")

// movement is an intent whose sends are scripted: each send answers the
// next of outcomes (an id made, or "" for a lost answer), and Find answers
// found.
type movement struct {
	sends    int
	outcomes []string
	found    []idempotency.Candidate
}

func (m *movement) intent(scope, key, lane string) idempotency.Intent {
	in := idempotency.Intent{Scope: scope, Key: key, Fingerprint: "fp", Records: "transfers", Lane: lane,
		Lost: func(err error) bool { return errors.Is(err, errLost) }}
	in.Send = func(context.Context, *idempotency.Attempt) (idempotency.Attempt, error) {
		out := m.outcomes[m.sends]
		m.sends++
		if out == "" {
			return idempotency.Attempt{}, errLost
		}
		return idempotency.Attempt{ID: out, Succeeded: true}, nil
	}
	in.Find = func(context.Context, idempotency.Attempt, time.Time, time.Time) ([]idempotency.Candidate, error) {
		return m.found, nil
	}
	return in
}

func wantUnknown(t *testing.T, err error) *idempotency.Unknown {
	t.Helper()
	var u *idempotency.Unknown
	require.ErrorAs(t, err, &u)
	return u
}

// TestRunKeptLaneProvesTheOneMatch: after a lost answer, the lane stayed
// the key's, so the one record that looks like the attempt is its own.
func TestRunKeptLaneProvesTheOneMatch(t *testing.T) {
	s := idempotency.New(openKV(t, time.Hour))
	ctx := context.Background()
	m := &movement{outcomes: []string{""}}
	in := m.intent("anna", "k", "wallet-1|100")
	_, err := s.Run(ctx, in)
	assert.True(t, wantUnknown(t, err).Keyed)

	m.found = []idempotency.Candidate{{ID: "tx-1"}}
	o, err := s.Run(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, "tx-1", o.ID)
	assert.False(t, o.Replayed, "found now: not announced yet")
	o, err = s.Run(ctx, in)
	require.NoError(t, err)
	assert.True(t, o.Replayed)
	assert.Equal(t, 1, m.sends, "never sent again")
}

// TestRunLaneTakenByAnotherDoesNotProve: another call of the same shape
// took the lane after the attempt settled, so a record that only looks
// like the attempt is not proof; the record that other call made is
// skipped, and the outcome stays unknown.
func TestRunLaneTakenByAnotherDoesNotProve(t *testing.T) {
	s := idempotency.New(openKV(t, time.Hour))
	ctx := context.Background()
	mine := &movement{outcomes: []string{""}}
	_, err := s.Run(ctx, mine.intent("anna", "k", "wallet-1|100"))
	wantUnknown(t, err)

	other := &movement{outcomes: []string{"tx-dace"}}
	_, err = s.Run(ctx, other.intent("anna-other-session", "", "wallet-1|100"))
	require.NoError(t, err)

	mine.found = []idempotency.Candidate{{ID: "tx-dace"}, {ID: "tx-x"}}
	_, err = s.Run(ctx, mine.intent("anna", "k", "wallet-1|100"))
	u := wantUnknown(t, err)
	assert.Contains(t, u.Why, "cannot prove")
	assert.Equal(t, 1, mine.sends)
}

// TestRunMarksAreSharedByEveryPrincipal: a record answered to Dace's key
// is never Anna's, although Anna's scope is another; with nothing else
// found and the attempt settled, Anna's intent is sent again.
func TestRunMarksAreSharedByEveryPrincipal(t *testing.T) {
	s := idempotency.New(openKV(t, time.Hour))
	ctx := context.Background()
	anna := &movement{outcomes: []string{"", "tx-anna"}}
	_, err := s.Run(ctx, anna.intent("anna", "k", ""))
	wantUnknown(t, err)
	dace := &movement{outcomes: []string{"tx-dace"}}
	_, err = s.Run(ctx, dace.intent("dace", "k", ""))
	require.NoError(t, err)

	anna.found = []idempotency.Candidate{{ID: "tx-dace"}}
	o, err := s.Run(ctx, anna.intent("anna", "k", ""))
	require.NoError(t, err)
	assert.Equal(t, "tx-anna", o.ID, "Dace's conversion is never Anna's")
	assert.Equal(t, 2, anna.sends)
}

// TestRunWithoutLookupStaysUnknown: an intent the upstream cannot be
// searched for is never sent twice after a lost answer.
func TestRunWithoutLookupStaysUnknown(t *testing.T) {
	s := idempotency.New(openKV(t, time.Hour))
	ctx := context.Background()
	m := &movement{outcomes: []string{"", "card-2"}}
	in := m.intent("anna", "k", "")
	in.Find = nil
	for range 3 {
		_, err := s.Run(ctx, in)
		wantUnknown(t, err)
	}
	assert.Equal(t, 1, m.sends)
}

// TestRunWithoutKeyAnswersUnknownNotRetryable: a lost answer without a key
// is unknown too, with the transport's error, and not retryable.
func TestRunWithoutKeyAnswersUnknownNotRetryable(t *testing.T) {
	s := idempotency.New(openKV(t, time.Hour))
	m := &movement{outcomes: []string{""}}
	_, err := s.Run(context.Background(), m.intent("anna", "", "wallet-1|100"))
	u := wantUnknown(t, err)
	assert.False(t, u.Keyed)
	assert.ErrorIs(t, err, errLost)
}
