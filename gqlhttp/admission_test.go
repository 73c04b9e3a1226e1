package gqlhttp

import "testing"

// Each budget of an address counts apart: anonymous places never take
// signed-in ones, pending places are their own, a move needs a free place
// in its target budget and gives back the one it leaves, and an address
// with nothing held is forgotten.
func TestPlacesBudgetsAreApart(t *testing.T) {
	p := newPlaces(3, 2)
	for range 2 {
		if !p.take("a", placeAnonymous) {
			t.Fatal("an anonymous place under the budget refused")
		}
	}
	if p.take("a", placeAnonymous) {
		t.Error("a third anonymous place of a budget of 2 taken")
	}
	for range 3 {
		if !p.take("a", placeSignedIn) {
			t.Fatal("a signed-in place refused while anonymous ones are full")
		}
	}
	if p.take("a", placeSignedIn) {
		t.Error("a fourth signed-in place of a budget of 3 taken")
	}
	if !p.take("b", placeAnonymous) {
		t.Error("another address's anonymous place refused")
	}
	for range MaxPendingSocketsPerAddress {
		if !p.take("a", placePending) {
			t.Fatal("a pending place under the budget refused")
		}
	}
	if p.take("a", placePending) {
		t.Error("a pending place past MaxPendingSocketsPerAddress taken")
	}
	if p.move("a", placePending, placeSignedIn) {
		t.Error("a move into a full signed-in budget succeeded")
	}
	p.give("a", placeSignedIn)
	if !p.move("a", placePending, placeSignedIn) {
		t.Error("a move into a freed signed-in place failed")
	}
	if !p.take("a", placePending) {
		t.Error("the pending place a move left was not given back")
	}
	p.give("b", placeAnonymous)
	if _, ok := p.counts["b"]; ok {
		t.Error("an address with nothing held is kept")
	}
}

// The anonymous budget defaults when unset and never exceeds the signed-in
// one.
func TestAnonymousBudget(t *testing.T) {
	for _, c := range []struct {
		l    Limits
		want int
	}{
		{Limits{MaxSocketsPerAddress: 200}, DefaultLimits.MaxAnonymousPerAddress},
		{Limits{MaxSocketsPerAddress: 5, MaxAnonymousPerAddress: 50}, 5},
		{Limits{MaxSocketsPerAddress: 200, MaxAnonymousPerAddress: 7}, 7},
	} {
		if got := anonymousBudget(c.l); got != c.want {
			t.Errorf("anonymousBudget(%+v) = %d, want %d", c.l, got, c.want)
		}
	}
}
