package ratelimit_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fingraph/fingraph/ratelimit"
)

// twoReplicas returns two shared limiters on one JetStream bucket, each
// with a connection of its own, as two gateway replicas have.
func twoReplicas(t *testing.T, perSecond float64, burst int) (a, b *ratelimit.Shared) {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS did not start")
	}
	replica := func() *ratelimit.Shared {
		nc, err := nats.Connect(ns.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		kv, err := js.CreateOrUpdateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: ratelimit.Bucket, TTL: ratelimit.BucketTTL})
		if err != nil {
			t.Fatal(err)
		}
		return ratelimit.NewShared(kv, "test", perSecond, burst)
	}
	return replica(), replica()
}

// Two replicas allow what one does: counted attempts on either take from
// one bucket, and the one past the burst is refused wherever it lands.
func TestSharedBucketsHoldAcrossReplicas(t *testing.T) {
	a, b := twoReplicas(t, 0.001, 3)
	for i, l := range []*ratelimit.Shared{a, b, a} {
		ok, _, done := l.Take("acct")
		if !ok {
			t.Fatalf("counted attempt %d within the burst refused", i+1)
		}
		done(true)
	}
	if ok, wait, _ := b.Take("acct"); ok || wait <= 0 {
		t.Fatalf("the fourth counted attempt, on the other replica: allowed %v, wait %s", ok, wait)
	}
	if ok, _ := b.Allow("acct"); ok {
		t.Fatal("Allow on the other replica took a token the first one's attempts used")
	}
	if ok, _ := a.Allow("another"); !ok {
		t.Error("another key shares the first one's bucket")
	}
}

// Attempts in flight on different replicas claim the same tokens, and a
// refusal meanwhile spoils nothing: once they end without counting, the
// bucket is whole again.
func TestSharedAttemptsInFlightClaimAcrossReplicas(t *testing.T) {
	a, b := twoReplicas(t, 0.001, 2)
	_, _, endA := a.Take("k")
	_, _, endB := b.Take("k")
	if ok, wait, _ := a.Take("k"); ok || wait <= 0 {
		t.Fatalf("a third attempt at once: allowed %v, wait %s", ok, wait)
	}
	if ok, _ := b.Allow("k"); ok {
		t.Fatal("Allow took a token claimed by an attempt in flight on the other replica")
	}
	endA(false)
	endB(false)
	endB(true) // a second end counts nothing more
	for i, l := range []*ratelimit.Shared{b, a} {
		ok, _, done := l.Take("k")
		if !ok {
			t.Fatalf("attempt %d refused after both in flight ended without counting", i+1)
		}
		defer done(false)
	}
}

// refundedAttempts runs workers goroutines, alternating between a and b,
// each taking and refunding each attempts on one key, and returns how many
// were refused.
func refundedAttempts(a, b *ratelimit.Shared, workers, each int) int64 {
	var refused atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		l := a
		if w%2 == 1 {
			l = b
		}
		wg.Go(func() {
			for range each {
				ok, _, done := l.Take("office")
				if !ok {
					refused.Add(1)
					continue
				}
				done(false)
			}
		})
	}
	wg.Wait()
	return refused.Load()
}

// Attempts that overlap across replicas and all turn out not to count
// never add up to a refusal.
func TestSharedOverlappingRefundedAttemptsNeverDrainTheBucket(t *testing.T) {
	const workers, each = 8, 20
	a, b := twoReplicas(t, 0.001, workers)
	if n := refundedAttempts(a, b, workers, each); n > 0 {
		t.Errorf("%d of %d attempts refused although none counted", n, workers*each)
	}
}

// Many attempts of one key at once all write its one entry: every end of
// a claim must land however contended, or the claims left behind hold
// tokens until they expire and attempts that never failed are refused.
func TestSharedClaimsAreEndedUnderContention(t *testing.T) {
	const workers, each = 32, 10
	a, b := twoReplicas(t, 0.001, workers)
	if n := refundedAttempts(a, b, workers, each); n > 0 {
		t.Errorf("%d of %d attempts refused although none counted", n, workers*each)
	}
	// No claim is left: the whole burst is there for attempts that count.
	for i := range workers {
		if ok, _ := a.Allow("office"); !ok {
			t.Fatalf("token %d of %d refused: claims were left behind", i+1, workers)
		}
	}
}

// liveKeys counts the keys of the shared bucket (deleted ones are gone).
func liveKeys(t *testing.T, kv jetstream.KeyValue) int {
	t.Helper()
	lister, err := kv.ListKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range lister.Keys() {
		n++
	}
	return n
}

// Shared keys are bounded in number whatever the number of addresses: a
// bucket full again (an attempt that did not count) is deleted, and one
// replica creates at most MaxNewKeysPerMinute keys a minute; past it a
// key is limited by the replica's own bucket, still limited.
func TestSharedKeysAreBoundedInNumber(t *testing.T) {
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS did not start")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	kv, err := js.CreateOrUpdateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: ratelimit.Bucket, TTL: ratelimit.BucketTTL})
	if err != nil {
		t.Fatal(err)
	}
	l := ratelimit.NewShared(kv, "test", 0.001, 2)

	// Attempts that do not count leave no key.
	for i := range 100 {
		ok, _, done := l.Take(fmt.Sprint("ok", i))
		if !ok {
			t.Fatal("a first attempt refused")
		}
		done(false)
	}
	if n := liveKeys(t, kv); n != 0 {
		t.Errorf("%d keys after 100 attempts that did not count, want 0", n)
	}

	// Failures from 2,000 addresses: at most MaxNewKeysPerMinute keys.
	for i := range 2 * ratelimit.MaxNewKeysPerMinute {
		_, _, done := l.Take(fmt.Sprint("addr", i))
		done(true)
	}
	if n := liveKeys(t, kv); n > ratelimit.MaxNewKeysPerMinute {
		t.Errorf("%d keys after failures from %d addresses, want at most %d", n, 2*ratelimit.MaxNewKeysPerMinute, ratelimit.MaxNewKeysPerMinute)
	}
	// A key past the cap is still limited, by this replica's bucket.
	last := "addr-over-the-cap"
	for range 2 {
		_, _, done := l.Take(last)
		done(true)
	}
	if ok, _, _ := l.Take(last); ok {
		t.Error("a key past the cap of new keys is not limited")
	}
}
