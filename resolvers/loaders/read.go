package loaders

import (
	"context"
	"sync"
)

// Read is one kind of upstream read of one operation (a corporation's
// wallets, the card listing, a page of a card's transactions), cached by
// key: each key is read at most once per operation, however many resolvers
// ask and in whatever order.
//
// Start begins the key's read and returns at once: a resolver calls it when
// its selection shows that a field below it will need the key, so that the
// read overlaps the work before that field. Get returns the key's answer,
// beginning the read unless it has begun and waiting for it: the field that
// uses the answer calls it. A key's answer, error included, holds for the
// rest of the operation.
//
// Start runs the read on one of the operation's workers (see Workers); Get
// of a key nobody started reads it in place. At most fanOut reads of one
// Read are in flight at a time, so that a screen of many keys does not
// flood an upstream from one request.
type Read[K comparable, V any] struct {
	fetch   func(context.Context, K) (V, error)
	workers *Workers
	mu      sync.Mutex
	cells   map[K]*cell[V]
	slots   chan struct{} // fanOut reads in flight
}

// Whole is the key of a read with one answer per operation: a whole
// listing, or the viewer.
type Whole struct{}

// cell is one key's read: done is closed when v and err are set.
type cell[V any] struct {
	done chan struct{}
	v    V
	err  error
}

// init sets how the read fetches a key, and the workers it runs on.
func (r *Read[K, V]) init(fetch func(context.Context, K) (V, error), w *Workers) {
	r.fetch, r.workers = fetch, w
}

// Start begins reading key unless its read has begun.
func (r *Read[K, V]) Start(ctx context.Context, key K) {
	if c, fresh := r.cell(key); fresh {
		r.workers.Go(func() { r.run(ctx, key, c) })
	}
}

// Get returns key's answer: the read Start began, or one made now.
func (r *Read[K, V]) Get(ctx context.Context, key K) (V, error) {
	c, fresh := r.cell(key)
	if fresh {
		r.run(ctx, key, c)
	}
	<-c.done
	return c.v, c.err
}

// Prime stores v as key's answer for the operation's later Gets: for a
// value read elsewhere (sign-in reads the viewer it then answers with; a
// page of a listing holds the records a by-id read would read again).
func (r *Read[K, V]) Prime(_ context.Context, key K, v V) {
	c := &cell[V]{done: make(chan struct{}), v: v}
	close(c.done)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.put(key, c)
}

func (r *Read[K, V]) put(key K, c *cell[V]) {
	if r.cells == nil {
		r.cells = map[K]*cell[V]{}
		r.slots = make(chan struct{}, fanOut)
	}
	r.cells[key] = c
}

// cell returns key's cell, and whether it is new: then its caller reads it.
func (r *Read[K, V]) cell(key K) (c *cell[V], fresh bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.cells[key]; ok {
		return c, false
	}
	c = &cell[V]{done: make(chan struct{})}
	r.put(key, c)
	return c, true
}

func (r *Read[K, V]) run(ctx context.Context, key K, c *cell[V]) {
	// A read that panics answers errReadPanicked rather than leaving its
	// waiters waiting (the workers log the panic).
	c.err = errReadPanicked
	defer close(c.done)
	r.slots <- struct{}{}
	defer func() { <-r.slots }()
	c.v, c.err = r.fetch(ctx, key)
}

const errReadPanicked = loaderError("loaders: an upstream read failed unexpectedly")
