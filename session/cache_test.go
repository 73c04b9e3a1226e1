package session_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/session"
)

// replicaKV is one replica's view of the shared sessions bucket: it counts
// the bucket reads, and can hold back the watch's events (hold/release) to
// open the window between a write on another replica and this replica's
// watch delivering it.
type replicaKV struct {
	jetstream.KeyValue
	gets    atomic.Int64
	updates atomic.Int64
	gate    chan struct{} // closed: events flow
	held    atomic.Bool
}

func (k *replicaKV) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	k.gets.Add(1)
	return k.KeyValue.Get(ctx, key)
}

func (k *replicaKV) Update(ctx context.Context, key string, value []byte, last uint64) (uint64, error) {
	k.updates.Add(1)
	return k.KeyValue.Update(ctx, key, value, last)
}

func (k *replicaKV) WatchAll(ctx context.Context, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error) {
	w, err := k.KeyValue.WatchAll(ctx, opts...)
	if err != nil {
		return nil, err
	}
	g := &gatedWatcher{KeyWatcher: w, out: make(chan jetstream.KeyValueEntry)}
	go func() {
		defer close(g.out)
		for e := range w.Updates() {
			for k.held.Load() {
				<-k.gate
			}
			g.out <- e
		}
	}()
	return g, nil
}

// hold stops the watch's events after the one in flight; release lets
// them through again.
func (k *replicaKV) hold()    { k.gate = make(chan struct{}); k.held.Store(true) }
func (k *replicaKV) release() { k.held.Store(false); close(k.gate) }

type gatedWatcher struct {
	jetstream.KeyWatcher
	out chan jetstream.KeyValueEntry
}

func (g *gatedWatcher) Updates() <-chan jetstream.KeyValueEntry { return g.out }

// twoStores opens two stores over one bucket, as two replicas, each with
// its watch running.
func twoStores(t *testing.T) (a, b *session.JetStreamStore, akv, bkv *replicaKV) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	t.Cleanup(cancel)
	kv, err := e.KeyValue(ctx, session.Bucket, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	akv, bkv = &replicaKV{KeyValue: kv}, &replicaKV{KeyValue: kv}
	a, b = session.NewJetStreamStore(akv, time.Hour), session.NewJetStreamStore(bkv, time.Hour)
	for _, s := range []*session.JetStreamStore{a, b} {
		if err := s.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return a, b, akv, bkv
}

// settle returns once b's watch has delivered every write a made before:
// the watch delivers in order, so it waits for the end of a session a
// creates and deletes for the purpose.
func settle(t *testing.T, a, b *session.JetStreamStore) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tok, err := a.Create(ctx, &session.Session{Kind: session.APIClient})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{}, 1)
	if err := b.WatchEnded(ctx, func(key string) {
		if key == session.Key(tok) {
			ended <- struct{}{}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, tok); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the other replica's watch delivered nothing")
	}
}

func TestSessionReadsComeFromTheCache(t *testing.T) {
	a, b, akv, bkv := twoStores(t)
	ctx := context.Background()
	tok, err := a.Create(ctx, &session.Session{Kind: session.APIClient, BankingToken: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, a, b)
	for range 50 {
		if _, err := a.Get(ctx, tok); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Get(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	if n := akv.gets.Load(); n != 0 {
		t.Errorf("the replica that created the session read the bucket %d times, want 0", n)
	}
	if n := bkv.gets.Load(); n != 1 {
		t.Errorf("the other replica read the bucket %d times for 50 reads, want 1", n)
	}
	// A read hands out a copy: changing it changes nobody else's session.
	s, _ := a.Get(ctx, tok)
	s.BankingToken = "changed"
	if s2, _ := a.Get(ctx, tok); s2.BankingToken != "t1" {
		t.Errorf("a caller's change reached the cache: %q", s2.BankingToken.Reveal())
	}
}

// A sign-out takes effect at once on the replica that served it, without
// waiting for its own watch.
func TestSignOutIsImmediateOnTheSameReplica(t *testing.T) {
	a, _, akv, _ := twoStores(t)
	ctx := context.Background()
	tok, err := a.Create(ctx, &session.Session{Kind: session.APIClient})
	if err != nil {
		t.Fatal(err)
	}
	akv.hold()
	defer akv.release()
	if err := a.Delete(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, tok); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("read right after sign-out: %v, want ErrNotFound", err)
	}
}

// A sign-out on one replica leaves the other's cache before that replica's
// ended-session callbacks (which close its sockets) run.
func TestSignOutOnAnotherReplicaLeavesTheCacheBeforeSocketsClose(t *testing.T) {
	a, b, _, _ := twoStores(t)
	ctx := context.Background()
	tok, err := a.Create(ctx, &session.Session{Kind: session.APIClient})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, tok); err != nil {
		t.Fatal(err)
	}
	seen := make(chan error, 1)
	if err := b.WatchEnded(ctx, func(key string) {
		if key == session.Key(tok) {
			_, err := b.Get(ctx, tok)
			seen <- err
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, tok); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-seen:
		if !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("the other replica still served the ended session to its callback: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the other replica never heard of the sign-out")
	}
}

// While a replica's watch lags behind a token another replica wrote back,
// its reads may return the older token (which the upstream still accepts
// for its grace period), but a write-back never replaces the newer token:
// the compare-and-set conflict sends Update to the bucket.
func TestUpdateOnAStaleCacheReadsTheBucket(t *testing.T) {
	a, b, _, bkv := twoStores(t)
	ctx := context.Background()
	t0 := time.Now().UTC()
	tok, err := a.Create(ctx, &session.Session{Kind: session.APIClient, BankingToken: "t1", BankingTokenAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, a, b)
	if _, err := b.Get(ctx, tok); err != nil {
		t.Fatal(err)
	}
	bkv.hold()
	if _, err := a.Update(ctx, tok, func(s *session.Session) error {
		s.BankingToken, s.BankingTokenAt = "t2", t0.Add(time.Second)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var saw []string
	got, err := b.Update(ctx, tok, func(s *session.Session) error {
		saw = append(saw, s.BankingToken.Reveal())
		s.CorporationID = "c1"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.BankingToken != "t2" || len(saw) != 2 || saw[0] != "t1" || saw[1] != "t2" {
		t.Fatalf("update over a stale cache: saw %v, stored token %q", saw, got.BankingToken.Reveal())
	}
	bkv.release()
	if s, err := b.Get(ctx, tok); err != nil || s.BankingToken != "t2" || s.CorporationID != "c1" {
		t.Fatalf("replica B after its own write: %+v, %v", s, err)
	}
	// A's watch brings B's write to A.
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := a.Get(ctx, tok)
		if err == nil && s.CorporationID == "c1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica A never saw B's write: %+v, %v", s, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The cache is bounded; sessions it dropped are read from the bucket.
func TestTheCacheIsBounded(t *testing.T) {
	a, _, akv, _ := twoStores(t)
	session.SetCacheLimit(a, 10)
	ctx := context.Background()
	var toks []string
	for range 50 {
		tok, err := a.Create(ctx, &session.Session{Kind: session.APIClient})
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok)
	}
	if n := session.CacheLen(a); n > 10 {
		t.Fatalf("%d sessions cached, want at most 10", n)
	}
	for _, tok := range toks {
		if _, err := a.Get(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	if n := akv.gets.Load(); n < 40 {
		t.Errorf("%d bucket reads for 50 sessions with 10 cached, want at least 40", n)
	}
}

// Expired sessions leave the cache a few at each put, never in one walk of
// the whole map under its lock: no put drops more than SweepPerPut of them,
// and once as many new sessions have been put as had expired, few of the
// expired are left.
func TestExpiredSessionsLeaveTheCacheAFewAtEachPut(t *testing.T) {
	a, _, _, _ := twoStores(t)
	var mu sync.Mutex
	clock := time.Now()
	session.SetNow(a, func() time.Time { mu.Lock(); defer mu.Unlock(); return clock })
	ctx := context.Background()
	create := func() {
		t.Helper()
		if _, err := a.Create(ctx, &session.Session{Kind: session.APIClient}); err != nil {
			t.Fatal(err)
		}
	}
	const n = 1100
	for range n {
		create()
	}
	if got := session.CacheLen(a); got != n {
		t.Fatalf("%d sessions cached before any expired, want %d", got, n)
	}
	mu.Lock()
	clock = clock.Add(2 * time.Hour) // past every session's ExpiresAt (the TTL is an hour)
	mu.Unlock()
	prev := n
	for i := range n {
		create()
		got := session.CacheLen(a)
		if got < prev+1-session.SweepPerPut {
			t.Fatalf("put %d took the cache from %d to %d sessions: more than %d expired ones dropped at once",
				i, prev, got, session.SweepPerPut)
		}
		prev = got
	}
	if expired := prev - n; expired > n/4 {
		t.Fatalf("%d of %d expired sessions still cached after %d puts", expired, n, n)
	}
}

// One replica's concurrent updates of one session (the calls of one
// request ending their bursts together) queue instead of racing: each
// compare-and-set starts from the revision the one before it wrote, so none
// fails and none has to read the bucket, and every update lands.
func TestConcurrentUpdatesOfOneSessionOnAReplicaDoNotConflict(t *testing.T) {
	a, _, akv, _ := twoStores(t)
	ctx := context.Background()
	tok, err := a.Create(ctx, &session.Session{Kind: session.Person})
	if err != nil {
		t.Fatal(err)
	}
	akv.gets.Store(0)
	akv.updates.Store(0)
	const n = 12
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := a.Update(ctx, tok, func(s *session.Session) error {
				s.BankingCandidates = append(slices.Clone(s.BankingCandidates), session.Secret(fmt.Sprint("t", i)))
				return nil
			}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	s, err := a.Get(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.BankingCandidates) != n {
		t.Errorf("%d of %d updates landed", len(s.BankingCandidates), n)
	}
	if u, g := akv.updates.Load(), akv.gets.Load(); u != n || g != 0 {
		t.Errorf("%d updates: %d compare-and-sets and %d bucket reads, want %d and 0", n, u, g, n)
	}
}

// A session a request holds is its own: an update of the same session (a
// proof recording its grants, a token written back) never changes the
// map or the slice of a copy read before. They were shared with the
// cache's entry, and a request iterating its grants raced the write.
func TestAnUpdateLeavesTheSessionsAlreadyReadAsTheyWere(t *testing.T) {
	a, _, _, _ := twoStores(t)
	ctx := context.Background()
	tok, err := a.Create(ctx, &session.Session{Kind: session.APIClient, Grants: map[string]uint64{"key:k1": 1},
		BankingCandidates: make([]session.Secret, 1, 4)})
	if err != nil {
		t.Fatal(err)
	}
	held, err := a.Get(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	held2, err := a.Get(ctx, tok) // served by the cache, as a request's read is
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Update(ctx, tok, func(s *session.Session) error {
		s.Grants["key:k1"] = 2
		s.BankingCandidates[0] = "written"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, h := range []*session.Session{held, held2} {
		if h.Grants["key:k1"] != 1 || h.BankingCandidates[0] != "" {
			t.Fatalf("a session read before the update changed under its reader: grants %v, candidates %d", h.Grants, len(h.BankingCandidates))
		}
	}
	got, err := a.Get(ctx, tok)
	if err != nil || got.Grants["key:k1"] != 2 {
		t.Fatalf("the update itself: %+v, %v", got, err)
	}
}
