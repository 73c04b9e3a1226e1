package loaders

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The point of the pool: reads one after another run on one goroutine,
// whose stack has grown for the first, instead of one new goroutine each.
func TestWorkersReuseOneGoroutineForReadsInTurn(t *testing.T) {
	w, err := NewWorkers(slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	for range 50 {
		done := make(chan struct{})
		w.Go(func() { close(done) })
		<-done
		// The worker puts itself back just after its read: a read sent
		// before it has finds none idle and starts a second worker.
		time.Sleep(2 * time.Millisecond)
	}
	// Without reuse there would be 50, each alive for workerIdle; with no
	// pool, none.
	assert.Positive(t, w.pool.Running(), "the reads ran on the pool")
	assert.Less(t, w.pool.Running(), 10, "workers alive after 50 reads in turn")
}

func TestWorkersNeverMakeAReadWait(t *testing.T) {
	w, err := NewWorkers(slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	release := make(chan struct{})
	defer close(release)
	var started sync.WaitGroup
	const n = 200 // far more reads in flight than any fixed pool would hold
	started.Add(n)
	all := make(chan struct{})
	go func() { // Go itself may block on a bounded pool: off the test's goroutine
		for range n {
			w.Go(func() { started.Done(); <-release })
		}
		started.Wait()
		close(all)
	}()
	select {
	case <-all: // every read is running at once
	case <-time.After(10 * time.Second): // a bounded pool would hold some back
		t.Fatal("reads waited for a worker")
	}
}

func TestWorkersLogAPanicByTypeOnlyAndGoOn(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	w, err := NewWorkers(slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	w.Go(func() { panic("tok_SECRET_from_an_upstream_answer") })
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return bytes.Contains(logs.Bytes(), []byte("an upstream read panicked"))
	}, 5*time.Second, 5*time.Millisecond)
	mu.Lock()
	assert.NotContains(t, logs.String(), "tok_SECRET", "the panic value is not logged")
	assert.Contains(t, logs.String(), "panic=string")
	mu.Unlock()
	done := make(chan struct{})
	w.Go(func() { close(done) })
	<-done
}

func TestWorkersRunReadsWithoutAPoolAndAfterClose(t *testing.T) {
	var none *Workers
	done := make(chan struct{})
	none.Go(func() { close(done) })
	<-done

	w, err := NewWorkers(slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.NoError(t, w.Close(t.Context()))
	done = make(chan struct{})
	w.Go(func() { close(done) }) // a late read still runs, on a goroutine of its own
	<-done
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
