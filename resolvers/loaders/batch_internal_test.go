package loaders

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graph-gophers/dataloader/v7"
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

func TestPerKeyFanOutIsBoundedAndErrorsArePerKey(t *testing.T) {
	const n = 3*fanOut + 1
	f := newFakeRoute("k7")
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	f.releaseWhenSaturated(n)
	out := perKey(f.get)(context.Background(), keys)

	require.Len(t, out, n)
	assert.Equal(t, fanOut, f.maxFlight, "calls in flight at once")
	for i, k := range keys {
		assert.Equal(t, 1, f.calls[k], "calls for %s", k)
		if k == "k7" {
			assert.ErrorIs(t, out[i].Error, errNoSuchKey, "the missing key fails")
			continue
		}
		assert.NoError(t, out[i].Error, "key %s must not fail with another key's error", k)
		assert.Equal(t, "value of "+k, out[i].Data)
	}
}

func TestPerCorporationLoaderDedupesAndBoundsFanOut(t *testing.T) {
	f := newFakeRoute("c3")
	list := func(ctx context.Context, id string) ([]string, error) {
		v, err := f.get(ctx, id)
		if err != nil {
			return nil, err
		}
		return []string{v}, nil
	}
	// A long window: the test asserts how one batch is served.
	l := new(Loader[string, []string])
	l.init(perCorporation(list), 50*time.Millisecond)
	ctx := context.Background()
	var thunks []dataloader.Thunk[[]string]
	distinct := 2*fanOut + 3
	for i := range 3 * distinct { // every corporation asked for three times
		thunks = append(thunks, l.Load(ctx, "c"+strconv.Itoa(i%distinct)))
	}
	f.releaseWhenSaturated(distinct)
	for i, th := range thunks {
		v, err := th()
		if i%distinct == 3 {
			assert.ErrorIs(t, err, errNoSuchKey)
			continue
		}
		assert.NoError(t, err)
		assert.Len(t, v, 1)
	}
	assert.Len(t, f.calls, distinct, "one call per distinct corporation")
	for k, c := range f.calls {
		assert.Equal(t, 1, c, "calls for %s", k)
	}
	assert.Equal(t, fanOut, f.maxFlight, "calls in flight at once")
}

func TestEachRunsEveryIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, fanOut, 5 * fanOut} {
		var ran atomic.Int64
		seen := make([]int32, n)
		each(n, func(i int) { atomic.AddInt32(&seen[i], 1); ran.Add(1) })
		assert.EqualValues(t, n, ran.Load())
		for i, s := range seen {
			assert.EqualValues(t, 1, s, "index %d of %d", i, n)
		}
	}
}

// The card transactions loader: a card's page asked for on several paths
// costs one call, two pages of one card are two calls, the calls are
// bounded by fanOut, and a card that fails fails alone.
func TestCardTransactionsLoaderDedupesPagesAndBoundsFanOut(t *testing.T) {
	f := newFakeRoute("card3|0")
	var seen sync.Map // the options each call carried, by call key
	list := func(ctx context.Context, cardID string, o *banking.ListOptions) (*banking.CardTransactionList, error) {
		key := cardID + "|" + strconv.Itoa(o.Offset)
		seen.Store(key, *o)
		v, err := f.get(ctx, key)
		if err != nil {
			return nil, err
		}
		return &banking.CardTransactionList{List: []*banking.CardTransaction{{ID: v}}}, nil
	}
	// A long window: the test asserts how one batch is served.
	l := dataloader.NewBatchedLoader(cardTransactionsBatch(list),
		dataloader.WithWait[CardTransactionsKey, *banking.CardTransactionList](50*time.Millisecond))
	ctx := context.Background()
	const cards = 2*fanOut + 3
	first := banking.ListOptions{Limit: 3, SortBy: "createdAt", SortType: banking.SortDesc}
	second := first
	second.Offset = 3
	type ask struct {
		key   CardTransactionsKey
		thunk dataloader.Thunk[*banking.CardTransactionList]
	}
	var asks []ask
	for i := range 3 * cards { // every card's first page three times
		k := CardTransactionsKey{CardID: "card" + strconv.Itoa(i%cards), Options: first}
		asks = append(asks, ask{k, l.Load(ctx, k)})
	}
	k := CardTransactionsKey{CardID: "card0", Options: second} // and one second page
	asks = append(asks, ask{k, l.Load(ctx, k)})
	f.releaseWhenSaturated(cards + 1)

	for _, a := range asks {
		page, err := a.thunk()
		want := a.key.CardID + "|" + strconv.Itoa(a.key.Options.Offset)
		if want == "card3|0" {
			assert.ErrorIs(t, err, errNoSuchKey)
			continue
		}
		require.NoError(t, err, "%s must not fail with another card's error", want)
		require.Len(t, page.List, 1)
		assert.Equal(t, "value of "+want, page.List[0].ID)
		got, _ := seen.Load(want)
		assert.Equal(t, a.key.Options, got, "the page's arguments reach the upstream")
	}
	assert.Len(t, f.calls, cards+1, "one call per distinct card and page")
	for k, c := range f.calls {
		assert.Equal(t, 1, c, "calls for %s", k)
	}
	assert.Equal(t, fanOut, f.maxFlight, "calls in flight at once")
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
