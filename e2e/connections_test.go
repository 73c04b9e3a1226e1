package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
)

// nodes decodes a Relay connection's edges into their nodes, for tests that
// only need what a page lists: `Items nodes[T] `json:"edges"“.
type nodes[T any] []T

// UnmarshalJSON reads [{"node": T}, ...].
func (n *nodes[T]) UnmarshalJSON(b []byte) error {
	var edges []struct {
		Node T `json:"node"`
	}
	if err := json.Unmarshal(b, &edges); err != nil {
		return err
	}
	*n = make(nodes[T], len(edges))
	for i, e := range edges {
		(*n)[i] = e.Node
	}
	return nil
}

// pageInfo is the Relay PageInfo.
type pageInfo struct {
	HasNextPage     bool    `json:"hasNextPage"`
	HasPreviousPage bool    `json:"hasPreviousPage"`
	StartCursor     *string `json:"startCursor"`
	EndCursor       *string `json:"endCursor"`
}

// connPage is one page of a connection whose nodes have an id and a key the
// test created them with (a person's e-mail, a transaction's amount).
type connPage struct {
	Edges []struct {
		Cursor string `json:"cursor"`
		Node   struct {
			ID     string `json:"id"`
			Email  string `json:"email"`
			Amount *struct {
				Amount int64 `json:"amount"`
			} `json:"amount"`
		} `json:"node"`
	} `json:"edges"`
	PageInfo   pageInfo `json:"pageInfo"`
	TotalCount int      `json:"totalCount"`
}

// key is what the test created a node with.
func (p connPage) key(i int) string {
	n := p.Edges[i].Node
	if n.Amount != nil {
		return fmt.Sprint(n.Amount.Amount)
	}
	return n.Email
}

// pageThrough reads a connection to its end with pages of size first,
// checking every page's PageInfo on the way: hasNextPage is true on every
// page but the last, false exactly on the last, and the endCursor of each
// page continues the listing. It returns the ids in order and the keys.
func pageThrough(t *testing.T, name string, first int, read func(first int, after *string) connPage) (ids, keys []string) {
	t.Helper()
	var after *string
	for page := 0; ; page++ {
		p := read(first, after)
		if p.PageInfo.HasPreviousPage != (page > 0) {
			t.Errorf("%s page %d (first %d): hasPreviousPage %v", name, page, first, p.PageInfo.HasPreviousPage)
		}
		for i, e := range p.Edges {
			ids = append(ids, e.Node.ID)
			keys = append(keys, p.key(i))
			if e.Cursor == "" {
				t.Fatalf("%s page %d: an edge without a cursor", name, page)
			}
		}
		if len(p.Edges) == 0 {
			t.Fatalf("%s page %d (first %d): empty page before the end (hasNextPage was true)", name, page, first)
		}
		if *p.PageInfo.StartCursor != p.Edges[0].Cursor || *p.PageInfo.EndCursor != p.Edges[len(p.Edges)-1].Cursor {
			t.Errorf("%s page %d: startCursor/endCursor are not the first and last edges' cursors: %+v", name, page, p.PageInfo)
		}
		remaining := p.TotalCount - len(ids)
		if p.PageInfo.HasNextPage != (remaining > 0) {
			t.Fatalf("%s page %d (first %d): hasNextPage %v with %d of %d read", name, page, first, p.PageInfo.HasNextPage, len(ids), p.TotalCount)
		}
		if len(p.Edges) != min(first, len(p.Edges)+remaining) {
			t.Errorf("%s page %d (first %d): %d edges with %d more to come", name, page, first, len(p.Edges), remaining)
		}
		if !p.PageInfo.HasNextPage {
			// Past the end is an empty page, not an error.
			past := read(first, p.PageInfo.EndCursor)
			if len(past.Edges) != 0 || past.PageInfo.HasNextPage || past.PageInfo.StartCursor != nil || past.PageInfo.EndCursor != nil {
				t.Errorf("%s after the last edge: %+v", name, past)
			}
			return ids, keys
		}
		if page > 1000 {
			t.Fatalf("%s: no end after 1000 pages", name)
		}
		after = p.PageInfo.EndCursor
	}
}

// sameSet fails unless got has no duplicate and holds exactly want.
func sameSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	seen := make(map[string]int, len(got))
	for _, v := range got {
		seen[v]++
		if seen[v] == 2 {
			t.Errorf("%s: %q twice", what, v)
		}
	}
	for _, v := range want {
		if seen[v] == 0 {
			t.Errorf("%s: %q missing (a gap)", what, v)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%s: %d distinct, want %d", what, len(seen), len(want))
	}
}

const personsPage = `query($first: Int, $after: String, $dir: SortDirection) {
  persons(first: $first, after: $after, sortDirection: $dir) {
    edges { cursor node { id email } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } totalCount } }`

func TestPersonsConnectionPagesToTheEndWithoutGapsOrDuplicates(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	const created = 45
	ids := g.createPersonsUpstream(t, created)
	if len(ids) != created {
		t.Fatalf("created %d persons", len(ids))
	}
	api := g.as(g.signInAPI(t))
	read := func(dir string) func(int, *string) connPage {
		return func(first int, after *string) connPage {
			var d struct {
				Persons connPage `json:"persons"`
			}
			api.query(t, personsPage, map[string]any{"first": first, "after": after, "dir": dir}).decode(t, &d)
			return d.Persons
		}
	}

	// One big listing is the reference.
	all := read("DESC")(100, nil)
	if all.PageInfo.HasNextPage || all.TotalCount != len(all.Edges) || all.TotalCount < created+1 {
		t.Fatalf("one listing of 100: %d edges, totalCount %d, hasNextPage %v", len(all.Edges), all.TotalCount, all.PageInfo.HasNextPage)
	}
	var wantIDs, wantEmails []string
	for i, e := range all.Edges {
		wantIDs = append(wantIDs, e.Node.ID)
		wantEmails = append(wantEmails, all.key(i))
	}

	for _, first := range []int{7, all.TotalCount / 2, all.TotalCount} {
		g.resetStats(t)
		gotIDs, gotEmails := pageThrough(t, "persons", first, read("DESC"))
		sameSet(t, fmt.Sprintf("persons by %d", first), gotIDs, wantIDs)
		sameSet(t, fmt.Sprintf("persons' e-mails by %d", first), gotEmails, wantEmails)
		for i := range gotIDs {
			if gotIDs[i] != wantIDs[i] {
				t.Fatalf("persons by %d: position %d is %s, the one listing has %s there", first, i, gotIDs[i], wantIDs[i])
			}
		}
		// Each page is one upstream call, and so is the read past the end.
		pages := (all.TotalCount + first - 1) / first
		if n := getCalls(g.stats(t), "/persons"); n != pages+1 {
			t.Errorf("paging by %d: %d person listing calls, want %d pages + 1", first, n, pages)
		}
	}

	// The other direction lists the same persons, the other way round.
	ascIDs, _ := pageThrough(t, "persons ASC", 9, read("ASC"))
	sameSet(t, "persons ASC", ascIDs, wantIDs)
	if len(ascIDs) == len(wantIDs) && ascIDs[0] != wantIDs[len(wantIDs)-1] {
		t.Errorf("ASC starts with %s, DESC ends with %s", ascIDs[0], wantIDs[len(wantIDs)-1])
	}
}

const transactionsPage = `query($card: ID!, $first: Int, $after: String) { card(id: $card) {
  transactions(first: $first, after: $after) {
    edges { cursor node { id amount { amount } } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } totalCount } } }`

func TestCardTransactionsConnectionPagesToTheEnd(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	card := anna.issueCard(t, issueInput())
	const created = 24
	var amounts []string
	for i := range created {
		amount := int64(100 + i)
		if s := anna.simulate(t, card.ID, amount); s.Typename != "CardAuthorised" {
			t.Fatalf("simulated transaction %d: %+v", i, s)
		}
		amounts = append(amounts, fmt.Sprint(amount))
	}
	read := func(first int, after *string) connPage {
		var d struct {
			Card struct {
				Transactions connPage `json:"transactions"`
			} `json:"card"`
		}
		anna.query(t, transactionsPage, map[string]any{"card": card.ID, "first": first, "after": after}).decode(t, &d)
		return d.Card.Transactions
	}
	all := read(100, nil)
	if all.TotalCount != created || len(all.Edges) != created || all.PageInfo.HasNextPage {
		t.Fatalf("one listing of 100: %d edges, totalCount %d, hasNextPage %v", len(all.Edges), all.TotalCount, all.PageInfo.HasNextPage)
	}
	var wantIDs []string
	for _, e := range all.Edges {
		wantIDs = append(wantIDs, e.Node.ID)
	}
	// 5 ends on a partial page, 6 and 24 on a full one.
	for _, first := range []int{5, 6, created} {
		ids, got := pageThrough(t, "card transactions", first, read)
		sameSet(t, fmt.Sprintf("transactions by %d", first), ids, wantIDs)
		sameSet(t, fmt.Sprintf("transaction amounts by %d", first), got, amounts)
		if got[0] != amounts[created-1] {
			t.Errorf("newest first: the first transaction is %s, the last created %s", got[0], amounts[created-1])
		}
	}
}

func TestConnectionArgumentsAreBounded(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	var d struct {
		Persons connPage `json:"persons"`
		Card    struct {
			Transactions connPage `json:"transactions"`
		} `json:"card"`
	}
	card := anna.issueCard(t, issueInput())
	anna.simulate(t, card.ID, 100)
	anna.simulate(t, card.ID, 200)
	anna.query(t, `query($card: ID!) {
	  persons(first: 1) { edges { cursor node { id } } pageInfo { endCursor } }
	  card(id: $card) { transactions(first: 1) { edges { cursor node { id } } pageInfo { endCursor } } }
	}`, map[string]any{"card": card.ID}).decode(t, &d)
	personCursor, txCursor := d.Persons.PageInfo.EndCursor, d.Card.Transactions.PageInfo.EndCursor
	if personCursor == nil || txCursor == nil {
		t.Fatalf("no cursors: %+v", d)
	}
	other := anna.issueCard(t, issueInput())

	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		field       string
	}{
		{"first above 100", `{ persons(first: 101) { totalCount } }`, nil, "first"},
		{"negative first", `{ persons(first: -1) { totalCount } }`, nil, "first"},
		{"malformed cursor", `{ persons(after: "not-a-cursor") { totalCount } }`, nil, "after"},
		{"an event cursor", `{ persons(after: "3.kx1") { totalCount } }`, nil, "after"},
		{"a persons cursor with another sort", `query($a: String) { persons(after: $a, sortBy: EMAIL) { totalCount } }`,
			map[string]any{"a": personCursor}, "after"},
		{"a persons cursor with another direction", `query($a: String) { persons(after: $a, sortDirection: ASC) { totalCount } }`,
			map[string]any{"a": personCursor}, "after"},
		{"a transactions cursor on persons", `query($a: String) { persons(after: $a) { totalCount } }`,
			map[string]any{"a": txCursor}, "after"},
		{"a persons cursor on transactions", `query($c: ID!, $a: String) { card(id: $c) { transactions(after: $a) { totalCount } } }`,
			map[string]any{"c": card.ID, "a": personCursor}, "after"},
		{"another card's cursor", `query($c: ID!, $a: String) { card(id: $c) { transactions(after: $a) { totalCount } } }`,
			map[string]any{"c": other.ID, "a": txCursor}, "after"},
		{"transactions first above 100", `query($c: ID!) { card(id: $c) { transactions(first: 500) { totalCount } } }`,
			map[string]any{"c": card.ID}, "first"},
	} {
		r := anna.query(t, tc.query, tc.vars)
		if code, field := errField(r); code != "BAD_USER_INPUT" || field != tc.field {
			t.Errorf("%s: %s on %q, want BAD_USER_INPUT on %q (%+v)", tc.name, code, field, tc.field, r.Errors)
		}
	}

	// The same arguments spelled out (the defaults) continue the listing.
	var next struct {
		Persons connPage `json:"persons"`
	}
	anna.query(t, `query($a: String) { persons(first: 1, after: $a, sortBy: CREATED_AT, sortDirection: DESC) { edges { node { id } } pageInfo { hasPreviousPage } } }`,
		map[string]any{"a": personCursor}).decode(t, &next)
	if !next.Persons.PageInfo.HasPreviousPage {
		t.Errorf("the second page says it has no previous page: %+v", next.Persons)
	}
	if len(next.Persons.Edges) == 1 && len(d.Persons.Edges) == 1 && next.Persons.Edges[0].Node.ID == d.Persons.Edges[0].Node.ID {
		t.Errorf("the page after the first person starts with the first person again")
	}
}

// corporationsPage aliases name as email: connPage keys nodes by it.
const corporationsPage = `query($first: Int, $after: String) {
  corporations(first: $first, after: $after, sortBy: NAME) {
    edges { cursor node { id email: name } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } totalCount } }`

// TestCorporationsConnectionPagesByName: staff page the corporations by
// name, one and two at a time, after signing up more of them; the pages
// make up the one big listing, in name order.
func TestCorporationsConnectionPagesByName(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	var names []string
	for i := range 5 {
		name := fmt.Sprintf("Paging %c Shop SIA", 'E'-i) // created out of name order
		g.query(t, `mutation($input: SignUpCorporationInput!) { signUpCorporation(input: $input) { id } }`, map[string]any{"input": map[string]any{
			"companyName": name, "email": uniq("founder") + "@paging.test", "firstName": "Liga", "lastName": "Egle",
			"phone": "+37120001111", "country": "LV", "captcha": "sandbox-captcha-ok"}}).decode(t, &map[string]any{})
		names = append(names, name)
	}
	staff := g.as(g.signInStaff(t))
	read := func(first int, after *string) connPage {
		var d struct {
			Corporations connPage `json:"corporations"`
		}
		staff.query(t, corporationsPage, map[string]any{"first": first, "after": after}).decode(t, &d)
		return d.Corporations
	}
	all := read(100, nil)
	if all.TotalCount != len(all.Edges) || all.TotalCount < 2+len(names) {
		t.Fatalf("one listing: %d edges, totalCount %d", len(all.Edges), all.TotalCount)
	}
	var wantIDs, wantNames []string
	for i, e := range all.Edges {
		wantIDs = append(wantIDs, e.Node.ID)
		wantNames = append(wantNames, all.key(i))
	}
	for i := 1; i < len(wantNames); i++ {
		if wantNames[i-1] > wantNames[i] {
			t.Errorf("by name: %q before %q", wantNames[i-1], wantNames[i])
		}
	}
	for _, first := range []int{1, 2} {
		ids, got := pageThrough(t, "corporations", first, read)
		sameSet(t, fmt.Sprintf("corporations by %d", first), ids, wantIDs)
		sameSet(t, fmt.Sprintf("corporation names by %d", first), got, wantNames)
		for i := range ids {
			if ids[i] != wantIDs[i] {
				t.Fatalf("corporations by %d: position %d differs from the one listing", first, i)
			}
		}
	}
}
