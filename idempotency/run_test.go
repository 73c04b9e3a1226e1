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
// sent in the lane after the attempt settled, and its answer was lost too,
// so a record that only looks like the attempt is not proof: the outcome
// stays unknown. Had the other call's outcome been known, its record
// would be marked its own and the lane would still prove.
func TestRunLaneTakenByAnotherDoesNotProve(t *testing.T) {
	s := idempotency.New(openKV(t, time.Hour))
	ctx := context.Background()
	mine := &movement{outcomes: []string{""}}
	_, err := s.Run(ctx, mine.intent("anna", "k", "wallet-1|100"))
	wantUnknown(t, err)

	other := &movement{outcomes: []string{""}}
	_, err = s.Run(ctx, other.intent("anna-other-session", "", "wallet-1|100"))
	wantUnknown(t, err)

	mine.found = []idempotency.Candidate{{ID: "tx-x"}}
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

// fakeClock is a clock tests move by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time         { return c.t }
func (c *fakeClock) add(d time.Duration)    { c.t = c.t.Add(d) }
func newFakeClock() *fakeClock              { return &fakeClock{t: time.Now()} }
func dated(id string, at time.Time) datedTx { return datedTx{id: id, at: at} }

// datedTx is a record of a fake ledger with when it was made.
type datedTx struct {
	id string
	at time.Time
}

// ledgerFind is a Find over a fake ledger that honours the window Run asks
// for, as the real lookups do.
func ledgerFind(ledger *[]datedTx) func(context.Context, idempotency.Attempt, time.Time, time.Time) ([]idempotency.Candidate, error) {
	return func(_ context.Context, _ idempotency.Attempt, from, to time.Time) ([]idempotency.Candidate, error) {
		var out []idempotency.Candidate
		for _, tx := range *ledger {
			if !tx.at.Before(from) && !tx.at.After(to) {
				out = append(out, idempotency.Candidate{ID: tx.id})
			}
		}
		return out, nil
	}
}

// TestRunNeverAnswersARecordOlderThanItsAttempt: Dace's conversion whose
// answer was lost before Anna's attempt of the same shape began (its hold
// over, Dace not back yet) is never answered to Anna's key: Anna's lookup
// reads only records made since her attempt began, finds none, and sends
// hers once it has settled.
func TestRunNeverAnswersARecordOlderThanItsAttempt(t *testing.T) {
	clock := newFakeClock()
	s := idempotency.New(openKV(t, time.Hour), idempotency.WithClock(clock.now))
	ctx := context.Background()
	var ledger []datedTx
	lane := "wallet-1|100"

	dace := &movement{outcomes: []string{""}}
	in := dace.intent("dace", "kd", lane)
	send := in.Send
	in.Send = func(ctx context.Context, p *idempotency.Attempt) (idempotency.Attempt, error) {
		ledger = append(ledger, dated("tx-dace", clock.now())) // the bank converted, the answer was lost
		return send(ctx, p)
	}
	_, err := s.Run(ctx, in)
	wantUnknown(t, err)

	clock.add(2*idempotency.LookupMargin + time.Millisecond) // Dace's hold is over
	anna := &movement{outcomes: []string{"", "tx-anna"}}     // dropped before the bank, then converted
	ain := anna.intent("anna", "ka", lane)
	ain.Find = ledgerFind(&ledger)
	_, err = s.Run(ctx, ain)
	wantUnknown(t, err)

	o, err := s.Run(ctx, ain)
	require.NoError(t, err)
	assert.Equal(t, "tx-anna", o.ID, "Dace's older conversion is never Anna's")
	assert.Equal(t, 2, anna.sends)

	// Anna's sends are settled (the dropped one proven absent, the other
	// answered and marked hers): Dace's retry proves her own conversion.
	ledger = append(ledger, dated("tx-anna", clock.now()))
	in.Find = ledgerFind(&ledger)
	o, err = s.Run(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, "tx-dace", o.ID)
	assert.Equal(t, 1, dace.sends)
}

// TestRunALaneBrokenOnceNeverProvesAgain: another call took the lane after
// Anna's lost attempt, so her lookups never count on the lane again, even
// after one of them held it once more: the other's record (made after
// Anna's attempt, unmarked because its answer was lost too) never answers
// her key.
func TestRunALaneBrokenOnceNeverProvesAgain(t *testing.T) {
	clock := newFakeClock()
	s := idempotency.New(openKV(t, time.Hour), idempotency.WithClock(clock.now))
	ctx := context.Background()
	lane := "wallet-1|100"
	anna := &movement{outcomes: []string{""}}
	_, err := s.Run(ctx, anna.intent("anna", "k", lane))
	wantUnknown(t, err)

	clock.add(2*idempotency.LookupMargin + time.Millisecond)
	other := &movement{outcomes: []string{""}}
	_, err = s.Run(ctx, other.intent("dace", "", lane))
	wantUnknown(t, err)

	clock.add(2*idempotency.LookupMargin + time.Millisecond)
	anna.found = []idempotency.Candidate{{ID: "tx-dace"}}
	for i := range 3 {
		_, err = s.Run(ctx, anna.intent("anna", "k", lane))
		u := wantUnknown(t, err)
		assert.Contains(t, u.Why, "cannot prove", "retry %d", i)
		assert.False(t, u.Final, "the look-alike may yet be claimed by its own key")
	}
	assert.Equal(t, 1, anna.sends)
}

// TestRunBusyLaneSaysWhenItFrees: a call of the same shape as an unknown
// outcome gets LaneBusy with the end of the hold: the attempt's end plus
// the settle window and twice the lookup margin.
func TestRunBusyLaneSaysWhenItFrees(t *testing.T) {
	clock := newFakeClock()
	kv := openKV(t, time.Hour)
	s := idempotency.New(kv, idempotency.WithClock(clock.now))
	ctx := context.Background()
	m := &movement{outcomes: []string{""}}
	in := m.intent("anna", "k", "wallet-1|100")
	in.Settle = 30 * time.Second
	_, err := s.Run(ctx, in)
	wantUnknown(t, err)

	impatient := idempotency.New(kv, idempotency.WithClock(clock.now), idempotency.WithMaxWait(10*time.Millisecond))
	other := &movement{outcomes: []string{"tx-2"}}
	_, err = impatient.Run(ctx, other.intent("dace", "k2", "wallet-1|100"))
	var busy *idempotency.LaneBusy
	require.ErrorAs(t, err, &busy)
	assert.ErrorIs(t, err, idempotency.ErrLaneBusy)
	assert.Equal(t, clock.now().Add(30*time.Second+2*idempotency.LookupMargin).UnixMilli(), busy.Until.UnixMilli())
	assert.Equal(t, 0, other.sends)

	// With the store's own wait (20 s) shorter than the hold (34 s), the
	// answer comes at once: a call that waited would see its context end
	// first, and answer that instead.
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = s.Run(wctx, other.intent("dace", "k3", "wallet-1|100"))
	require.ErrorAs(t, err, &busy, "the call waited for a hold that outlasts its wait")
	assert.Equal(t, 0, other.sends)
}

// TestRunUnknownSaysWhetherARetryCanTell: without a lookup, or without a
// key, no retry can ever tell (Final); a lookup that could not read yet
// can.
func TestRunUnknownSaysWhetherARetryCanTell(t *testing.T) {
	s := idempotency.New(openKV(t, time.Hour))
	ctx := context.Background()
	m := &movement{outcomes: []string{""}}
	in := m.intent("anna", "k1", "")
	in.Find = nil
	_, err := s.Run(ctx, in)
	assert.True(t, wantUnknown(t, err).Final, "first answer of an intent without lookup")
	_, err = s.Run(ctx, in)
	assert.True(t, wantUnknown(t, err).Final, "retry of an intent without lookup")

	m2 := &movement{outcomes: []string{""}}
	in2 := m2.intent("anna", "k2", "")
	in2.Settle = time.Hour
	_, err = s.Run(ctx, in2)
	assert.False(t, wantUnknown(t, err).Final)
	_, err = s.Run(ctx, in2)
	u := wantUnknown(t, err)
	assert.False(t, u.Final, "not there yet, and it may still be under way: a retry tells")

	in2.Find = func(context.Context, idempotency.Attempt, time.Time, time.Time) ([]idempotency.Candidate, error) {
		return nil, idempotency.ErrUnprovable
	}
	_, err = s.Run(ctx, in2)
	assert.True(t, wantUnknown(t, err).Final, "a change that cannot be attributed stays so")

	m3 := &movement{outcomes: []string{""}}
	_, err = s.Run(ctx, m3.intent("anna", "", ""))
	assert.True(t, wantUnknown(t, err).Final, "without a key")
}

// TestRunALookDoesNotBreakAnothersLane: Anna's dropped attempt, then
// Dace's of the same shape whose answer is lost after the bank moved.
// Anna's retry only looks (Dace's record is not provably hers), and so
// leaves Dace's lane as it was: Dace's retry proves her record, and Anna's
// next retry, with that record now Dace's, sends hers.
func TestRunALookDoesNotBreakAnothersLane(t *testing.T) {
	clock := newFakeClock()
	s := idempotency.New(openKV(t, time.Hour), idempotency.WithClock(clock.now))
	ctx := context.Background()
	lane := "wallet-1|100"
	anna := &movement{outcomes: []string{"", "tx-anna"}}
	_, err := s.Run(ctx, anna.intent("anna", "ka", lane))
	wantUnknown(t, err)

	clock.add(2*idempotency.LookupMargin + time.Millisecond)
	dace := &movement{outcomes: []string{""}}
	_, err = s.Run(ctx, dace.intent("dace", "kd", lane))
	wantUnknown(t, err)
	anna.found = []idempotency.Candidate{{ID: "tx-dace"}}
	dace.found = anna.found

	clock.add(2*idempotency.LookupMargin + time.Millisecond)
	_, err = s.Run(ctx, anna.intent("anna", "ka", lane))
	assert.Contains(t, wantUnknown(t, err).Why, "cannot prove", "Dace's record is never Anna's")

	o, err := s.Run(ctx, dace.intent("dace", "kd", lane))
	require.NoError(t, err)
	assert.Equal(t, "tx-dace", o.ID, "Anna's look left Dace's lane kept")

	o, err = s.Run(ctx, anna.intent("anna", "ka", lane))
	require.NoError(t, err)
	assert.Equal(t, "tx-anna", o.ID)
	assert.Equal(t, 2, anna.sends)
	assert.Equal(t, 1, dace.sends)
}
