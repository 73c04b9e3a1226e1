package gqlhttp

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Sharing an operation: when one session sends the same query several times
// at once (a dashboard open in several tabs, a client retrying, a load
// balancer's twin requests), the gateway runs it once and answers every
// request with the same bytes. Tailcall's operation dedupe does the same;
// these rules keep it invisible to the callers, as roundtrip's shared reads
// do for upstream calls:
//
//   - Only a query is shared, never a mutation or a subscription, nor an
//     operation with directives of its own (@live): its answer is a
//     function of what it reads and nothing else.
//   - Only requests of one view share (HandlerConfig.ViewScope: the same
//     session, principal and corporation), with the same document,
//     operation name and variables as coerced. A request with no session
//     never shares.
//   - A request joins only an execution that has not started: every
//     upstream call of the execution begins after every request it answers
//     arrived, so each reads every write its client had finished
//     (roundtrip.ShareFrom is set when the execution starts).
//   - A query in demand (an identical one of the session is running, which
//     a new request may not join) waits the share window before it starts,
//     so that the identical requests arriving meanwhile join it. Any other
//     query starts at once.
//   - Each request is parsed, validated and admitted on its own, and its
//     errors are its own; only the execution is shared. An answer that
//     carries card data (MarkNoStore) is never shared: the requests that
//     joined its execution each run their own, so that every read of card
//     data is counted by its own limit. The execution runs
//     under its own deadline (the operation timeout) and is cancelled once
//     no request waits for it, not when the first one leaves.
//
// The table of executions keys them by a SHA-256 digest: it holds no
// session id, document or variable.
type operationShare struct {
	window time.Duration
	scope  func(context.Context) string
	// after starts a waited query's window; tests replace it.
	after func(time.Duration) <-chan time.Time

	mu sync.Mutex
	// pending are the executions not started yet, which requests may join;
	// running the started ones, which make a new identical query wait.
	pending map[[sha256.Size]byte]*sharedRun
	running map[[sha256.Size]byte]*sharedRun

	// joined counts the requests answered by another's execution.
	joined atomic.Uint64
}

// sharedRun is one execution of a shared query and, once done is closed,
// its answer.
type sharedRun struct {
	done    chan struct{}
	cancel  context.CancelFunc
	waiters int // guarded by operationShare.mu
	resp    *graphql.Response
	noStore bool
}

func newOperationShare(window time.Duration, scope func(context.Context) string) *operationShare {
	return &operationShare{window: window, scope: scope, after: time.After,
		pending: map[[sha256.Size]byte]*sharedRun{}, running: map[[sha256.Size]byte]*sharedRun{}}
}

// key names oc's execution for r's caller; ok is false when it must not be
// shared.
func (s *operationShare) key(r *http.Request, oc *graphql.OperationContext) (k [sha256.Size]byte, ok bool) {
	if s == nil || oc.Operation == nil || oc.Operation.Operation != ast.Query || len(oc.Operation.Directives) > 0 {
		return k, false
	}
	scope := s.scope(r.Context())
	if scope == "" {
		return k, false
	}
	vars, err := json.Marshal(oc.Variables) // map keys sorted: one text per value
	if err != nil {
		return k, false
	}
	// One buffer, hashed once: the parts' copies into a hash.Hash were an
	// allocation each, on every query.
	b := make([]byte, 0, len(scope)+len(oc.OperationName)+len(oc.RawQuery)+len(vars)+3)
	for _, part := range []string{scope, oc.OperationName, oc.RawQuery} {
		b = append(append(b, part...), 0)
	}
	return sha256.Sum256(append(b, vars...)), true
}

// do answers the request of ctx with run's answer, run once for the
// identical requests that join it (see above); run says whether its answer
// carries card data (no-store). run gets a context that no request's
// cancellation ends. A nil answer means the request left before it came.
func (s *operationShare) do(ctx context.Context, k [sha256.Size]byte, run func(context.Context) (*graphql.Response, bool)) (*graphql.Response, bool) {
	s.mu.Lock()
	if f := s.pending[k]; f != nil {
		f.waiters++
		s.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			s.leave(f)
			return nil, false
		}
		if f.noStore {
			return run(ctx)
		}
		s.joined.Add(1)
		return f.resp, false
	}
	f := &sharedRun{done: make(chan struct{}), waiters: 1}
	_, inDemand := s.running[k]
	if inDemand && s.window > 0 {
		s.pending[k] = f
		s.mu.Unlock()
		select {
		case <-s.after(s.window):
		case <-ctx.Done():
			// Those who joined still get their answer; this request's
			// own goroutine runs it (below) and leaves.
		}
		s.mu.Lock()
		if s.pending[k] == f {
			delete(s.pending, k)
		}
	}
	s.running[k] = f
	// The execution's context keeps the request's values (its session, its
	// read cache's options) but not its end: it ends when every request
	// that waits for it has left, or at the operation timeout.
	run0, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f.cancel = cancel
	s.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { s.leave(f) })

	// The answer is published however run ends: a run that panics (the
	// handler recovers it) leaves no entry behind, and its joiners, told
	// noStore, run their own rather than wait for nothing.
	var resp *graphql.Response
	noStore := true
	defer func() {
		s.mu.Lock()
		if s.running[k] == f {
			delete(s.running, k)
		}
		f.resp, f.noStore = resp, noStore
		s.mu.Unlock()
		close(f.done)
		stop()
		cancel()
	}()
	resp, noStore = run(run0)
	return resp, noStore
}

// leave records that a request stopped waiting for f; the last one to leave
// cancels it.
func (s *operationShare) leave(f *sharedRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.waiters--; f.waiters == 0 && f.cancel != nil {
		f.cancel()
	}
}

// SharedQueries counts the requests this handler answered with another
// request's execution of the same query (opshare.go).
func (h *Handler) SharedQueries() uint64 {
	if h.share == nil {
		return 0
	}
	return h.share.joined.Load()
}
