package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/idempotency"
)

// openKV starts an embedded JetStream and opens the attempts bucket with ttl.
func openKV(t *testing.T, ttl time.Duration) jetstream.KeyValue {
	t.Helper()
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(e.Close)
	kv, err := e.KeyValue(ctx, idempotency.Bucket, ttl)
	require.NoError(t, err)
	return kv
}

// counter is a Func that counts its runs and answers what next says.
type counter struct {
	runs   atomic.Int32
	priors []string // prior.ID of each run, "" for nil
	mu     sync.Mutex
	next   func(n int32) (idempotency.Attempt, error)
}

func (c *counter) fn(_ context.Context, prior *idempotency.Attempt) (idempotency.Attempt, error) {
	n := c.runs.Add(1)
	c.mu.Lock()
	if prior == nil {
		c.priors = append(c.priors, "")
	} else {
		c.priors = append(c.priors, prior.ID)
	}
	c.mu.Unlock()
	return c.next(n)
}

func succeed(id string) func(int32) (idempotency.Attempt, error) {
	return func(int32) (idempotency.Attempt, error) {
		return idempotency.Attempt{ID: id, Succeeded: true, Result: json.RawMessage(`{"id":"` + id + `"}`)}, nil
	}
}

func TestSameKeySameFingerprintRunsOnceThenReplays(t *testing.T) {
	s := idempotency.New(openKV(t, time.Hour))
	ctx := context.Background()
	c := &counter{next: succeed("order-1")}

	first, err := s.Do(ctx, "order|p1", "key-1", "fp-a", c.fn)
	require.NoError(t, err)
	second, err := s.Do(ctx, "order|p1", "key-1", "fp-a", c.fn)
	require.NoError(t, err)

	assert.Equal(t, int32(1), c.runs.Load(), "the second call must not run the call again")
	assert.Equal(t, []string{""}, c.priors)
	assert.True(t, second.Succeeded)
	assert.Equal(t, "order-1", second.ID)
	assert.JSONEq(t, string(first.Result), string(second.Result))
	assert.Equal(t, "fp-a", second.Fingerprint)
}

func TestSameKeyOtherFingerprintIsRefused(t *testing.T) {
	s := idempotency.New(openKV(t, time.Hour))
	ctx := context.Background()
	c := &counter{next: succeed("order-1")}
	_, err := s.Do(ctx, "order|p1", "key-1", "fp-a", c.fn)
	require.NoError(t, err)

	_, err = s.Do(ctx, "order|p1", "key-1", "fp-b", c.fn)
	assert.ErrorIs(t, err, idempotency.ErrFingerprintMismatch)
	assert.Equal(t, int32(1), c.runs.Load())

	// Scopes keep principals apart: the same key elsewhere is a new key.
	other := &counter{next: succeed("order-2")}
	a, err := s.Do(ctx, "order|p2", "key-1", "fp-b", other.fn)
	require.NoError(t, err)
	assert.Equal(t, "order-2", a.ID)
	assert.Equal(t, int32(1), other.runs.Load())
}

func TestFailedAttemptIsResumedWithItsID(t *testing.T) {
	s := idempotency.New(openKV(t, time.Hour))
	ctx := context.Background()
	c := &counter{next: func(n int32) (idempotency.Attempt, error) {
		if n == 1 { // the upstream refused and named the order id to retry with
			return idempotency.Attempt{ID: "order-9"}, nil
		}
		return succeed("order-9")(n)
	}}

	a, err := s.Do(ctx, "order|p1", "k", "fp", c.fn)
	require.NoError(t, err)
	assert.False(t, a.Succeeded)
	a, err = s.Do(ctx, "order|p1", "k", "fp", c.fn)
	require.NoError(t, err)
	assert.True(t, a.Succeeded)
	_, err = s.Do(ctx, "order|p1", "k", "fp", c.fn)
	require.NoError(t, err)

	assert.Equal(t, int32(2), c.runs.Load())
	assert.Equal(t, []string{"", "order-9"}, c.priors, "the retry must carry the refused attempt's id")
}

func TestErrorReleasesTheKeyAsItWas(t *testing.T) {
	s := idempotency.New(openKV(t, time.Hour))
	ctx := context.Background()
	boom := errors.New("upstream unavailable")
	c := &counter{next: func(n int32) (idempotency.Attempt, error) {
		switch n {
		case 1, 3:
			return idempotency.Attempt{}, boom
		case 2:
			return idempotency.Attempt{ID: "order-5"}, nil
		}
		return succeed("order-5")(n)
	}}
	for range 4 {
		_, err := s.Do(ctx, "order|p1", "k", "fp", c.fn)
		if err != nil {
			require.ErrorIs(t, err, boom)
		}
	}
	// Run 1 failed on a new key: run 2 starts fresh. Run 3 failed while
	// resuming order-5: run 4 resumes order-5 again.
	assert.Equal(t, []string{"", "", "order-5", "order-5"}, c.priors)
}

func TestPanicReleasesTheKey(t *testing.T) {
	s := idempotency.New(openKV(t, time.Hour))
	ctx := context.Background()
	func() {
		defer func() { assert.NotNil(t, recover()) }()
		_, _ = s.Do(ctx, "order|p1", "k", "fp", func(context.Context, *idempotency.Attempt) (idempotency.Attempt, error) {
			panic("bug")
		})
	}()
	c := &counter{next: succeed("order-1")}
	_, err := s.Do(ctx, "order|p1", "k", "fp", c.fn)
	require.NoError(t, err)
	assert.Equal(t, int32(1), c.runs.Load(), "the key must be free again, not held until its lease ends")
}

// watchCounter counts watches: a call that finds the key held watches it,
// so the count says how many calls are waiting.
type watchCounter struct {
	jetstream.KeyValue
	watches atomic.Int32
}

func (w *watchCounter) Watch(ctx context.Context, keys string, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error) {
	w.watches.Add(1)
	return w.KeyValue.Watch(ctx, keys, opts...)
}

// TestConcurrentCallsWithOneKeyRunOnce holds the first call inside the
// upstream until every other call is waiting on the key, then lets it
// finish: all calls must get its attempt, and the upstream sees one call.
// Each caller has its own Store, as replicas would: only the bucket's
// compare-and-set stands between them.
func TestConcurrentCallsWithOneKeyRunOnce(t *testing.T) {
	const callers = 12
	kv := &watchCounter{KeyValue: openKV(t, time.Hour)}
	ctx := context.Background()
	release := make(chan struct{})
	var runs atomic.Int32
	fn := func(context.Context, *idempotency.Attempt) (idempotency.Attempt, error) {
		n := runs.Add(1)
		<-release
		return idempotency.Attempt{ID: fmt.Sprintf("order-%d", n), Succeeded: true}, nil
	}

	var wg sync.WaitGroup
	results := make([]idempotency.Attempt, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := idempotency.New(kv)
			results[i], errs[i] = s.Do(ctx, "order|p1", "same-key", "fp", fn)
		}()
	}
	require.Eventually(t, func() bool { return kv.watches.Load() >= callers-1 }, 30*time.Second, time.Millisecond,
		"every caller but one should be waiting on the key")
	close(release)
	wg.Wait()

	assert.Equal(t, int32(1), runs.Load(), "one upstream call for one key")
	for i := range callers {
		require.NoError(t, errs[i])
		assert.Equal(t, "order-1", results[i].ID)
		assert.True(t, results[i].Succeeded)
	}
}

// TestConcurrentCallsRace lets many callers with one key and no
// coordination race (run with -race): whatever the interleaving, one runs.
func TestConcurrentCallsRace(t *testing.T) {
	kv := openKV(t, time.Hour)
	ctx := context.Background()
	for round := range 5 {
		var runs atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				a, err := idempotency.New(kv).Do(ctx, "order|p1", fmt.Sprint("key-", round), "fp",
					func(context.Context, *idempotency.Attempt) (idempotency.Attempt, error) {
						runs.Add(1)
						return idempotency.Attempt{ID: "order", Succeeded: true}, nil
					})
				assert.NoError(t, err)
				assert.True(t, a.Succeeded)
			}()
		}
		close(start)
		wg.Wait()
		assert.Equal(t, int32(1), runs.Load(), "round %d", round)
	}
}

func TestWaiterGivesUpWhileTheKeyIsHeld(t *testing.T) {
	kv := openKV(t, time.Hour)
	ctx := context.Background()
	holding := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := idempotency.New(kv).Do(ctx, "order|p1", "k", "fp", func(context.Context, *idempotency.Attempt) (idempotency.Attempt, error) {
			close(holding)
			<-release
			return idempotency.Attempt{ID: "order-1", Succeeded: true}, nil
		})
		done <- err
	}()
	<-holding

	impatient := idempotency.New(kv, idempotency.WithMaxWait(10*time.Millisecond))
	_, err := impatient.Do(ctx, "order|p1", "k", "fp", func(context.Context, *idempotency.Attempt) (idempotency.Attempt, error) {
		t.Error("a second call ran while the first held the key")
		return idempotency.Attempt{}, nil
	})
	assert.ErrorIs(t, err, idempotency.ErrInProgress)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = idempotency.New(kv).Do(cctx, "order|p1", "k", "fp", nil)
	assert.ErrorIs(t, err, context.Canceled)

	close(release)
	require.NoError(t, <-done)
}

// TestExpiredLeaseIsTakenOver: a claim whose holder died (it never wrote an
// outcome) frees the key when its lease ends, on any replica's clock.
func TestExpiredLeaseIsTakenOver(t *testing.T) {
	kv := openKV(t, time.Hour)
	ctx := context.Background()
	var now atomic.Int64
	now.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }

	holding := make(chan struct{})
	dead := make(chan struct{})
	t.Cleanup(func() { close(dead) })
	go func() {
		// A holder that never comes back, as if its replica died mid-call.
		_, _ = idempotency.New(kv, idempotency.WithClock(clock), idempotency.WithLease(time.Minute)).
			Do(ctx, "order|p1", "k", "fp", func(context.Context, *idempotency.Attempt) (idempotency.Attempt, error) {
				close(holding)
				<-dead
				return idempotency.Attempt{}, errors.New("gone")
			})
	}()
	<-holding

	other := idempotency.New(kv, idempotency.WithClock(clock), idempotency.WithMaxWait(10*time.Millisecond))
	c := &counter{next: succeed("order-2")}
	_, err := other.Do(ctx, "order|p1", "k", "fp", c.fn)
	require.ErrorIs(t, err, idempotency.ErrInProgress, "within the lease the key is held")

	now.Add(int64(2 * time.Minute))
	a, err := other.Do(ctx, "order|p1", "k", "fp", c.fn)
	require.NoError(t, err)
	assert.Equal(t, "order-2", a.ID)
	assert.Equal(t, int32(1), c.runs.Load())
}

// TestAttemptsExpireWithTheBucketTTL: after the bucket's TTL a key is new
// again, so another request may use it.
func TestAttemptsExpireWithTheBucketTTL(t *testing.T) {
	s := idempotency.New(openKV(t, time.Second))
	ctx := context.Background()
	c := &counter{next: succeed("order-1")}
	_, err := s.Do(ctx, "order|p1", "k", "fp-a", c.fn)
	require.NoError(t, err)
	_, err = s.Do(ctx, "order|p1", "k", "fp-b", c.fn)
	require.ErrorIs(t, err, idempotency.ErrFingerprintMismatch, "before expiry the key is taken")

	other := &counter{next: succeed("order-2")}
	require.Eventually(t, func() bool {
		a, err := s.Do(ctx, "order|p1", "k", "fp-b", other.fn)
		return err == nil && a.ID == "order-2"
	}, 30*time.Second, 50*time.Millisecond)
	assert.Equal(t, int32(1), other.runs.Load())
}

func TestKeyIsAHashOfScopeAndKey(t *testing.T) {
	a := idempotency.Key("order|p1", "k")
	assert.Len(t, a, 64)
	assert.NotEqual(t, a, idempotency.Key("order|p2", "k"))
	assert.NotEqual(t, a, idempotency.Key("order|p1k", ""), "scope and key must not run together")
	assert.NotContains(t, a, "p1")
}
