package session

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The session cache.
//
// Every request reads its session, and a banking call reads it again (the
// newest token) before writing the refreshed token back. A JetStream KV get
// for each read cost the client and the embedded server more CPU than the
// rest of the session layer together, so a replica keeps the sessions it
// has read or written in memory and serves reads from there.
//
// The cache stays current through one watch on the bucket per replica (the
// same watch that ends websockets of ended sessions, see WatchEnded):
//
//   - A delete or purge (sign-out, revocation, replacement, expiry) on any
//     replica removes the entry before the ended-session callbacks run, so
//     a socket closed for a sign-out is never followed by an operation that
//     still finds the session here (Handler.Recheck).
//   - A put with a newer revision replaces the entry (a token another
//     replica wrote back).
//   - Writes on this replica (Create, Update, Delete) change the cache
//     synchronously, before they return: a sign-out is effective on the
//     replica that served it at once, not when its own watch event comes
//     back. On other replicas it takes effect when the watch delivers it
//     (normally well under a millisecond), the same window in which their
//     sockets were already closed.
//   - A read that misses loads the entry from the bucket; if anything
//     touched the key while that read was under way (a watch event or a
//     local write), the loaded value may be older than what the cache saw,
//     so it is returned but not kept.
//   - A compare-and-set conflict in Update means the cache is behind; the
//     retry reads the bucket.
//
// The cache serves only while the watch is in place: before Run, or after
// the watch stops, every read goes to the bucket as before. Entries are
// dropped when their session expires: checked on read, and a few at each
// put (sweepPerPut), so no put ever scans the map under the lock.
type cache struct {
	startMu sync.Mutex // serialises starting the watch

	mu      sync.Mutex
	live    bool // the watch is in place: entries are kept current
	now     func() time.Time
	entries map[string]cached
	loads   map[string]*load
	ended   map[*endedFn]struct{}
	// limit bounds the entries; past it, arbitrary entries are dropped
	// (they are read from the bucket again when needed).
	limit int
}

type cached struct {
	sess Session
	rev  uint64
}

// load counts the bucket reads of one key under way, and whether the key
// changed during them.
type load struct {
	n       int
	changed bool
}

type endedFn struct{ fn func(key string) }

// sweepPerPut is how many entries each put examines for expiry. They are
// taken where Go's map iteration starts, a random place, so every put
// forgets expired sessions in proportion to their share of the map: with
// at most one new entry per put, expired entries settle below a
// 1/sweepPerPut share of it, and a put's sweep takes sweepPerPut steps
// whatever the map's size (BenchmarkCachePut). No put walks the whole map:
// the walk would hold the lock, and every session read of the replica would
// wait for it.
const sweepPerPut = 4

// cacheLimit bounds a replica's cached sessions, and so their memory.
const cacheLimit = 100_000

func (c *cache) init(now func() time.Time) {
	c.now = now
	c.entries = map[string]cached{}
	c.loads = map[string]*load{}
	c.ended = map[*endedFn]struct{}{}
	c.limit = cacheLimit
}

// get returns a copy of the cached session of key. fresh asks for the
// bucket instead (ok is false).
func (c *cache) get(key string, fresh bool) (*Session, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live || fresh {
		return nil, 0, false
	}
	e, ok := c.entries[key]
	if !ok {
		return nil, 0, false
	}
	s := e.sess
	return &s, e.rev, true
}

// loading registers a bucket read of key; done reports what it read (sess
// nil for nothing) and keeps it unless the key changed meanwhile.
func (c *cache) loading(key string) (done func(sess *Session, rev uint64)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live {
		return func(*Session, uint64) {}
	}
	l := c.loads[key]
	if l == nil {
		l = &load{}
		c.loads[key] = l
	}
	l.n++
	return func(sess *Session, rev uint64) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if sess != nil && c.live && !l.changed {
			c.putLocked(key, sess, rev)
		}
		if l.n--; l.n == 0 && c.loads[key] == l {
			delete(c.loads, key)
		}
	}
}

// put records a write of this replica.
func (c *cache) put(key string, sess *Session, rev uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.touchedLocked(key)
	if c.live {
		c.putLocked(key, sess, rev)
	}
}

// remove forgets key (a session ended or expired).
func (c *cache) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.touchedLocked(key)
	delete(c.entries, key)
}

func (c *cache) touchedLocked(key string) {
	if l := c.loads[key]; l != nil {
		l.changed = true
	}
}

// putLocked keeps a copy of sess unless the cache already has the same or
// a later revision.
func (c *cache) putLocked(key string, sess *Session, rev uint64) {
	if e, ok := c.entries[key]; ok && e.rev >= rev {
		return
	}
	c.entries[key] = cached{sess: *sess, rev: rev}
	now, n := c.now(), 0
	for k, e := range c.entries {
		if n++; n > sweepPerPut {
			break
		}
		if !now.Before(e.sess.ExpiresAt) {
			delete(c.entries, k)
		}
	}
	for k := range c.entries {
		if len(c.entries) <= c.limit {
			break
		}
		if k != key {
			delete(c.entries, k)
		}
	}
}

// apply brings the cache up to date with one watch event and returns the
// callbacks to run for an ended session.
func (c *cache) apply(e jetstream.KeyValueEntry) []*endedFn {
	key := e.Key()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.touchedLocked(key)
	switch e.Operation() {
	case jetstream.KeyValueDelete, jetstream.KeyValuePurge:
		delete(c.entries, key)
		fns := make([]*endedFn, 0, len(c.ended))
		for f := range c.ended {
			fns = append(fns, f)
		}
		return fns
	default:
		old, ok := c.entries[key]
		if !ok || old.rev >= e.Revision() {
			// Not a session this replica serves, or its own write.
			return nil
		}
		var sess Session
		if err := json.Unmarshal(e.Value(), &sess); err != nil {
			delete(c.entries, key)
			return nil
		}
		c.entries[key] = cached{sess: sess, rev: e.Revision()}
		return nil
	}
}

// stopped turns the cache off when the watch ends: without it the entries
// could go stale, so reads go back to the bucket.
func (c *cache) stopped() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live = false
	clear(c.entries)
	clear(c.loads)
}

// Run puts the watch on the bucket that keeps the session cache current
// and ends websockets of ended sessions (WatchEnded), and serves reads from
// the cache until ctx is done. It returns once the watch is in place.
// Calling it again while the watch runs does nothing.
func (s *JetStreamStore) Run(ctx context.Context) error {
	c := &s.cache
	c.startMu.Lock()
	defer c.startMu.Unlock()
	c.mu.Lock()
	running := c.live
	c.mu.Unlock()
	if running {
		return nil
	}
	w, err := s.kv.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.live = true
	c.mu.Unlock()
	go func() {
		defer c.stopped()
		defer func() { _ = w.Stop() }()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e == nil {
					continue
				}
				for _, f := range c.apply(e) {
					f.fn(e.Key())
				}
			}
		}
	}()
	return nil
}

// WatchEnded implements Ended with the store's watch on the bucket (started
// by Run, or here if it is not running): deletes and purges are sessions
// ending. fn runs after the session left the cache, on the watch's
// goroutine, so it must not block.
func (s *JetStreamStore) WatchEnded(ctx context.Context, fn func(key string)) error {
	if err := s.Run(ctx); err != nil {
		return err
	}
	f := &endedFn{fn: fn}
	c := &s.cache
	c.mu.Lock()
	c.ended[f] = struct{}{}
	c.mu.Unlock()
	context.AfterFunc(ctx, func() {
		c.mu.Lock()
		delete(c.ended, f)
		c.mu.Unlock()
	})
	return nil
}
