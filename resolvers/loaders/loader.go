package loaders

import (
	"context"
	"sync"
	"time"

	"github.com/graph-gophers/dataloader/v7"
)

// Loader batches the keys of a read whose keys, asked for together, are
// answered by one upstream call (customers by id: the customer listing).
// It is a dataloader made on its first use: most operations never use it,
// and making it up front cost allocations every operation paid. It has
// Read's Get and Prime, but Prime keeps an answer already cached. A Loader lives
// inside Loaders and is never copied.
type Loader[K comparable, V any] struct {
	once  sync.Once
	l     *dataloader.Loader[K, V]
	batch dataloader.BatchFunc[K, V]
	wait  time.Duration
}

// inputCapacity is the queue between Load and a batch. dataloader's
// default is sized for any batch of any loader, and is a large share of
// the bytes of an operation whose batches hold a page of keys at most; a
// fuller queue only makes Load wait for the batch to read it.
const inputCapacity = 64

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

// Get returns key's answer, from the cache or the batch that reads it.
func (z *Loader[K, V]) Get(ctx context.Context, key K) (V, error) {
	return z.loader().Load(ctx, key)()
}

// Prime caches value for key unless key is cached already.
func (z *Loader[K, V]) Prime(ctx context.Context, key K, value V) {
	z.loader().Prime(ctx, key, value)
}
