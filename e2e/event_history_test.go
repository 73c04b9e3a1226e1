package e2e

import (
	"net/http"
	"testing"
	"time"
)

const eventHistoryPage = `query($first: Int, $after: String, $names: [String!]) {
  eventHistory(first: $first, after: $after, names: $names) {
    edges { cursor source node { id name payload } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`

type historyPage struct {
	Edges []struct {
		Cursor string `json:"cursor"`
		Source string `json:"source"`
		Node   struct {
			ID      string         `json:"id"`
			Name    string         `json:"name"`
			Payload map[string]any `json:"payload"`
		} `json:"node"`
	} `json:"edges"`
	PageInfo pageInfo `json:"pageInfo"`
}

func (g *testGateway) history(t *testing.T, first int, after *string, names []string) historyPage {
	t.Helper()
	var d struct {
		EventHistory historyPage `json:"eventHistory"`
	}
	g.query(t, eventHistoryPage, map[string]any{"first": first, "after": after, "names": names}).decode(t, &d)
	return d.EventHistory
}

// personIDByEmail finds a person the viewer sees, by e-mail, in the
// persons connection (ids come from the graph, never typed in).
func (g *testGateway) personIDByEmail(t *testing.T, email string) string {
	t.Helper()
	var d struct {
		Persons struct {
			Items nodes[struct {
				ID    string `json:"id"`
				Email string `json:"email"`
			}] `json:"edges"`
		} `json:"persons"`
	}
	g.query(t, `{ persons(first: 100) { edges { node { id email } } } }`, nil).decode(t, &d)
	for _, p := range d.Persons.Items {
		if p.Email == email {
			return p.ID
		}
	}
	t.Fatalf("no person %s among %d", email, len(d.Persons.Items))
	return ""
}

// TestEventHistoryPagesNewestFirstAndHandsOverToTheSubscription makes
// gateway events in two corporations and payments events, then pages
// through the history: newest first, each event once, hasNextPage false
// exactly at the end, only what the events subscription would show the
// viewer. The newest page's startCursor then starts a subscription that
// gets the next event and nothing before it.
func TestEventHistoryPagesNewestFirstAndHandsOverToTheSubscription(t *testing.T) {
	g := liveGateway(t, "-payments-operators", "STAFF,PERSON,API_CLIENT")
	staff := g.as(g.signInStaff(t))
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	dace := anna.personIDByEmail(t, "dace@demo.test")
	kati := ben.personIDByEmail(t, "kati@second.test")

	const block = `mutation($id: ID!) { blockPerson(input: {id: $id}) { id } }`
	const restore = `mutation($id: ID!) { restorePerson(input: {id: $id}) { id } }`
	// Anna's corporation: 12 events, block and restore in turn.
	var annaMade []string
	for i := range 12 {
		m, name := block, "PersonBlocked"
		if i%2 == 1 {
			m, name = restore, "PersonRestored"
		}
		anna.query(t, m, map[string]any{"id": dace}).decode(t, &map[string]any{})
		annaMade = append(annaMade, name)
	}
	// Ben's corporation: 4 events anna must never see.
	for i := range 4 {
		m := block
		if i%2 == 1 {
			m = restore
		}
		ben.query(t, m, map[string]any{"id": kati}).decode(t, &map[string]any{})
	}
	// Payments events reach staff and API clients through webhooks, never
	// a person, even one the setting makes a payments operator.
	const payments = 3
	for range payments {
		g.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "IndividualActivated"}, nil)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(staff.history(t, 10, nil, []string{"IndividualActivated"}).Edges) < payments {
		if time.Now().After(deadline) {
			t.Fatal("the triggered payments events never reached the event stream")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// One big page is the reference; paging by 5 must give the same.
	all := anna.history(t, 100, nil, nil)
	if all.PageInfo.HasNextPage || all.PageInfo.HasPreviousPage {
		t.Fatalf("one page of 100: %+v", all.PageInfo)
	}
	var want, gateway []string
	for _, e := range all.Edges {
		want = append(want, e.Cursor)
		switch e.Source {
		case "gateway":
			if e.Node.Payload["person_id"] != rawID(dace) {
				t.Errorf("anna sees a gateway event of another corporation: %+v", e.Node)
			}
			gateway = append(gateway, e.Node.Name)
		default:
			t.Errorf("event of source %q", e.Source)
		}
	}
	if len(gateway) != len(annaMade) || len(all.Edges) != len(annaMade) {
		t.Fatalf("anna sees %d gateway events of %d, %d in all", len(gateway), len(annaMade), len(all.Edges))
	}
	for i, name := range gateway {
		if made := annaMade[len(annaMade)-1-i]; name != made {
			t.Fatalf("gateway event %d is %s, want %s: newest first", i, name, made)
		}
	}

	var got []string
	var after *string
	for page := 0; ; page++ {
		p := anna.history(t, 5, after, nil)
		if len(p.Edges) == 0 {
			t.Fatalf("page %d is empty", page)
		}
		if p.PageInfo.HasPreviousPage != (page > 0) || *p.PageInfo.StartCursor != p.Edges[0].Cursor ||
			*p.PageInfo.EndCursor != p.Edges[len(p.Edges)-1].Cursor {
			t.Errorf("page %d: %+v", page, p.PageInfo)
		}
		for _, e := range p.Edges {
			got = append(got, e.Cursor)
		}
		if p.PageInfo.HasNextPage != (len(got) < len(want)) {
			t.Fatalf("page %d: hasNextPage %v with %d of %d read", page, p.PageInfo.HasNextPage, len(got), len(want))
		}
		if !p.PageInfo.HasNextPage {
			break
		}
		after = p.PageInfo.EndCursor
	}
	sameSet(t, "event history by 5", got, want)
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("by 5, position %d differs from the one page", i)
		}
	}

	// Staff see both corporations' gateway events.
	var staffGateway int
	for _, e := range staff.history(t, 100, nil, []string{"PersonBlocked", "PersonRestored"}).Edges {
		if e.Source == "gateway" {
			staffGateway++
		}
	}
	if staffGateway != 16 {
		t.Errorf("staff see %d gateway events, want 12 + 4", staffGateway)
	}

	// The hand-over: the newest page, then the subscription after it.
	newest := anna.history(t, 3, nil, nil)
	ws := anna.dialWS(t, nil, nil)
	ws.subscribe("1", `subscription($after: String) { events(after: $after) `+liveFields+` }`,
		map[string]any{"after": *newest.PageInfo.StartCursor})
	anna.query(t, block, map[string]any{"id": dace}).decode(t, &map[string]any{})
	t.Cleanup(func() { anna.query(t, restore, map[string]any{"id": dace}) })
	e := ws.next("1", "events")
	if e.Event.Name != "PersonBlocked" || e.Cursor == newest.Edges[0].Cursor {
		t.Fatalf("after the newest page the subscription gave %+v, want the new PersonBlocked", e)
	}
	if again := anna.history(t, 1, nil, nil); again.Edges[0].Cursor != e.Cursor {
		t.Errorf("the history's newest event %s is not the one the subscription delivered %s", again.Edges[0].Cursor, e.Cursor)
	}
}

func TestEventHistoryArgumentsAreBounded(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	api := g.as(g.signInAPI(t))
	empty := api.history(t, 20, nil, nil)
	if len(empty.Edges) != 0 || empty.PageInfo.HasNextPage || empty.PageInfo.StartCursor == nil {
		t.Fatalf("a fresh stream: %+v (an empty newest page still gives the position to subscribe after)", empty)
	}
	var persons struct {
		Persons struct {
			PageInfo pageInfo `json:"pageInfo"`
		} `json:"persons"`
	}
	api.query(t, `{ persons(first: 1) { pageInfo { endCursor } } }`, nil).decode(t, &persons)
	for _, tc := range []struct {
		name  string
		vars  map[string]any
		field string
	}{
		{"first above 100", map[string]any{"first": 101}, "first"},
		{"negative first", map[string]any{"first": -3}, "first"},
		{"malformed cursor", map[string]any{"after": "garbage"}, "after"},
		{"a persons cursor", map[string]any{"after": persons.Persons.PageInfo.EndCursor}, "after"},
		{"past the newest event", map[string]any{"after": "99999" + (*empty.PageInfo.StartCursor)[1:]}, "after"},
		{"a bad name", map[string]any{"names": []string{"not a name"}}, "names"},
	} {
		r := api.query(t, eventHistoryPage, tc.vars)
		if code, field := errField(r); code != "BAD_USER_INPUT" || field != tc.field {
			t.Errorf("%s: %s on %q, want BAD_USER_INPUT on %q (%+v)", tc.name, code, field, tc.field, r.Errors)
		}
	}
	customer := g.as("")
	if r := customer.query(t, eventHistoryPage, nil); r.code() != "UNAUTHENTICATED" && r.code() != "FORBIDDEN" {
		t.Errorf("signed out: %+v", r.Errors)
	}
}
