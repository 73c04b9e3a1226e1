package loaders

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/panjf2000/ants/v2"
)

// workerIdle is how long a worker waits for another read before it exits.
const workerIdle = 10 * time.Second

// Workers runs the upstream reads an operation starts ahead of its
// resolvers (Read.Start) on goroutines that outlive it: a read (an HTTP
// call and the decoding of its answer) needs a deep stack, a new goroutine
// starts small and copies its stack at each doubling, and that was a
// measurable share of a dashboard's CPU. A worker keeps its grown stack for
// the next read. The pool (ants) has no size limit, so a read
// never waits for a worker, and workers idle for workerIdle exit. A nil
// *Workers starts a goroutine per read.
type Workers struct{ pool *ants.Pool }

// NewWorkers starts the pool. A read that panics is logged to logger, by
// the type of its panic value only (the value could hold upstream data),
// and its operation sees the read fail (errReadPanicked).
func NewWorkers(logger *slog.Logger) (*Workers, error) {
	pool, err := ants.NewPool(-1, ants.WithExpiryDuration(workerIdle), ants.WithPanicHandler(func(v any) {
		logger.Error("loaders: an upstream read panicked", "panic", fmt.Sprintf("%T", v), "stack", string(debug.Stack()))
	}))
	if err != nil {
		return nil, fmt.Errorf("loaders: workers: %w", err)
	}
	return &Workers{pool: pool}, nil
}

// Go runs f on an idle worker, or on a new one.
func (w *Workers) Go(f func()) {
	if w == nil || w.pool.Submit(f) != nil { // Submit fails only once closed
		go f()
	}
}

// Close stops the workers, waiting for running reads until ctx ends.
func (w *Workers) Close(ctx context.Context) error {
	return w.pool.ReleaseContext(ctx)
}

// WithWorkers runs the operation's started reads on w (see Workers).
func WithWorkers(w *Workers) Option { return func(o *options) { o.workers = w } }
