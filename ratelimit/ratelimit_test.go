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
