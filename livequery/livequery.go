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

// Caller names whose live query it is, for the caps, and with whom it may
// share its runs.
type Caller struct {
	Session, Address string
	// Share keys the live queries that run as one (see Start): the same
	// document, variables and scope, a scope being one principal's view
	// (never across principals who may see different things). "" shares
	// nothing.
	Share string
}

// Engine runs live queries.
type Engine struct {
	cfg Config

	mu         sync.Mutex
	perSession map[string]int
	perAddress map[string]int
	groups     map[string]*group

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
	return &Engine{cfg: cfg, perSession: map[string]int{}, perAddress: map[string]int{}, groups: map[string]*group{}}
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
//
// Live queries with the same Caller.Share key run as one (see group): one
// follower of the change feed and one re-run per change, coalesced, whose
// answer each of them sends unless it equals what that one sent last. Each
// first answer is its own run, so that a query sees what its caller wrote
// before it started.
func (e *Engine) Start(ctx context.Context, caller Caller, exec Exec) (next func(context.Context) *graphql.Response, ended func() error, err error) {
	if !e.admit(caller) {
		return nil, nil, ErrTooMany
	}
	g, err := e.join(ctx, caller.Share)
	if err != nil {
		e.leave(caller)
		return nil, nil, err
	}
	m := &member{g: g, exec: exec, ctx: ctx}
	g.add(m)
	e.active.Add(1)
	context.AfterFunc(ctx, func() {
		e.active.Add(-1)
		e.leave(caller)
		g.remove(m)
	})
	return m.next, g.err, nil
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

// join returns the running group of key, or starts one that follows the
// change feed with the scope of ctx. A group without a key ("") is never
// shared.
func (e *Engine) join(ctx context.Context, key string) (*group, error) {
	if key != "" {
		e.mu.Lock()
		g := e.groups[key]
		if g != nil && g.enter() {
			e.mu.Unlock()
			return g, nil
		}
		e.mu.Unlock()
	}
	g := &group{e: e, key: key, dirty: make(chan struct{}, 1), done: make(chan struct{}),
		changed: make(chan struct{}), members: map[*member]struct{}{}, entering: 1}
	// The group follows the feed and re-runs with the values of the
	// query that started it (its caller's session and scope, the same for
	// every query of its key), for as long as any of its queries lives.
	g.ctx, g.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if err := e.cfg.Changes.Follow(g.ctx, g.notify, g.end); err != nil {
		g.cancel()
		return nil, err
	}
	if key != "" {
		e.mu.Lock()
		if e.groups[key] == nil {
			e.groups[key] = g
		}
		e.mu.Unlock()
	}
	go g.loop()
	return g, nil
}

// group is the live queries of one Share key: one follower of the change
// feed, one runner.
type group struct {
	e      *Engine
	key    string
	ctx    context.Context
	cancel context.CancelFunc

	// watched is the set of Node ids of the last run's answer; running
	// counts the runs in flight, while the ids of the answers to come are
	// not known, so that every change then marks the group dirty.
	watched atomic.Pointer[map[string]struct{}]
	running atomic.Int32
	dirty   chan struct{}

	done    chan struct{}
	endOnce sync.Once
	endErr  error

	mu sync.Mutex
	// members are the queries of the group; entering counts those that
	// joined and are not yet added, so that the group is not ended under
	// them; closed is set once the group has ended or lost its last
	// query, after which nobody joins it.
	members  map[*member]struct{}
	entering int
	closed   bool
	// seq numbers the group's answers; answer is the last, key its
	// comparison key, and changed is closed when a newer one comes.
	seq     uint64
	answer  *graphql.Response
	ansKey  []byte
	changed chan struct{}
	// runner is the query whose run (and context) re-runs use.
	runner *member
	// lastRun is when the last run ended, first answers' included: the
	// interval counts from it.
	lastRun time.Time
}

// member is one live query of a group.
type member struct {
	g        *group
	exec     Exec
	ctx      context.Context
	started  bool
	finished bool
	seen     uint64
	last     []byte
}

// enter counts a query about to join, unless the group is closing.
func (g *group) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.entering++
	return true
}

func (g *group) add(m *member) {
	g.mu.Lock()
	g.entering--
	g.members[m] = struct{}{}
	m.seen = g.seq
	if g.runner == nil {
		g.runner = m
	}
	g.mu.Unlock()
}

// remove lets m go; the last query to leave ends the group.
func (g *group) remove(m *member) {
	g.mu.Lock()
	delete(g.members, m)
	if g.runner == m {
		// Re-runs go on as another of the group's queries.
		g.runner = nil
		for o := range g.members {
			g.runner = o
			break
		}
	}
	last := len(g.members) == 0 && g.entering == 0 && !g.closed
	if last {
		g.closed = true
	}
	g.mu.Unlock()
	if last {
		g.close()
	}
}

// close ends the group: it follows the feed no more, runs no more, and
// nobody joins it.
func (g *group) close() {
	g.cancel()
	if g.key == "" {
		return
	}
	g.e.mu.Lock()
	if g.e.groups[g.key] == g {
		delete(g.e.groups, g.key)
	}
	g.e.mu.Unlock()
}

// notify is the change feed's callback: quick, never blocking.
func (g *group) notify(subject string) {
	if g.running.Load() == 0 {
		w := g.watched.Load()
		if w == nil {
			return
		}
		if _, ok := (*w)[subject]; !ok {
			return
		}
	}
	select {
	case g.dirty <- struct{}{}:
	default:
	}
}

func (g *group) end(err error) {
	g.endOnce.Do(func() {
		g.endErr = err
		close(g.done)
		g.mu.Lock()
		g.closed = true
		g.mu.Unlock()
		g.close()
	})
}

func (g *group) err() error {
	select {
	case <-g.done:
		return g.endErr
	default:
		return nil
	}
}

// loop re-runs the group's query after changes, at most once per
// interval, and publishes each answer to its queries.
func (g *group) loop() {
	for {
		select {
		case <-g.dirty:
		case <-g.ctx.Done():
			return
		}
		g.mu.Lock()
		lastRun := g.lastRun
		g.mu.Unlock()
		if wait := time.Until(lastRun.Add(g.e.cfg.Interval)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-g.ctx.Done():
				t.Stop()
				return
			}
		}
		// The changes of the wait are all answered by this run.
		select {
		case <-g.dirty:
		default:
		}
		g.mu.Lock()
		runner := g.runner
		g.mu.Unlock()
		if runner == nil {
			continue
		}
		// A run outlives the query whose run it is, not the group.
		rctx, cancel := context.WithCancel(context.WithoutCancel(runner.ctx))
		stop := context.AfterFunc(g.ctx, cancel)
		resp := g.run(rctx, runner.exec)
		stop()
		cancel()
		if resp == nil || g.ctx.Err() != nil {
			continue
		}
		key := answerKey(resp)
		g.mu.Lock()
		g.seq++
		g.answer, g.ansKey = resp, key
		close(g.changed)
		g.changed = make(chan struct{})
		g.mu.Unlock()
	}
}

// run executes the query once and records the Nodes the group watches
// next.
func (g *group) run(ctx context.Context, exec Exec) *graphql.Response {
	g.running.Add(1)
	w := &watch{max: g.e.cfg.MaxWatched, ids: map[string]struct{}{}}
	g.e.runs.Add(1)
	resp := exec(context.WithValue(ctx, watchKey{}, w))
	g.mu.Lock()
	g.lastRun = time.Now()
	g.mu.Unlock()
	w.mu.Lock()
	ids := w.ids
	w.mu.Unlock()
	g.watched.Store(&ids)
	g.running.Add(-1)
	return resp
}

func (m *member) next(ctx context.Context) *graphql.Response {
	g := m.g
	if m.finished {
		return nil
	}
	if !m.started {
		m.started = true
		// Changes from now on are answered by the group's runs.
		g.running.Add(1)
		resp := g.run(ctx, m.exec)
		g.running.Add(-1)
		if resp == nil || len(resp.Data) == 0 || string(resp.Data) == "null" {
			// Refused or failed whole: nothing to keep true.
			m.finished = true
			return resp
		}
		m.last = answerKey(resp)
		g.e.answers.Add(1)
		return resp
	}
	for {
		g.mu.Lock()
		seq, resp, key, changed := g.seq, g.answer, g.ansKey, g.changed
		g.mu.Unlock()
		if seq > m.seen {
			m.seen = seq
			if !bytes.Equal(key, m.last) {
				m.last = key
				g.e.answers.Add(1)
				return resp
			}
			continue
		}
		select {
		case <-changed:
		case <-ctx.Done():
			m.finished = true
			return nil
		case <-g.done:
			m.finished = true
			return nil
		}
	}
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
