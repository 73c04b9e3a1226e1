package resolvers

import (
	"fmt"
	"testing"
)

const personsPage = `query($first: Int, $after: String) {
  persons(first: $first, after: $after) {
    edges { node { firstName } }
    pageInfo { hasNextPage hasPreviousPage endCursor }
    totalCount
  }
}`

type personsAnswer struct {
	Persons struct {
		Edges []struct {
			Node struct{ FirstName string }
		}
		PageInfo struct {
			HasNextPage, HasPreviousPage bool
			EndCursor                    *string
		}
		TotalCount int
	}
}

func (a personsAnswer) names() []string {
	var out []string
	for _, e := range a.Persons.Edges {
		out = append(out, e.Node.FirstName)
	}
	return out
}

// withPersons adds n persons P1..Pn after the seeded Anna.
func withPersons(h *harness, n int) {
	for i := 1; i <= n; i++ {
		h.banking.persons.add(demoCorp, &bankingPerson{ID: fmt.Sprint("p-", i), FirstName: fmt.Sprint("P", i)})
	}
}

// A Relay connection over an offset-paged listing: each page's endCursor
// continues exactly where the page ended, with no person twice or left
// out, and the last page says there is no next one.
func TestPersonsPageOnWithTheirCursor(t *testing.T) {
	h := newHarness(t)
	withPersons(h, 4) // Anna, P1..P4
	h.as(staff)

	var seen []string
	var after any
	for pages := 1; ; pages++ {
		var a personsAnswer
		h.exec(personsPage, map[string]any{"first": 2, "after": after}).decode(t, &a)
		seen = append(seen, a.names()...)
		if a.Persons.TotalCount != 5 {
			t.Fatalf("page %d: totalCount %d, want 5", pages, a.Persons.TotalCount)
		}
		if a.Persons.PageInfo.HasPreviousPage != (pages > 1) {
			t.Fatalf("page %d: hasPreviousPage %v", pages, a.Persons.PageInfo.HasPreviousPage)
		}
		if !a.Persons.PageInfo.HasNextPage {
			if pages != 3 {
				t.Fatalf("the listing ended after %d pages of 2, want 3", pages)
			}
			break
		}
		if pages == 3 {
			t.Fatal("page 3 of 5 persons by 2 says there is a next page")
		}
		after = *a.Persons.PageInfo.EndCursor
	}
	if want := []string{"Anna", "P1", "P2", "P3", "P4"}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("paged %v, want %v", seen, want)
	}
	if n := h.banking.persons.calls("List"); n != 3 {
		t.Fatalf("%d upstream listings for 3 pages", n)
	}
}

// A cursor is bound to its listing and order: one from another sort, or
// one a client made up, is refused as BAD_USER_INPUT on after, before any
// upstream call.
func TestPersonsRefuseAForeignCursor(t *testing.T) {
	h := newHarness(t)
	withPersons(h, 4)
	h.as(staff)
	var a personsAnswer
	h.exec(`{ persons(first: 2, sortBy: EMAIL) { edges { node { firstName } } pageInfo { hasNextPage hasPreviousPage endCursor } totalCount } }`, nil).decode(t, &a)
	before := h.banking.persons.calls("List")
	for _, cursor := range []string{*a.Persons.PageInfo.EndCursor, "b2Zmc2V0OjI"} {
		resp := h.exec(personsPage, map[string]any{"first": 2, "after": cursor})
		if e := resp.only(t); e.Code() != "BAD_USER_INPUT" || e.Extensions["field"] != "after" {
			t.Fatalf("cursor %q: %s, want BAD_USER_INPUT on after", cursor, resp)
		}
	}
	if h.banking.persons.calls("List") != before {
		t.Fatal("a refused cursor was sent upstream")
	}
}

// Against an upstream without offset paging (the strict sandbox), the
// first page is served and says more exist, and asking for the next is a
// client error that costs no upstream call.
func TestPagingPastTheFirstPageNeedsTheUpstreamsOffsetPaging(t *testing.T) {
	h := newHarness(t)
	withPersons(h, 4)
	h.banking.specOnly = true
	h.as(staff)
	var a personsAnswer
	h.exec(personsPage, map[string]any{"first": 2}).decode(t, &a)
	if len(a.names()) != 2 || !a.Persons.PageInfo.HasNextPage {
		t.Fatalf("first page %v (next %v), want 2 persons and a next page", a.names(), a.Persons.PageInfo.HasNextPage)
	}
	resp := h.exec(personsPage, map[string]any{"first": 2, "after": *a.Persons.PageInfo.EndCursor})
	if e := resp.only(t); e.Code() != "BAD_USER_INPUT" || e.Extensions["field"] != "after" {
		t.Fatalf("second page: %s, want BAD_USER_INPUT on after", resp)
	}
	if n := h.banking.persons.calls("List"); n != 1 {
		t.Fatalf("%d upstream listings, want only the first page's", n)
	}
}
