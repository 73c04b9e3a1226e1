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

func TestTakeRefundsAnAttemptThatDidNotCount(t *testing.T) {
	l := ratelimit.New(0.001, 2)
	for i := range 10 {
		ok, _, refund := l.Take("a")
		if !ok {
			t.Fatalf("attempt %d refused although every earlier one was refunded", i+1)
		}
		refund()
	}
	for range 2 {
		if ok, _, _ := l.Take("a"); !ok {
			t.Fatal("a kept attempt within the burst refused")
		}
	}
	ok, wait, refund := l.Take("a")
	if ok || wait <= 0 {
		t.Fatalf("past the burst: allowed %v, wait %s", ok, wait)
	}
	refund() // nothing was taken: nothing is given
	if ok, _, _ := l.Take("a"); ok {
		t.Error("refunding a refused attempt gave a token")
	}
}

// Attempts that overlap and all turn out not to count must never add up to
// a refusal, however many there are: an office of people signing in at once
// from one address is not an attack.
func TestOverlappingRefundedAttemptsNeverDrainTheBucket(t *testing.T) {
	// A refill far slower than the attempts' throughput, so that nothing
	// lost on a refund is made up by the clock before the test ends.
	const workers, each = 16, 100
	l := ratelimit.New(10, 20)
	var refused atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				ok, _, refund := l.Take("office")
				if !ok {
					refused.Add(1)
					continue
				}
				time.Sleep(time.Duration(rand.IntN(4000)) * time.Microsecond) // the attempt runs
				refund()
			}
		}()
	}
	wg.Wait()
	if n := refused.Load(); n > 0 {
		t.Errorf("%d of %d attempts refused although none counted", n, workers*each)
	}
}
