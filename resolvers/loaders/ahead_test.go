package loaders

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graph-gophers/dataloader/v7"
)

// TestBeginReadsBeforeTheWindowCloses: Begin reads the key at once,
// although the loader's window (an hour here) has not closed, so a
// screen's known key costs no batch window.
func TestBeginReadsBeforeTheWindowCloses(t *testing.T) {
	entered := make(chan string, 1)
	a := newAhead(func(_ context.Context, id string) (string, error) { entered <- id; return "v-" + id, nil })
	l := new(Loader[string, string])
	l.init(perKey(a.read), time.Hour)
	_ = l.Begin(t.Context(), nil, "c1")
	select {
	case id := <-entered:
		if id != "c1" {
			t.Fatalf("read %q", id)
		}
	case <-time.After(10 * time.Second): // deadlock guard only
		t.Fatal("the read waited for the loader's window")
	}
}

// TestBeginAnswersTheLoaderOnce: the begun read answers every later load of
// its key, with one upstream call, and other keys still go through the
// loader's batch.
func TestBeginAnswersTheLoaderOnce(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	a := newAhead(func(_ context.Context, id string) (string, error) {
		calls.Add(1)
		<-release
		return "v-" + id, nil
	})
	l := new(Loader[string, string])
	l.init(perKey(a.read), time.Millisecond)
	begun := l.Begin(t.Context(), nil, "c1")
	later := l.Load(t.Context(), "c1")
	other := l.Load(t.Context(), "c2")
	close(release)
	for key, th := range map[string]dataloader.Thunk[string]{"c1": begun, "c1 again": later, "c2": other} {
		v, err := th()
		if err != nil {
			t.Fatal(err)
		}
		if want := "v-" + key[:2]; v != want {
			t.Fatalf("load of %s = %q, want %q", key, v, want)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d upstream calls for 2 keys, one of them begun; want 2", n)
	}
}

// TestBeginOpensNoBatch: a begun key's loads are answered without a batch
// of the loader's (a window and two goroutines each), and a key that a load
// already asked for keeps the load's batch: Begin does not read it again.
func TestBeginOpensNoBatch(t *testing.T) {
	var batches, keys atomic.Int32
	counting := func(_ context.Context, ks []string) []*dataloader.Result[string] {
		batches.Add(1)
		keys.Add(int32(len(ks)))
		out := make([]*dataloader.Result[string], len(ks))
		for i, k := range ks {
			out[i] = &dataloader.Result[string]{Data: "v-" + k}
		}
		return out
	}
	l := new(Loader[string, string])
	l.init(counting, 10*time.Millisecond)
	if v, err := l.Begin(t.Context(), nil, "c1")(); err != nil || v != "v-c1" {
		t.Fatalf("begun read = %q, %v", v, err)
	}
	if v, err := l.Load(t.Context(), "c1")(); err != nil || v != "v-c1" {
		t.Fatalf("load after Begin = %q, %v", v, err)
	}
	if b, k := batches.Load(), keys.Load(); b != 1 || k != 1 {
		t.Fatalf("%d batches for %d keys, want Begin's one batch of one key", b, k)
	}

	batches.Store(0)
	keys.Store(0)
	l = new(Loader[string, string])
	l.init(counting, 10*time.Millisecond)
	queued := l.Load(t.Context(), "c2")
	begun := l.Begin(t.Context(), nil, "c2") // the load's thunk: waiting on it waits for the load's batch
	for _, th := range []dataloader.Thunk[string]{queued, begun} {
		if v, err := th(); err != nil || v != "v-c2" {
			t.Fatalf("c2 = %q, %v", v, err)
		}
	}
	if b, k := batches.Load(), keys.Load(); b != 1 || k != 1 {
		t.Fatalf("%d batches for %d keys, want the load's one batch of one key", b, k)
	}
}

// TestBeginReportsABatchThatAnswersNothing: a batch that returns no result
// for the key (or panics, on a worker that recovers) gives the loads an
// error, never a zero value that looks like an answer.
func TestBeginReportsABatchThatAnswersNothing(t *testing.T) {
	l := new(Loader[string, string])
	l.init(func(context.Context, []string) []*dataloader.Result[string] { return nil }, time.Hour)
	if _, err := l.Begin(t.Context(), nil, "c1")(); !errors.Is(err, errShortBatch) {
		t.Fatalf("err = %v, want errShortBatch", err)
	}

	w, err := NewWorkers(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	l = new(Loader[string, string])
	l.init(func(context.Context, []string) []*dataloader.Result[string] { panic("upstream data") }, time.Hour)
	if _, err := l.Begin(t.Context(), w, "c1")(); !errors.Is(err, errShortBatch) {
		t.Fatalf("after a panic, err = %v, want errShortBatch", err)
	}
}
