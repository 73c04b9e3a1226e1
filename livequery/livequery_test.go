package livequery_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fingraph/fingraph/livequery"
)

// feed is an in-memory change feed: every follower gets every subject.
type feed struct {
	mu        sync.Mutex
	followers map[int]func(string)
	n         int
}

func newFeed() *feed { return &feed{followers: map[int]func(string){}} }

func (f *feed) Follow(ctx context.Context, notify func(string), _ func(error)) error {
	f.mu.Lock()
	id := f.n
	f.n++
	f.followers[id] = notify
	f.mu.Unlock()
	context.AfterFunc(ctx, func() {
		f.mu.Lock()
		delete(f.followers, id)
		f.mu.Unlock()
	})
	return nil
}

func (f *feed) change(subject string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.followers {
		n(subject)
	}
}

type wallet struct{ id string }

func (w *wallet) GetID() string { return w.id }

// nodeQuery is an Exec whose answer shows the value of node id, read from
// values, and resolves that node through the watched field middleware.
func nodeQuery(id string, values *sync.Map, runs *atomic.Int64) livequery.Exec {
	mw := livequery.WatchFields(func(ctx context.Context, next graphql.Resolver) (any, error) { return next(ctx) })
	return func(ctx context.Context) *graphql.Response {
		defer runs.Add(1)
		_, _ = mw(ctx, func(context.Context) (any, error) { return []*wallet{{id: id}, nil}, nil })
		v, _ := values.Load(id)
		b, _ := json.Marshal(map[string]any{"node": map[string]any{"id": id, "value": v}})
		return &graphql.Response{Data: b}
	}
}

// answers pumps a live query's answers into a channel.
func answers(ctx context.Context, next func(context.Context) *graphql.Response) <-chan *graphql.Response {
	out := make(chan *graphql.Response, 64)
	go func() {
		defer close(out)
		for {
			r := next(ctx)
			if r == nil {
				return
			}
			out <- r
		}
	}()
	return out
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited in vain for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRunsFollowWatchers: of n live queries, the k that show the changed
// Node run again, and no other: a change costs runs in proportion to the
// live queries that show it, not to all of them.
func TestRunsFollowWatchers(t *testing.T) {
	const n, k = 10000, 10
	f := newFeed()
	e := livequery.New(livequery.Config{Changes: f, Interval: time.Millisecond, MaxPerSession: n, MaxPerAddress: n})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	values := &sync.Map{}
	var runs atomic.Int64
	var outs []<-chan *graphql.Response
	for i := range n {
		id := fmt.Sprintf("w-%d", i)
		if i < k {
			id = "hot"
		}
		values.Store(id, 0)
		next, _, err := e.Start(ctx, livequery.Caller{Session: "s", Address: "a"}, nodeQuery(id, values, &runs))
		if err != nil {
			t.Fatal(err)
		}
		out := answers(ctx, next)
		<-out // the first answer
		outs = append(outs, out)
	}
	if got := runs.Load(); got != n {
		t.Fatalf("%d first runs, want %d", got, n)
	}
	values.Store("hot", 1)
	f.change("hot")
	for i := range k {
		r := <-outs[i]
		if string(r.Data) != `{"node":{"id":"hot","value":1}}` {
			t.Errorf("query %d answered %s", i, r.Data)
		}
	}
	// The change reached every follower synchronously: no other query is
	// dirty, so the count is final once the k answered.
	if got := runs.Load() - n; got != k {
		t.Errorf("one change cost %d runs, want %d (the queries that show it)", got, k)
	}
	t.Logf("n=%d live queries, k=%d show the changed node: %d runs", n, k, runs.Load()-n)
}

// oneLive starts one live query of Node "w" (value 0) on an engine with
// interval: its feed, its values to change, its run count, its answers
// (the first already read) and the cancel that ends it.
type oneLive struct {
	f      *feed
	e      *livequery.Engine
	values *sync.Map
	runs   *atomic.Int64
	out    <-chan *graphql.Response
	cancel context.CancelFunc
}

func startOneLive(t *testing.T, interval time.Duration) *oneLive {
	t.Helper()
	l := &oneLive{f: newFeed(), values: &sync.Map{}, runs: &atomic.Int64{}}
	l.e = livequery.New(livequery.Config{Changes: l.f, Interval: interval})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	l.cancel = cancel
	l.values.Store("w", 0)
	next, _, err := l.e.Start(ctx, livequery.Caller{}, nodeQuery("w", l.values, l.runs))
	if err != nil {
		t.Fatal(err)
	}
	l.out = answers(ctx, next)
	<-l.out
	return l
}

// TestUnchangedAnswerNotSent: a change that leaves the answer equal runs
// the query but sends nothing; the next answer sent is a different one.
func TestUnchangedAnswerNotSent(t *testing.T) {
	l := startOneLive(t, time.Millisecond)
	l.f.change("w") // same value
	waitFor(t, "a second run", func() bool { return l.runs.Load() == 2 })
	l.values.Store("w", 2)
	l.f.change("w")
	r := <-l.out
	if string(r.Data) != `{"node":{"id":"w","value":2}}` {
		t.Errorf("next answer %s, want the changed one", r.Data)
	}
	if s := l.e.Stats(); s.Answers != 2 || s.Runs != 3 {
		t.Errorf("stats %+v, want 3 runs and 2 answers", s)
	}
}

// TestBurstCoalesced: a burst of changes within the interval costs at most
// one run after the first answer's.
func TestBurstCoalesced(t *testing.T) {
	l := startOneLive(t, time.Hour)
	for i := range 100 {
		l.values.Store("w", i+1)
		l.f.change("w")
	}
	// Within the hour nothing more runs; cancelling ends the query.
	l.cancel()
	for range l.out {
		t.Error("an answer within the interval")
	}
	if got := l.runs.Load(); got != 1 {
		t.Errorf("%d runs, want 1", got)
	}
}

// TestUnwatchedChangeIgnored: a change to a Node not in the answer runs
// nothing.
func TestUnwatchedChangeIgnored(t *testing.T) {
	l := startOneLive(t, time.Millisecond)
	for range 50 {
		l.f.change("other")
	}
	l.cancel()
	for range l.out {
	}
	if got := l.runs.Load(); got != 1 {
		t.Errorf("%d runs for changes to other Nodes, want 1", got)
	}
}

// TestCaps: live queries beyond the per-session or per-address cap are
// refused, and an ended one frees its place.
func TestCaps(t *testing.T) {
	e := livequery.New(livequery.Config{Changes: newFeed(), MaxPerSession: 2, MaxPerAddress: 3})
	exec := func(context.Context) *graphql.Response { return &graphql.Response{Data: []byte(`{}`)} }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := func(ctx context.Context, s, a string) error {
		_, _, err := e.Start(ctx, livequery.Caller{Session: s, Address: a}, exec)
		return err
	}
	one, endOne := context.WithCancel(ctx)
	if err := start(one, "s1", "a"); err != nil {
		t.Fatal(err)
	}
	if err := start(ctx, "s1", "a"); err != nil {
		t.Fatal(err)
	}
	if err := start(ctx, "s1", "b"); !errors.Is(err, livequery.ErrTooMany) {
		t.Errorf("third of a session: %v, want ErrTooMany", err)
	}
	if err := start(ctx, "s2", "a"); err != nil {
		t.Fatal(err)
	}
	if err := start(ctx, "s3", "a"); !errors.Is(err, livequery.ErrTooMany) {
		t.Errorf("fourth of an address: %v, want ErrTooMany", err)
	}
	endOne()
	waitFor(t, "the ended query's place", func() bool { return e.Stats().Active == 2 })
	if err := start(ctx, "s1", "c"); err != nil {
		t.Errorf("after one ended: %v", err)
	}
	// Callers without a session share no session entry: each address is
	// bounded on its own.
	for _, a := range []string{"d", "d", "e", "e", "f"} {
		if err := start(ctx, "", a); err != nil {
			t.Errorf("a sessionless caller at %s: %v", a, err)
		}
	}
}

// TestIdleMemory reports the heap an idle live query holds (its engine
// state and the goroutine reading its answers); docs/live.md.
func TestIdleMemory(t *testing.T) {
	const n = 10000
	f := newFeed()
	e := livequery.New(livequery.Config{Changes: f, MaxPerSession: n, MaxPerAddress: n})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	values := &sync.Map{}
	var runs atomic.Int64
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	for i := range n {
		id := fmt.Sprintf("w-%d", i)
		values.Store(id, 0)
		next, _, err := e.Start(ctx, livequery.Caller{}, nodeQuery(id, values, &runs))
		if err != nil {
			t.Fatal(err)
		}
		next(ctx)
		go next(ctx) // waits for a change, as a transport's reader does
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc-before.HeapAlloc) / n
	stacks := float64(after.StackInuse-before.StackInuse) / n
	goroutines := float64(runtime.NumGoroutine()-g0) / n
	t.Logf("idle live query: %.0f bytes of heap and %.0f of stack, %.1f goroutines (the reader a transport has anyway); %d queries", heap, stacks, goroutines, n)
	if e.Stats().Active != n {
		t.Errorf("active %d, want %d", e.Stats().Active, n)
	}
}

// followers counts the feed's followers.
func (f *feed) followerCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.followers)
}

// TestSharedQueriesRunOncePerChange: live queries with one Share key
// follow the feed once and run once per change, and each sends the new
// answer; another key runs apart; when the last query of a key leaves its
// follower goes, and when one leaves the others go on.
func TestSharedQueriesRunOncePerChange(t *testing.T) {
	f := newFeed()
	e := livequery.New(livequery.Config{Changes: f, Interval: time.Millisecond})
	values := &sync.Map{}
	values.Store("w", 0)
	var runs atomic.Int64
	start := func(share string) (context.CancelFunc, <-chan *graphql.Response) {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		next, _, err := e.Start(ctx, livequery.Caller{Session: share, Address: "a", Share: share}, nodeQuery("w", values, &runs))
		if err != nil {
			t.Fatal(err)
		}
		out := answers(ctx, next)
		<-out // its own first answer
		return cancel, out
	}
	var outs []<-chan *graphql.Response
	var cancels []context.CancelFunc
	for range 10 {
		c, o := start("s1")
		cancels, outs = append(cancels, c), append(outs, o)
	}
	_, other := start("s2")
	if n := f.followerCount(); n != 2 {
		t.Fatalf("%d followers of the feed for two keys, want 2", n)
	}
	first := runs.Load() // one first run each
	values.Store("w", 1)
	f.change("w")
	for i, o := range append(outs, other) {
		if r := <-o; string(r.Data) != `{"node":{"id":"w","value":1}}` {
			t.Fatalf("query %d: %s", i, r.Data)
		}
	}
	if got := runs.Load() - first; got != 2 {
		t.Errorf("%d runs for one change of 11 live queries under two keys, want 2", got)
	}

	// One leaves: the others of its key still follow.
	cancels[0]()
	values.Store("w", 2)
	f.change("w")
	for i, o := range outs[1:] {
		if r := <-o; string(r.Data) != `{"node":{"id":"w","value":2}}` {
			t.Fatalf("query %d after one left: %s", i+1, r.Data)
		}
	}
	for _, c := range cancels[1:] {
		c()
	}
	waitFor(t, "the key's follower gone with its last query", func() bool { return f.followerCount() == 1 })
}
