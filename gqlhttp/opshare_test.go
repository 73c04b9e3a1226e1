package gqlhttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// testShare is an operationShare whose windows end when the test says so.
func testShare() (*operationShare, chan time.Time) {
	fire := make(chan time.Time)
	s := newOperationShare(time.Hour, func(ctx context.Context) string { return "view" })
	s.after = func(time.Duration) <-chan time.Time { return fire }
	return s, fire
}

// inDemand starts an execution of k that runs until the returned func is
// called: identical queries arriving meanwhile are in demand.
func inDemand(s *operationShare, k [32]byte) (release func()) {
	started, done := make(chan struct{}), make(chan struct{})
	go s.do(context.Background(), k, func(context.Context) (*graphql.Response, bool) {
		close(started)
		<-done
		return &graphql.Response{}, false
	})
	<-started
	return func() { close(done) }
}

// pendingWaiters counts the requests waiting for k's execution that has not
// started.
func pendingWaiters(s *operationShare, k [32]byte) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.pending[k]; f != nil {
		return f.waiters
	}
	return 0
}

// yieldUntil yields until cond holds: it counts, it does not time.
func yieldUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i > 1_000_000 {
			t.Fatal("condition never held")
		}
		runtime.Gosched()
	}
}

func TestIdenticalQueriesInDemandShareOneExecution(t *testing.T) {
	s, fire := testShare()
	var k [32]byte
	var runs atomic.Int32
	release := make(chan struct{})
	first := &graphql.Response{Data: []byte(`{"n":1}`)}
	second := &graphql.Response{Data: []byte(`{"n":2}`)}

	// The first query starts at once: nothing identical is running.
	firstDone := make(chan *graphql.Response)
	go func() {
		resp, _ := s.do(context.Background(), k, func(context.Context) (*graphql.Response, bool) {
			runs.Add(1)
			<-release
			return first, false
		})
		firstDone <- resp
	}()
	yieldUntil(t, func() bool { return runs.Load() == 1 })

	// Eight more arrive while it runs: they may not join it (it began
	// before they did); one waits the window and the others join that one.
	const n = 8
	var wg sync.WaitGroup
	got := make([]*graphql.Response, n)
	for i := range n {
		wg.Go(func() {
			got[i], _ = s.do(context.Background(), k, func(context.Context) (*graphql.Response, bool) {
				runs.Add(1)
				return second, false
			})
		})
	}
	yieldUntil(t, func() bool { return pendingWaiters(s, k) == n })
	if runs.Load() != 1 {
		t.Fatalf("%d executions before the window ended, want 1", runs.Load())
	}
	fire <- time.Now()
	wg.Wait()
	close(release)
	if resp := <-firstDone; resp != first {
		t.Fatalf("the first query got %s", resp.Data)
	}
	if runs.Load() != 2 {
		t.Fatalf("%d executions for %d identical queries, want 2", runs.Load(), n+1)
	}
	for i, resp := range got {
		if resp != second {
			t.Fatalf("query %d got %v, want the shared answer", i, resp)
		}
	}
}

func TestAnAnswerWithCardDataIsNeverShared(t *testing.T) {
	s, fire := testShare()
	var k [32]byte
	defer inDemand(s, k)()

	const n = 4
	var runs atomic.Int32
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, noStore := s.do(context.Background(), k, func(context.Context) (*graphql.Response, bool) {
				runs.Add(1)
				return &graphql.Response{Data: []byte(`{"pan":"…"}`)}, true
			})
			if resp == nil || !noStore {
				t.Error("a card-data answer came without no-store")
			}
		})
	}
	yieldUntil(t, func() bool { return pendingWaiters(s, k) == n })
	fire <- time.Now()
	wg.Wait()
	if runs.Load() != n || s.joined.Load() != 0 {
		t.Fatalf("%d executions, %d shared answers for %d card-data reads: each must run and be counted", runs.Load(), s.joined.Load(), n)
	}
}

func TestAQueryNeverJoinsAnExecutionThatHasStarted(t *testing.T) {
	s, fire := testShare()
	var k [32]byte
	defer inDemand(s, k)()
	// In demand: this one waits its window, then runs on its own.
	var ran atomic.Bool
	done := make(chan struct{})
	go func() {
		s.do(context.Background(), k, func(context.Context) (*graphql.Response, bool) {
			ran.Store(true)
			return &graphql.Response{}, false
		})
		close(done)
	}()
	fire <- time.Now()
	<-done
	if !ran.Load() || s.joined.Load() != 0 {
		t.Fatalf("ran %v, joined %d: a query arriving after an execution began must run its own", ran.Load(), s.joined.Load())
	}
}

func TestASharedExecutionEndsOnlyWhenNoRequestWaits(t *testing.T) {
	s, fire := testShare()
	var k [32]byte
	// Make the key in demand.
	defer inDemand(s, k)()

	leaderCtx, leaderLeaves := context.WithCancel(context.Background())
	running := make(chan context.Context)
	finish := make(chan struct{})
	go s.do(leaderCtx, k, func(ctx context.Context) (*graphql.Response, bool) {
		running <- ctx
		<-finish
		return &graphql.Response{Data: []byte(`{}`)}, false
	})
	yieldUntil(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.pending[k] != nil })
	followerCtx, followerLeaves := context.WithCancel(context.Background())
	followerDone := make(chan *graphql.Response)
	go func() {
		resp, _ := s.do(followerCtx, k, nil)
		followerDone <- resp
	}()
	yieldUntil(t, func() bool { return pendingWaiters(s, k) == 2 })
	fire <- time.Now()
	execCtx := <-running

	leaderLeaves()
	yieldUntil(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.running[k] != nil && s.running[k].waiters == 1 })
	if execCtx.Err() != nil {
		t.Fatal("the execution ended when its first request left, with another still waiting")
	}
	followerLeaves()
	if resp := <-followerDone; resp != nil {
		t.Fatal("a request that left got an answer")
	}
	yieldUntil(t, func() bool { return execCtx.Err() != nil })
	close(finish)
}

func TestOnlyQueriesOfAViewAreShared(t *testing.T) {
	s := newOperationShare(time.Millisecond, func(ctx context.Context) string {
		v, _ := ctx.Value(viewKey{}).(string)
		return v
	})
	req := func(view string) *http.Request {
		r := httptest.NewRequest("POST", "/graphql", nil)
		return r.WithContext(context.WithValue(r.Context(), viewKey{}, view))
	}
	op := func(kind ast.Operation, dirs ast.DirectiveList, vars map[string]any) *graphql.OperationContext {
		return &graphql.OperationContext{RawQuery: "{ customers { id } }", Variables: vars,
			Operation: &ast.OperationDefinition{Operation: kind, Directives: dirs}}
	}
	a, ok := s.key(req("alice"), op(ast.Query, nil, map[string]any{"x": 1, "y": 2}))
	if !ok {
		t.Fatal("a query of a session is not shared")
	}
	if b, _ := s.key(req("alice"), op(ast.Query, nil, map[string]any{"y": 2, "x": 1})); b != a {
		t.Fatal("the same variables give two keys")
	}
	if b, _ := s.key(req("alice"), op(ast.Query, nil, map[string]any{"x": 2, "y": 2})); b == a {
		t.Fatal("other variables share a key")
	}
	if b, _ := s.key(req("bob"), op(ast.Query, nil, map[string]any{"x": 1, "y": 2})); b == a {
		t.Fatal("two views share a key")
	}
	other := op(ast.Query, nil, map[string]any{"x": 1, "y": 2})
	other.RawQuery = "{ customers { id number } }"
	if b, _ := s.key(req("alice"), other); b == a {
		t.Fatal("two documents share a key")
	}
	named := op(ast.Query, nil, map[string]any{"x": 1, "y": 2})
	named.OperationName = "Screen"
	if b, _ := s.key(req("alice"), named); b == a {
		t.Fatal("two operations of a document share a key")
	}
	for name, oc := range map[string]*graphql.OperationContext{
		"a mutation":           op(ast.Mutation, nil, nil),
		"a subscription":       op(ast.Subscription, nil, nil),
		"a query with @live":   op(ast.Query, ast.DirectiveList{{Name: "live"}}, nil),
		"a query of no answer": {RawQuery: "{ x }"},
	} {
		if _, ok := s.key(req("alice"), oc); ok {
			t.Errorf("%s is shared", name)
		}
	}
	if _, ok := s.key(req(""), op(ast.Query, nil, nil)); ok {
		t.Error("a request without a session is shared")
	}
	var none *operationShare
	if _, ok := none.key(req("alice"), op(ast.Query, nil, nil)); ok {
		t.Error("sharing turned off still shares")
	}
}

type viewKey struct{}

// An execution that panics (gqlgen's handler recovers it) frees the
// requests that joined it, which then run their own, and leaves nothing
// behind: the next identical query is not held as in demand.
func TestASharedExecutionThatPanicsFreesItsJoiners(t *testing.T) {
	s, fire := testShare()
	var k [32]byte
	release := inDemand(s, k)
	// A second request waits its window; a third joins it.
	panicked := make(chan any)
	go func() {
		defer func() { panicked <- recover() }()
		s.do(context.Background(), k, func(context.Context) (*graphql.Response, bool) { panic("resolver bug") })
	}()
	yieldUntil(t, func() bool { return pendingWaiters(s, k) == 1 })
	own := &graphql.Response{Data: []byte(`{"own":true}`)}
	joined := make(chan *graphql.Response)
	go func() {
		resp, _ := s.do(context.Background(), k, func(context.Context) (*graphql.Response, bool) { return own, false })
		joined <- resp
	}()
	yieldUntil(t, func() bool { return pendingWaiters(s, k) == 2 })
	fire <- time.Time{}
	if p := <-panicked; p != "resolver bug" {
		t.Fatalf("the panic was %v, want it passed on", p)
	}
	if resp := <-joined; resp != own {
		t.Fatalf("the joiner got %+v, want its own run", resp)
	}
	release()
	yieldUntil(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.running) == 0 && len(s.pending) == 0
	})
}
