package loaders

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
)

// fakeRoute is a get-by-key upstream route that counts its calls and the
// most it ever had in flight at once. Each call waits until released, so
// every call the batch starts concurrently is in flight together: the
// maximum is the batch's real bound, not an accident of scheduling.
type fakeRoute struct {
	mu        sync.Mutex
	inFlight  int
	maxFlight int
	calls     map[string]int
	release   chan struct{}
	missing   string
}

func newFakeRoute(missing string) *fakeRoute {
	return &fakeRoute{calls: map[string]int{}, release: make(chan struct{}), missing: missing}
}

var errNoSuchKey = errors.New("no such key")

func (f *fakeRoute) get(_ context.Context, key string) (string, error) {
	f.mu.Lock()
	f.inFlight++
	f.maxFlight = max(f.maxFlight, f.inFlight)
	f.calls[key]++
	f.mu.Unlock()
	<-f.release
	f.mu.Lock()
	f.inFlight--
	f.mu.Unlock()
	if key == f.missing {
		return "", errNoSuchKey
	}
	return "value of " + key, nil
}

// releaseWhenSaturated lets the calls go once fanOut of them are in flight
// (or all n when fewer), then the rest one by one as they arrive.
func (f *fakeRoute) releaseWhenSaturated(n int) {
	go func() {
		for {
			f.mu.Lock()
			ready := f.inFlight >= min(n, fanOut)
			f.mu.Unlock()
			if ready {
				break
			}
			time.Sleep(time.Millisecond)
		}
		close(f.release)
	}()
}

// read returns a Read over fetch with no workers (a goroutine per start).
func read[K comparable, V any](fetch func(context.Context, K) (V, error)) *Read[K, V] {
	r := new(Read[K, V])
	r.init(fetch, nil)
	return r
}

// Keys started together are read side by side, at most fanOut at a time,
// each with its own answer or error.
func TestReadBoundsFanOutAndErrorsArePerKey(t *testing.T) {
	const n = 3*fanOut + 1
	f := newFakeRoute("k7")
	r := read(f.get)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
		r.Start(context.Background(), keys[i])
	}
	f.releaseWhenSaturated(n)

	for _, k := range keys {
		v, err := r.Get(context.Background(), k)
		if k == "k7" {
			assert.ErrorIs(t, err, errNoSuchKey, "the missing key fails")
			continue
		}
		assert.NoError(t, err, "key %s must not fail with another key's error", k)
		assert.Equal(t, "value of "+k, v)
	}
	assert.Equal(t, fanOut, f.maxFlight, "calls in flight at once")
	for _, k := range keys {
		assert.Equal(t, 1, f.calls[k], "calls for %s", k)
	}
}

// Resolvers that ask for a key at the same moment share its one read, and
// resolvers asking for many keys at once have at most fanOut in flight.
func TestReadDedupesKeysAndBoundsFanOut(t *testing.T) {
	f := newFakeRoute("c3")
	r := read(func(ctx context.Context, id string) ([]string, error) {
		v, err := f.get(ctx, id)
		if err != nil {
			return nil, err
		}
		return []string{v}, nil
	})
	distinct := 2*fanOut + 3
	var wg sync.WaitGroup
	for i := range 3 * distinct { // every corporation asked for three times, by three resolvers
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := r.Get(context.Background(), "c"+strconv.Itoa(i%distinct))
			if i%distinct == 3 {
				assert.ErrorIs(t, err, errNoSuchKey)
				return
			}
			assert.NoError(t, err)
			assert.Len(t, v, 1)
		}()
	}
	f.releaseWhenSaturated(distinct)
	wg.Wait()
	assert.Len(t, f.calls, distinct, "one call per distinct corporation")
	for k, c := range f.calls {
		assert.Equal(t, 1, c, "calls for %s", k)
	}
	assert.Equal(t, fanOut, f.maxFlight, "calls in flight at once")
}

// The card transactions read: a card's page asked for on several paths
// costs one call, two pages of one card are two calls, the calls are
// bounded by fanOut, and a card that fails fails alone.
func TestCardTransactionsReadDedupesPagesAndBoundsFanOut(t *testing.T) {
	f := newFakeRoute("card3|0")
	var seen sync.Map // the options each call carried, by call key
	r := read(cardTransactions(func(ctx context.Context, cardID string, o *banking.ListOptions) (*banking.CardTransactionList, error) {
		key := cardID + "|" + strconv.Itoa(o.Offset)
		seen.Store(key, *o)
		v, err := f.get(ctx, key)
		if err != nil {
			return nil, err
		}
		return &banking.CardTransactionList{List: []*banking.CardTransaction{{ID: v}}}, nil
	}))
	ctx := context.Background()
	const cards = 2*fanOut + 3
	first := banking.ListOptions{Limit: 3, SortBy: "createdAt", SortType: banking.SortDesc}
	second := first
	second.Offset = 3
	var keys []CardTransactionsKey
	for i := range 3 * cards { // every card's first page three times
		keys = append(keys, CardTransactionsKey{CardID: "card" + strconv.Itoa(i%cards), Options: first})
	}
	keys = append(keys, CardTransactionsKey{CardID: "card0", Options: second}) // and one second page
	for _, k := range keys {
		r.Start(ctx, k)
	}
	f.releaseWhenSaturated(cards + 1)

	for _, k := range keys {
		page, err := r.Get(ctx, k)
		want := k.CardID + "|" + strconv.Itoa(k.Options.Offset)
		if want == "card3|0" {
			assert.ErrorIs(t, err, errNoSuchKey)
			continue
		}
		require.NoError(t, err, "%s must not fail with another card's error", want)
		require.Len(t, page.List, 1)
		assert.Equal(t, "value of "+want, page.List[0].ID)
		got, _ := seen.Load(want)
		assert.Equal(t, k.Options, got, "the page's arguments reach the upstream")
	}
	assert.Len(t, f.calls, cards+1, "one call per distinct card and page")
	for k, c := range f.calls {
		assert.Equal(t, 1, c, "calls for %s", k)
	}
	assert.Equal(t, fanOut, f.maxFlight, "calls in flight at once")
}

// Start reads the key at once, without waiting for anyone to Get it; the
// Gets of the key that follow wait for that one read, and another key is
// read on its own.
func TestStartReadsAtOnceAndGetsShareTheRead(t *testing.T) {
	var calls atomic.Int32
	entered := make(chan string, 2)
	release := make(chan struct{})
	r := read(func(_ context.Context, id string) (string, error) {
		calls.Add(1)
		entered <- id
		<-release
		return "v-" + id, nil
	})
	r.Start(t.Context(), "c1")
	select {
	case id := <-entered:
		require.Equal(t, "c1", id)
	case <-time.After(10 * time.Second): // deadlock guard only
		t.Fatal("the started read did not begin")
	}
	r.Start(t.Context(), "c1")
	var wg sync.WaitGroup
	for _, key := range []string{"c1", "c1", "c2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := r.Get(t.Context(), key)
			assert.NoError(t, err)
			assert.Equal(t, "v-"+key, v)
		}()
	}
	<-entered // c2's read
	close(release)
	wg.Wait()
	assert.EqualValues(t, 2, calls.Load(), "one upstream call per key")
}

// Prime answers a key without a read, and its value is the answer from
// then on (a second sign-in in one operation answers with its own viewer).
func TestPrimeAnswersWithoutARead(t *testing.T) {
	var calls atomic.Int32
	r := read(func(_ context.Context, id string) (string, error) { calls.Add(1); return "read-" + id, nil })
	r.Prime(t.Context(), "me", "primed")
	v, err := r.Get(t.Context(), "me")
	require.NoError(t, err)
	assert.Equal(t, "primed", v)
	assert.Zero(t, calls.Load())
	v, _ = r.Get(t.Context(), "other")
	assert.Equal(t, "read-other", v)
	r.Prime(t.Context(), "other", "signed in again")
	v, _ = r.Get(t.Context(), "other")
	assert.Equal(t, "signed in again", v)
	assert.EqualValues(t, 1, calls.Load())
}

// A read that panics (on a worker that recovers, or in place) answers its
// key with an error, never a zero value that looks like an answer, and its
// waiters do not wait forever.
func TestAReadThatPanicsAnswersAnError(t *testing.T) {
	w, err := NewWorkers(slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	r := new(Read[string, string])
	r.init(func(context.Context, string) (string, error) { panic("upstream data") }, w)
	r.Start(t.Context(), "c1")
	_, err = r.Get(t.Context(), "c1")
	assert.ErrorIs(t, err, errReadPanicked)

	assert.Panics(t, func() { _, _ = r.Get(t.Context(), "c2") }, "in place, the panic is the caller's")
	_, err = r.Get(t.Context(), "c2")
	assert.ErrorIs(t, err, errReadPanicked)
}

func TestByCustomerGroupsInListingOrderWithoutSharing(t *testing.T) {
	order := func(id, customer string) payments.Order {
		return payments.Order{ID: id, Customer: payments.OrderCustomer{ID: customer}}
	}
	got := byCustomer([]payments.Order{order("1", "a"), order("2", "b"), order("3", "a"), order("4", ""), order("5", "b"), order("6", "a")})
	ids := func(list []payments.Order) (out []string) {
		for _, o := range list {
			out = append(out, o.ID)
		}
		return out
	}
	assert.Equal(t, []string{"1", "3", "6"}, ids(got["a"]))
	assert.Equal(t, []string{"2", "5"}, ids(got["b"]))
	assert.Len(t, got, 2, "an order without a customer id is nobody's")
	// The groups share one block; appending to one must not write into another.
	_ = append(got["a"], order("7", "a"))
	_ = append(got["b"], order("8", "b"))
	assert.Equal(t, []string{"1", "3", "6"}, ids(got["a"]))
	assert.Equal(t, []string{"2", "5"}, ids(got["b"]))
}
