package ratelimit_test

import (
	"testing"

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
