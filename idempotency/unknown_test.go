package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/idempotency"
)

// TestUnknownOutcomeIsResumedAsUnknown: an attempt whose answer was lost is
// remembered with what identifies it, and every later call with the key
// gets it as an unknown prior, also after a call that could not tell and
// returned an error, until one finds the result.
func TestUnknownOutcomeIsResumedAsUnknown(t *testing.T) {
	s := idempotency.New(openKV(t, time.Hour))
	ctx := context.Background()
	sent := json.RawMessage(`{"amount":2000}`)
	var priors []*idempotency.Attempt
	fn := func(next func() (idempotency.Attempt, error)) idempotency.Func {
		return func(_ context.Context, prior *idempotency.Attempt) (idempotency.Attempt, error) {
			priors = append(priors, prior)
			return next()
		}
	}
	a, err := s.Do(ctx, "conversion|p1", "k", "fp", fn(func() (idempotency.Attempt, error) {
		return idempotency.Attempt{Unknown: true, Sent: sent, SentAt: 1000, EndedAt: 2000}, nil
	}))
	require.NoError(t, err)
	assert.True(t, a.Unknown)

	cannotTell := errors.New("cannot tell")
	_, err = s.Do(ctx, "conversion|p1", "k", "fp", fn(func() (idempotency.Attempt, error) { return idempotency.Attempt{}, cannotTell }))
	require.ErrorIs(t, err, cannotTell)
	a, err = s.Do(ctx, "conversion|p1", "k", "fp", fn(func() (idempotency.Attempt, error) { return succeed("tx-1")(0) }))
	require.NoError(t, err)
	assert.Equal(t, "tx-1", a.ID)
	a, err = s.Do(ctx, "conversion|p1", "k", "fp", fn(func() (idempotency.Attempt, error) { return succeed("tx-2")(0) }))
	require.NoError(t, err)
	assert.Equal(t, "tx-1", a.ID, "a found result is replayed")

	require.Len(t, priors, 3)
	assert.Nil(t, priors[0])
	for _, p := range priors[1:] {
		require.NotNil(t, p, "a retry after a lost answer must not run as a first try")
		assert.True(t, p.Unknown)
		assert.JSONEq(t, string(sent), string(p.Sent))
		assert.Equal(t, int64(1000), p.SentAt)
	}
}

// TestDeadHolderIsResumedAsUnknown: a holder that died mid-call may have
// sent its call, so the call that takes the key over gets an unknown prior.
func TestDeadHolderIsResumedAsUnknown(t *testing.T) {
	kv := openKV(t, time.Hour)
	ctx := context.Background()
	var now atomic.Int64
	now.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	holding, dead := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(dead) })
	go func() {
		_, _ = idempotency.New(kv, idempotency.WithClock(clock), idempotency.WithLease(time.Minute)).
			Do(ctx, "order|p1", "k", "fp", func(context.Context, *idempotency.Attempt) (idempotency.Attempt, error) {
				close(holding)
				<-dead
				return idempotency.Attempt{}, errors.New("gone")
			})
	}()
	<-holding
	now.Add(int64(2 * time.Minute))
	var prior *idempotency.Attempt
	_, err := idempotency.New(kv, idempotency.WithClock(clock)).Do(ctx, "order|p1", "k", "fp",
		func(_ context.Context, p *idempotency.Attempt) (idempotency.Attempt, error) {
			prior = p
			return idempotency.Attempt{ID: "o-1", Succeeded: true}, nil
		})
	require.NoError(t, err)
	require.NotNil(t, prior)
	assert.True(t, prior.Unknown)
	assert.Equal(t, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), prior.SentAt)
}
