package bankpoll

import (
	"testing"
	"time"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/upstream/banking"
)

func mkListing(key string, fresh bool, items map[string]string) listing {
	l := listing{key: key, fresh: fresh}
	for id, d := range items {
		l.add(id, d, "Created", "Updated", id, func() map[string]any { return nil })
	}
	return l
}

func names(cs []change) map[string]string {
	out := map[string]string{}
	for _, c := range cs {
		out[c.subject] = c.name
	}
	return out
}

// A listing's first reading is a baseline; after it, new entities are
// created, changed digests updated, and an unchanged one is silent.
func TestDiffBaselineThenChanges(t *testing.T) {
	cs, snap := diff(snapshot{}, []listing{mkListing("w", false, map[string]string{"a": "1", "b": "1"})}, nil)
	if len(cs) != 0 {
		t.Fatalf("the baseline announced %v", cs)
	}
	cs, snap = diff(snap, []listing{mkListing("w", false, map[string]string{"a": "2", "b": "1", "c": "1"})}, nil)
	got := names(cs)
	if len(got) != 2 || got["a"] != "Updated" || got["c"] != "Created" {
		t.Fatalf("changes %v", got)
	}
	cs, _ = diff(snap, []listing{mkListing("w", false, map[string]string{"a": "2", "b": "1", "c": "1"})}, nil)
	if len(cs) != 0 {
		t.Fatalf("an unchanged listing announced %v", cs)
	}
}

// A listing under a parent first seen now (a new wallet's transactions) is
// no baseline; a listing that could not be read keeps its part of the
// snapshot, so that its next reading is compared with it, not taken as a
// baseline again.
func TestDiffFreshAndKeptListings(t *testing.T) {
	cs, _ := diff(snapshot{Lists: map[string]map[string]string{}}, []listing{mkListing("tx:new", true, map[string]string{"t1": "1"})}, nil)
	if names(cs)["t1"] != "Created" {
		t.Fatalf("a new wallet's transaction: %v", cs)
	}
	old := snapshot{Lists: map[string]map[string]string{"kyc": {"d": "1"}, "gone": {"x": "1"}}}
	_, next := diff(old, nil, []string{"kyc"})
	if next.Lists["kyc"]["d"] != "1" {
		t.Fatalf("an unreadable listing's part was dropped: %v", next)
	}
	if _, ok := next.Lists["gone"]; ok {
		t.Fatalf("a listing no longer read was kept: %v", next)
	}
}

// Removal is announced only for complete listings.
func TestDiffDeleted(t *testing.T) {
	old := snapshot{Lists: map[string]map[string]string{"limits": {"l1": "1", "l2": "1"}, "page": {"p1": "1"}}}
	limits := mkListing("limits", false, map[string]string{"l1": "1"})
	limits.deleted = func(id string) change { return change{name: "Deleted", subject: id, version: events.Deleted} }
	cs, _ := diff(old, []listing{limits, mkListing("page", false, nil)}, nil)
	if got := names(cs); len(got) != 1 || got["l2"] != "Deleted" {
		t.Fatalf("changes %v", got)
	}
}

func TestBackoffIsCapped(t *testing.T) {
	prev := time.Duration(0)
	for f := 1; f < 10; f++ {
		d := backoff(time.Second, f)
		if d < prev || d > maxBackoff*time.Second {
			t.Fatalf("failure %d: %v after %v", f, d, prev)
		}
		prev = d
	}
	if prev != maxBackoff*time.Second {
		t.Fatalf("back-off tops out at %v", prev)
	}
}

// A poll names a person's change as the gateway's mutations do: a block
// PersonBlocked, a restore PersonRestored, an edit of an active or of a
// blocked person PersonUpdated. The block's version is the one blockPerson
// announces under, so the stream keeps one of the two.
func TestPersonChangesAreNamedAsTheMutationsNameThem(t *testing.T) {
	poll := func(old snapshot, ps *banking.Person) ([]change, snapshot) {
		return diff(old, []listing{personListing("c", []*banking.Person{ps})}, nil)
	}
	p := &banking.Person{ID: "p", FirstName: "Dace", Email: "dace@demo.test"}
	_, snap := poll(snapshot{}, p)
	at := banking.Timestamp{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	steps := []struct {
		change func()
		want   string
	}{
		{func() { p.FirstName = "Dana" }, events.PersonUpdated},
		{func() { p.IsBlocked, p.DeletedAt = true, &at }, events.PersonBlocked},
		{func() { p.LastName = "Ozola" }, events.PersonUpdated},
		{func() { p.IsBlocked, p.DeletedAt = false, nil }, events.PersonRestored},
	}
	for i, s := range steps {
		s.change()
		var cs []change
		cs, snap = poll(snap, p)
		if len(cs) != 1 || cs[0].name != s.want || cs[0].version != events.PersonVersion(p) ||
			cs[0].payload["is_blocked"] != events.IsPersonBlocked(p) {
			t.Fatalf("step %d: %+v, want one %s under the person's version", i, cs, s.want)
		}
	}
}
