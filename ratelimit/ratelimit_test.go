package ratelimit_test

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fingraph/fingraph/ratelimit"
)

func TestKeyedBucketsAreIndependent(t *testing.T) {
	l := ratelimit.New(0.001, 3) // refills far slower than the test runs
	for i := range 3 {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("call %d within the burst refused", i+1)
		}
	}
	ok, wait := l.Allow("a")
	if ok || wait <= 0 {
		t.Errorf("past the burst: allowed %v, wait %s", ok, wait)
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Error("another key shares the first one's bucket")
	}
}

func TestTakeCountsOnlyAttemptsThatCount(t *testing.T) {
	l := ratelimit.New(0.001, 2)
	for i := range 10 {
		ok, _, done := l.Take("a")
		if !ok {
			t.Fatalf("attempt %d refused although no earlier one counted", i+1)
		}
		done(false)
	}
	for range 2 {
		ok, _, done := l.Take("a")
		if !ok {
			t.Fatal("a counted attempt within the burst refused")
		}
		done(true)
		done(true) // a second end counts nothing more
	}
	ok, wait, done := l.Take("a")
	if ok || wait <= 0 {
		t.Fatalf("past the burst: allowed %v, wait %s", ok, wait)
	}
	done(false) // nothing was claimed: nothing is freed
	if ok, _, _ := l.Take("a"); ok {
		t.Error("ending a refused attempt freed a token")
	}
}

// Attempts in flight claim the bucket's tokens: no more run at once than it
// holds, and Allow does not take a claimed token.
func TestAttemptsInFlightClaimTheirTokens(t *testing.T) {
	l := ratelimit.New(0.001, 2)
	_, _, a := l.Take("k")
	_, _, b := l.Take("k")
	if ok, wait, _ := l.Take("k"); ok || wait <= 0 {
		t.Fatalf("a third attempt at once: allowed %v, wait %s", ok, wait)
	}
	if ok, _ := l.Allow("k"); ok {
		t.Fatal("Allow took a token claimed by an attempt in flight")
	}
	a(true)
	if ok, _, _ := l.Take("k"); ok {
		t.Fatal("a counted attempt's token is still there")
	}
	b(false)
	if ok, _ := l.Allow("k"); !ok {
		t.Fatal("an attempt that did not count kept its token")
	}
}

// An attempt refused while others run must not change what the others'
// ends give: with reservations cancelled to refund them, the refusal's
// cancelled reservation left the limiter's last event in the future, and
// each later refund gave back almost nothing, so an address once refused
// stayed refused though no attempt failed.
func TestARefusalDoesNotSpoilTheAttemptsInFlight(t *testing.T) {
	l := ratelimit.New(0.001, 2)
	_, _, a := l.Take("k")
	_, _, b := l.Take("k")
	if ok, _, _ := l.Take("k"); ok {
		t.Fatal("a third attempt at once allowed")
	}
	a(false)
	b(false)
	for i := range 2 {
		if ok, _, _ := l.Take("k"); !ok {
			t.Fatalf("attempt %d refused after both in flight ended without counting", i+1)
		}
	}
}

// Attempts that overlap and all turn out not to count must never add up to
// a refusal, however many there are: an office of people signing in at once
// from one address is not an attack.
func TestOverlappingRefundedAttemptsNeverDrainTheBucket(t *testing.T) {
	// A refill far slower than the attempts' throughput, so that nothing
	// lost when an attempt ends would be made up by the clock before the
	// test ends.
	const workers, each = 16, 100
	l := ratelimit.New(0.001, 20)
	var refused atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				ok, _, done := l.Take("office")
				if !ok {
					refused.Add(1)
					continue
				}
				time.Sleep(time.Duration(rand.IntN(4000)) * time.Microsecond) // the attempt runs
				done(false)
			}
		}()
	}
	wg.Wait()
	if n := refused.Load(); n > 0 {
		t.Errorf("%d of %d attempts refused although none counted", n, workers*each)
	}
}
