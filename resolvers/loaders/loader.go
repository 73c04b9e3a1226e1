package loaders

import (
	"context"
	"sync"
	"time"

	"github.com/graph-gophers/dataloader/v7"
)

// Loader is a dataloader made on its first use. An operation uses few of
// the loaders it is given (the README query two of fourteen), and making
// every one of them up front cost ~70 allocations per operation. It keeps
// its batch function, which batchNow runs for gqlgen's batch resolvers.
// Its methods are dataloader's. A Loader lives inside Loaders and is never
// copied.
type Loader[K comparable, V any] struct {
	once  sync.Once
	l     *dataloader.Loader[K, V]
	cache *dataloader.InMemoryCache[K, V] // the loader's, for Begin
	batch dataloader.BatchFunc[K, V]
	wait  time.Duration
}

// init sets the batch function and window the loader will be made with.
func (z *Loader[K, V]) init(batch dataloader.BatchFunc[K, V], wait time.Duration) {
	z.batch, z.wait = batch, wait
}

func (z *Loader[K, V]) loader() *dataloader.Loader[K, V] {
	z.once.Do(func() {
		z.cache = dataloader.NewCache[K, V]()
		z.l = dataloader.NewBatchedLoader(z.batch, dataloader.WithWait[K, V](z.wait), dataloader.WithInputCapacity[K, V](inputCapacity),
			dataloader.WithCache[K, V](z.cache))
	})
	return z.l
}

// Begin runs the loader's batch for key alone, now, on one of w's workers,
// and caches a thunk of its answer for key, so that the operation's Loads of
// key wait for that read. For a key known before any resolver asks for it
// (the current corporation's id, from the session): its read starts at
// once, and no batch is opened for it. An opened batch costs a window and
// two goroutines (the batch's and its timer's), six per dashboard when its
// three early reads were loads (docs/performance.md, "Settings chosen
// by measurement"). A key already cached keeps its thunk, which Begin returns.
//
// A Load of key that runs at the same moment as Begin may still open a
// batch for it; the batch functions of the loaders Begin is used with read
// through the operation's per-key memos (ahead), so that costs no second
// upstream call.
func (z *Loader[K, V]) Begin(ctx context.Context, w *Workers, key K) dataloader.Thunk[V] {
	z.loader()
	if th, ok := z.cache.Get(ctx, key); ok {
		return th
	}
	done := make(chan struct{})
	var res *dataloader.Result[V]
	w.Go(func() {
		defer close(done)
		if out := z.batch(ctx, []K{key}); len(out) == 1 {
			res = out[0]
		}
	})
	thunk := func() (V, error) {
		<-done
		if res == nil {
			var zero V
			return zero, errShortBatch
		}
		return res.Data, res.Error
	}
	z.cache.Set(ctx, key, thunk)
	return thunk
}

// Load is dataloader.Loader.Load.
func (z *Loader[K, V]) Load(ctx context.Context, key K) dataloader.Thunk[V] {
	return z.loader().Load(ctx, key)
}

// LoadMany is dataloader.Loader.LoadMany.
func (z *Loader[K, V]) LoadMany(ctx context.Context, keys []K) dataloader.ThunkMany[V] {
	return z.loader().LoadMany(ctx, keys)
}

// Prime is dataloader.Loader.Prime: it caches value for key unless key is
// cached already.
func (z *Loader[K, V]) Prime(ctx context.Context, key K, value V) {
	z.loader().Prime(ctx, key, value)
}
