package loaders

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graph-gophers/dataloader/v7"
)

// TestAheadReadStartsBeforeTheWindowCloses: start reads the key at once,
// although the loader's window (an hour here) has not closed, so a
// screen's known key costs no batch window.
func TestAheadReadStartsBeforeTheWindowCloses(t *testing.T) {
	entered := make(chan string, 1)
	a := newAhead(func(_ context.Context, id string) (string, error) { entered <- id; return "v-" + id, nil }, nil)
	l := new(Loader[string, string])
	l.init(perKey(a.read), time.Hour)
	_ = a.start(t.Context(), l, "c1") // its wait would take the hour: not called
	select {
	case id := <-entered:
		if id != "c1" {
			t.Fatalf("read %q", id)
		}
	case <-time.After(10 * time.Second): // deadlock guard only
		t.Fatal("the read waited for the loader's window")
	}
}

// TestAheadReadAnswersTheLoaderOnce: the early read and the loader's batch
// for the same key make one upstream call, and every load of the key gets
// its answer.
func TestAheadReadAnswersTheLoaderOnce(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	a := newAhead(func(_ context.Context, id string) (string, error) {
		calls.Add(1)
		<-release
		return "v-" + id, nil
	}, nil)
	l := new(Loader[string, string])
	l.init(perKey(a.read), time.Millisecond)
	wait := a.start(t.Context(), l, "c1")
	later := l.Load(t.Context(), "c1")
	other := l.Load(t.Context(), "c2")
	close(release)
	wait()
	for _, th := range []dataloader.Thunk[string]{later, other} {
		if _, err := th(); err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := later(); v != "v-c1" {
		t.Fatalf("load of c1 = %q", v)
	}
	if v, _ := other(); v != "v-c2" {
		t.Fatalf("load of c2 = %q", v)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d upstream calls for 2 keys, one of them read ahead; want 2", n)
	}
}
