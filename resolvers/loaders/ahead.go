package loaders

import (
	"context"
	"sync"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/fingraph/fingraph/upstream/banking"
)

// ahead is a per-key read memoised for the operation: behind a
// per-corporation loader whose key Loader.Begin may read at once (the
// current corporation's), so that a batch the loader opens for the same key
// at the same moment waits for that read instead of making a second call,
// and behind the reads of persons past the first page of the listing
// (personsPage.beyond), so that two batches read one once. Like the
// loader's own cache it lives for one operation; clearing a key of the
// loader would not clear its read here (nothing clears these loaders' keys).
type ahead[V any] struct {
	get   func(context.Context, string) (V, error)
	mu    sync.Mutex
	reads map[string]*memo[V]
}

func newAhead[V any](get func(context.Context, string) (V, error)) *ahead[V] {
	return &ahead[V]{get: get}
}

// read reads key once per operation, however many callers ask.
func (a *ahead[V]) read(ctx context.Context, key string) (V, error) {
	a.mu.Lock()
	m := a.reads[key]
	if m == nil {
		if a.reads == nil {
			a.reads = map[string]*memo[V]{}
		}
		m = &memo[V]{}
		a.reads[key] = m
	}
	a.mu.Unlock()
	return m.do(func() (V, error) { return a.get(ctx, key) })
}

// The current corporation's reads, begun before its resolvers ask: the
// session knows the corporation's id before the upstream has answered for
// it (resolvers.startCorporationReads). Each runs its loader's batch for
// the id at once (Loader.Begin) and returns the thunk of its answer, the
// one the loader's later loads of the id get.

// StartSettings begins reading corporation id's settings
// (CorporationSettings).
func (ls *Loaders) StartSettings(ctx context.Context, id string) dataloader.Thunk[*banking.CorporationSettings] {
	return ls.CorporationSettings.Begin(ctx, ls.workers, id)
}

// StartWallets begins reading corporation id's wallet listing
// (CorporationWallets).
func (ls *Loaders) StartWallets(ctx context.Context, id string) dataloader.Thunk[[]*banking.Wallet] {
	return ls.CorporationWallets.Begin(ctx, ls.workers, id)
}

// StartPersons begins reading corporation id's persons
// (CorporationPersons): the person listing's first page, which the Person
// loader shares, then its other pages.
func (ls *Loaders) StartPersons(ctx context.Context, id string) dataloader.Thunk[[]*banking.Person] {
	return ls.CorporationPersons.Begin(ctx, ls.workers, id)
}
