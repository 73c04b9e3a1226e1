// Package livequery keeps @live queries true. A live query answers at once,
// then watches the Nodes of its last answer: when the change feed names one
// of them, the query runs again as its caller, with a fresh read cache, and
// the new answer is sent unless it equals the last. Re-executions of one
// query are coalesced to at most one per interval, and live queries are
// bounded per session and per client address.
//
// The engine knows no transport and no upstream: the change feed is an
// interface (Changes), and a run of the query is a function (Exec) that the
// HTTP edge (package gqlhttp) supplies.
package livequery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Changes is the change feed, seen with a caller's scope.
type Changes interface {
	// Follow calls notify with the subject (a Node's global id) of every
	// change the caller of ctx may see, from the moment it returns until
	// ctx ends. notify must not block; it may run on any goroutine. When
	// the feed ends before ctx does, ended is called with why. An error
	// refuses the caller (a client error, with its code).
	Follow(ctx context.Context, notify func(subject string), ended func(error)) error
}

// Exec runs the query once, as its caller, and returns its whole answer.
type Exec func(ctx context.Context) *graphql.Response

// Config configures an Engine. Zero fields take the Default values.
type Config struct {
	Changes Changes
	// Interval is the least time between two runs of one live query: a
	// burst of changes within it costs one run.
	Interval time.Duration
	// MaxPerSession and MaxPerAddress bound the live queries of one
	// session and of one client address on this replica.
	MaxPerSession, MaxPerAddress int
	// MaxWatched bounds the Node ids one query watches; Nodes beyond it
	// in an answer are not watched.
	MaxWatched int
}

// Defaults of Config.
const (
	DefaultInterval      = 200 * time.Millisecond
	DefaultMaxPerSession = 50
	DefaultMaxPerAddress = 500
	DefaultMaxWatched    = 10000
)

// ErrTooMany refuses a live query over a cap.
var ErrTooMany = errors.New("livequery: too many live queries")

// ErrEnded ends a live query whose change feed ended.
var ErrEnded = errors.New("livequery: the change feed ended")

// Caller names whose live query it is, for the caps.
type Caller struct {
	Session, Address string
}

// Engine runs live queries.
type Engine struct {
	cfg Config

	mu         sync.Mutex
	perSession map[string]int
	perAddress map[string]int

	active  atomic.Int64
	runs    atomic.Uint64
	answers atomic.Uint64
}

// New returns an engine over cfg.Changes.
func New(cfg Config) *Engine {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.MaxPerSession <= 0 {
		cfg.MaxPerSession = DefaultMaxPerSession
	}
	if cfg.MaxPerAddress <= 0 {
		cfg.MaxPerAddress = DefaultMaxPerAddress
	}
	if cfg.MaxWatched <= 0 {
		cfg.MaxWatched = DefaultMaxWatched
	}
	return &Engine{cfg: cfg, perSession: map[string]int{}, perAddress: map[string]int{}}
}

// Stats are an engine's counters.
type Stats struct {
	// Active is the live queries running now.
	Active int64
	// Runs counts executions of live queries, first answers included.
	Runs uint64
	// Answers counts the answers sent: runs whose answer differed from
	// the last one, first answers included.
	Answers uint64
}

// Stats reads the engine's counters.
func (e *Engine) Stats() Stats {
	return Stats{Active: e.active.Load(), Runs: e.runs.Load(), Answers: e.answers.Load()}
}

// Live reports whether op asks to stay live: @live, with if not false.
func Live(op *ast.OperationDefinition, vars map[string]any) bool {
	if op == nil || op.Operation != ast.Query {
		return false
	}
	d := op.Directives.ForName("live")
	if d == nil {
		return false
	}
	if a := d.Arguments.ForName("if"); a != nil {
		v, err := a.Value.Value(vars)
		if b, ok := v.(bool); err == nil && ok && !b {
			return false
		}
	}
	return true
}

// Start begins the live query of caller, which lives until ctx ends. The
// returned function gives its answers, one per call: the first at once,
// each later one when a change made it differ; nil when the query ends
// (ctx ended, or the change feed did: then ended says why).
func (e *Engine) Start(ctx context.Context, caller Caller, exec Exec) (next func(context.Context) *graphql.Response, ended func() error, err error) {
	if !e.admit(caller) {
		return nil, nil, ErrTooMany
	}
	q := &query{e: e, exec: exec, dirty: make(chan struct{}, 1), done: make(chan struct{})}
	q.running.Store(true) // changes before the first answer is known count
	e.active.Add(1)
	stop := context.AfterFunc(ctx, func() {
		e.active.Add(-1)
		e.leave(caller)
	})
	if err := e.cfg.Changes.Follow(ctx, q.notify, q.end); err != nil {
		if stop() {
			e.active.Add(-1)
			e.leave(caller)
		}
		return nil, nil, err
	}
	return q.next, q.err, nil
}

func (e *Engine) admit(c Caller) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	// A caller without a session is bounded by its address alone: one
	// shared "" entry would let a few such callers refuse all the others.
	if (c.Session != "" && e.perSession[c.Session] >= e.cfg.MaxPerSession) || e.perAddress[c.Address] >= e.cfg.MaxPerAddress {
		return false
	}
	if c.Session != "" {
		e.perSession[c.Session]++
	}
	e.perAddress[c.Address]++
	return true
}

func (e *Engine) leave(c Caller) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c.Session != "" {
		if e.perSession[c.Session]--; e.perSession[c.Session] <= 0 {
			delete(e.perSession, c.Session)
		}
	}
	if e.perAddress[c.Address]--; e.perAddress[c.Address] <= 0 {
		delete(e.perAddress, c.Address)
	}
}

// query is one live query.
type query struct {
	e    *Engine
	exec Exec

	// watched is the set of Node ids of the last answer; running is set
	// while the query runs, when the ids of the answer to come are not
	// known yet, so that every change then marks it dirty.
	watched atomic.Pointer[map[string]struct{}]
	running atomic.Bool
	dirty   chan struct{}

	done     chan struct{}
	endOnce  sync.Once
	endErr   error
	started  bool
	finished bool
	lastRun  time.Time
	last     []byte
}

// notify is the change feed's callback: quick, never blocking.
func (q *query) notify(subject string) {
	if !q.running.Load() {
		w := q.watched.Load()
		if w == nil {
			return
		}
		if _, ok := (*w)[subject]; !ok {
			return
		}
	}
	select {
	case q.dirty <- struct{}{}:
	default:
	}
}

func (q *query) end(err error) {
	q.endOnce.Do(func() {
		q.endErr = err
		close(q.done)
	})
}

func (q *query) err() error {
	select {
	case <-q.done:
		return q.endErr
	default:
		return nil
	}
}

func (q *query) next(ctx context.Context) *graphql.Response {
	if q.finished {
		return nil
	}
	if !q.started {
		q.started = true
		resp := q.run(ctx)
		if resp == nil || len(resp.Data) == 0 || string(resp.Data) == "null" {
			// Refused or failed whole: nothing to keep true.
			q.finished = true
		}
		return resp
	}
	for {
		select {
		case <-q.dirty:
		case <-ctx.Done():
			return q.finish()
		case <-q.done:
			return q.finish()
		}
		if wait := time.Until(q.lastRun.Add(q.e.cfg.Interval)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return q.finish()
			case <-q.done:
				t.Stop()
				return q.finish()
			}
		}
		// The changes of the wait are all answered by this run.
		select {
		case <-q.dirty:
		default:
		}
		if resp := q.run(ctx); resp != nil {
			return resp
		}
		if ctx.Err() != nil {
			return q.finish()
		}
	}
}

func (q *query) finish() *graphql.Response {
	q.finished = true
	return nil
}

// run executes the query, records the Nodes it watches next and returns
// its answer, or nil when the answer equals the last one sent.
func (q *query) run(ctx context.Context) *graphql.Response {
	q.running.Store(true)
	w := &watch{max: q.e.cfg.MaxWatched, ids: map[string]struct{}{}}
	q.e.runs.Add(1)
	resp := q.exec(context.WithValue(ctx, watchKey{}, w))
	q.lastRun = time.Now()
	w.mu.Lock()
	ids := w.ids
	w.mu.Unlock()
	q.watched.Store(&ids)
	q.running.Store(false)
	if resp == nil {
		return nil
	}
	key := answerKey(resp)
	if q.last != nil && bytes.Equal(key, q.last) {
		return nil
	}
	q.last = key
	q.e.answers.Add(1)
	return resp
}

// answerKey is what two answers are compared by: data and errors.
func answerKey(resp *graphql.Response) []byte {
	errs, _ := json.Marshal(resp.Errors)
	key := make([]byte, 0, len(resp.Data)+len(errs)+1)
	key = append(append(append(key, resp.Data...), 0), errs...)
	return key
}

// watch collects the Node ids of one run's answer.
type watch struct {
	mu  sync.Mutex
	max int
	ids map[string]struct{}
}

type watchKey struct{}

// node is what a Node's value has: its global id.
type node interface{ GetID() string }

func (w *watch) add(v any) {
	if v == nil {
		return
	}
	if n, ok := v.(node); ok {
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
			return
		}
		w.put(n.GetID())
		return
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return
	}
	for i := range rv.Len() {
		if el := rv.Index(i); el.CanInterface() {
			if el.Kind() == reflect.Pointer && el.IsNil() {
				continue
			}
			if n, ok := el.Interface().(node); ok {
				w.put(n.GetID())
			}
		}
	}
}

func (w *watch) put(id string) {
	if id == "" {
		return
	}
	w.mu.Lock()
	if len(w.ids) < w.max {
		w.ids[id] = struct{}{}
	}
	w.mu.Unlock()
}

// WatchFields wraps an operation's field middleware so that every Node a
// field of a live query's run resolves to (alone or in a list) is watched.
// Install it on the operation's context (ResolverMiddleware) of live
// queries only: other operations pay nothing for it.
func WatchFields(inner graphql.FieldMiddleware) graphql.FieldMiddleware {
	return func(ctx context.Context, next graphql.Resolver) (any, error) {
		return inner(ctx, func(ctx context.Context) (any, error) {
			res, err := next(ctx)
			if w, ok := ctx.Value(watchKey{}).(*watch); ok {
				w.add(res)
			}
			return res, err
		})
	}
}
