package loaders

import (
	"context"
	"sync"
)

// ahead is a per-key read memoised for the operation: behind a
// per-corporation loader, so that it can begin before the loader's batch
// window closes, and behind the reads of persons past the first page of
// the listing (personsPage.beyond), so that two batches read one once. For
// the first use: a resolver that knows a key will be loaded (the current
// corporation's id, known from the session) starts the read at once, and
// the loader's batch for that key, when its window closes, waits for the
// same read instead of making a second call. Like the loader's own cache it
// lives for one operation; clearing a key of the loader would not clear its
// read here (nothing clears these loaders' keys).
type ahead[V any] struct {
	get func(context.Context, string) (V, error)
	// workers run the reads start begins (nil: a goroutine each).
	workers *Workers
	mu      sync.Mutex
	reads   map[string]*memo[V]
}

func newAhead[V any](get func(context.Context, string) (V, error), workers *Workers) *ahead[V] {
	return &ahead[V]{get: get, workers: workers}
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

// start begins reading key now and queues the loader's load of it (the
// loader's batch then answers from this read); it returns a function that
// waits until the load is done.
func (a *ahead[V]) start(ctx context.Context, l *Loader[string, V], key string) (wait func()) {
	a.workers.Go(func() { _, _ = a.read(ctx, key) })
	thunk := l.Load(ctx, key)
	return func() { _, _ = thunk() }
}
