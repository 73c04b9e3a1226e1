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
	batch dataloader.BatchFunc[K, V]
	wait  time.Duration
}

// init sets the batch function and window the loader will be made with.
func (z *Loader[K, V]) init(batch dataloader.BatchFunc[K, V], wait time.Duration) {
	z.batch, z.wait = batch, wait
}

func (z *Loader[K, V]) loader() *dataloader.Loader[K, V] {
	z.once.Do(func() {
		z.l = dataloader.NewBatchedLoader(z.batch, dataloader.WithWait[K, V](z.wait), dataloader.WithInputCapacity[K, V](inputCapacity))
	})
	return z.l
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
