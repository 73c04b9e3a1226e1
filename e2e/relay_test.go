package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// nodeFields is what TestNodeResolvesEveryNodeType compares, per Node
// type: the fields the typed path showed against those node(id) shows.
var nodeFields = map[string]string{
	"Customer":         "id upstreamId number status currency contact { name email }",
	"Order":            "id upstreamId number status amount { amount currency } created",
	"Event":            "id upstreamId name createdAt orderId individualId",
	"Person":           "id upstreamId firstName lastName email corporationId",
	"Corporation":      "id upstreamId name country currency",
	"Card":             "id upstreamId displayName status maskedPan { lastFour } fundingWalletId cardholderId",
	"CardTransaction":  "id upstreamId type amount { amount currency } description",
	"KycDocument":      "id upstreamId name status corporationId",
	"Wallet":           "id upstreamId name currency type balance { amount currency }",
	"WalletRequisites": "id upstreamId number code type",
	"Invoice":          "id upstreamId type isPaid amount { amount currency }",
	"Limit":            "id upstreamId paymentMethod transactionType maximumAmount { amount currency }",
}

// nodeTypesFromIntrospection reads the types implementing Node, so that a
// new Node type without coverage here fails the test.
func nodeTypesFromIntrospection(t *testing.T, g *testGateway) []string {
	t.Helper()
	var d struct {
		Type struct {
			PossibleTypes []struct{ Name string } `json:"possibleTypes"`
		} `json:"__type"`
	}
	g.query(t, `{ __type(name: "Node") { possibleTypes { name } } }`, nil).decode(t, &d)
	var out []string
	for _, p := range d.Type.PossibleTypes {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatal("no type implements Node")
	}
	return out
}

// topLevel is the field names of a selection at its own level.
func topLevel(sel string) []string {
	var out []string
	depth := 0
	for _, tok := range strings.Fields(sel) {
		switch tok {
		case "{":
			depth++
		case "}":
			depth--
		default:
			if depth == 0 {
				out = append(out, tok)
			}
		}
	}
	return out
}

// seen is one object reached through the graph: its type and the fields
// the typed path showed.
type seen struct {
	typ    string
	fields map[string]any
}

// collect decodes data and records every object in it that has a
// __typename and an id, wherever it sits.
func collect(t *testing.T, raw json.RawMessage, into map[string]seen) {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			typ, _ := x["__typename"].(string)
			id, _ := x["id"].(string)
			if sel, isNode := nodeFields[typ]; isNode && id != "" {
				// Only the compared fields: not the edges the walk followed.
				flat := map[string]any{}
				for _, k := range topLevel(sel) {
					flat[k] = x[k]
				}
				into[id] = seen{typ: typ, fields: flat}
			}
			for _, val := range x {
				walk(val)
			}
		case []any:
			for _, val := range x {
				walk(val)
			}
		}
	}
	walk(v)
}

// TestNodeResolvesEveryNodeType walks the demo data through the graph,
// takes every object's global id and reads it back with node(id:): same
// fields, and every type implementing Node (from introspection) visited.
// Then nodes(ids:) answers them all at once, in order, batched.
func TestNodeResolvesEveryNodeType(t *testing.T) {
	g := startGateway(t)
	api := g.as(g.signInAPI(t))

	// An individual with a pending action gives an event reachable through
	// the graph: individuals -> pendingActions -> eventId -> event.
	g.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "PendingActionCreated"}, nil)
	// An order of the last days, reached through orders and customers.
	g.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "OrderCaptured"}, nil)

	sel := func(types ...string) string {
		var b strings.Builder
		for _, ty := range types {
			fmt.Fprintf(&b, " ... on %s { %s }", ty, nodeFields[ty])
		}
		return "__typename" + b.String()
	}
	objects := map[string]seen{}
	today := time.Now().UTC().Format("2006-01-02")
	start := time.Now().UTC().AddDate(0, 0, -30).Format("2006-01-02")

	r := api.query(t, `query($s: Date, $e: Date) {
	  customers { `+sel("Customer")+` orders(start: $s, end: $e) { `+sel("Order")+` } }
	  orders(start: $s, end: $e) { `+sel("Order")+` }
	  individuals { id }
	  currentCorporation {
	    `+sel("Corporation")+`
	    wallets { `+sel("Wallet")+` requisites { `+sel("WalletRequisites")+` } pending { `+sel("Wallet")+` } }
	    walletRequisites { `+sel("WalletRequisites")+` }
	    invoices { `+sel("Invoice")+` }
	    limits { `+sel("Limit")+` }
	    kycDocuments { `+sel("KycDocument")+` }
	    cards { `+sel("Card")+` cardholder { `+sel("Person")+` }
	      transactions(first: 5) { edges { node { `+sel("CardTransaction")+` } } } }
	  }
	}`, map[string]any{"s": start, "e": today})
	collect(t, r.Data, objects)
	if len(r.Errors) > 0 {
		t.Fatalf("walk: %+v", r.Errors)
	}
	var ind struct {
		Individuals []struct{ ID string } `json:"individuals"`
	}
	r.decode(t, &ind)
	for _, in := range ind.Individuals {
		var pa struct {
			PendingActions []struct{ EventID *string } `json:"pendingActions"`
		}
		api.query(t, `query($i: ID) { pendingActions(individualId: $i) { eventId } }`, map[string]any{"i": in.ID}).decode(t, &pa)
		for _, a := range pa.PendingActions {
			if a.EventID == nil {
				continue
			}
			er := api.query(t, `query($id: ID!) { event(id: $id) { `+sel("Event")+` } }`, map[string]any{"id": *a.EventID})
			if len(er.Errors) > 0 {
				t.Fatalf("event: %+v", er.Errors)
			}
			collect(t, er.Data, objects)
		}
	}

	visited := map[string]int{}
	for id, obj := range objects {
		visited[obj.typ]++
		var d struct {
			Node map[string]any `json:"node"`
		}
		api.query(t, `query($id: ID!) { node(id: $id) { `+sel(obj.typ)+` } }`, map[string]any{"id": id}).decode(t, &d)
		if d.Node == nil {
			t.Fatalf("node(%s) of a %s is null", id, obj.typ)
		}
		if d.Node["__typename"] != obj.typ {
			t.Fatalf("node(%s) is a %v, the graph showed a %s", id, d.Node["__typename"], obj.typ)
		}
		delete(d.Node, "__typename")
		if !reflect.DeepEqual(d.Node, obj.fields) {
			t.Errorf("node(id) of a %s differs from the typed path:\n node:  %v\n typed: %v", obj.typ, d.Node, obj.fields)
		}
		// The id is opaque, global and not the upstream's.
		if id == obj.fields["upstreamId"] {
			t.Errorf("%s id %q is the upstream id", obj.typ, id)
		}
	}
	// The typed root look-ups take the same global ids and agree.
	lookups := map[string]string{"Customer": "customer", "Order": "order", "Event": "event",
		"Person": "person", "Corporation": "corporation", "Card": "card"}
	for id, obj := range objects {
		field, ok := lookups[obj.typ]
		if !ok {
			continue
		}
		var d map[string]map[string]any
		api.query(t, `query($id: ID!) { `+field+`(id: $id) { `+sel(obj.typ)+` } }`, map[string]any{"id": id}).decode(t, &d)
		got := d[field]
		if got == nil {
			t.Errorf("%s(id: %s) is null", field, id)
			continue
		}
		delete(got, "__typename")
		if !reflect.DeepEqual(got, obj.fields) {
			t.Errorf("%s(id) differs from the walk:\n typed: %v\n walk:  %v", field, got, obj.fields)
		}
	}

	for _, ty := range nodeTypesFromIntrospection(t, g) {
		if _, ok := nodeFields[ty]; !ok {
			t.Errorf("Node type %s has no coverage in this test", ty)
			continue
		}
		if visited[ty] == 0 {
			t.Errorf("the walk reached no %s", ty)
		}
	}

	// nodes(ids:): all of them at once, in the order asked.
	var ids []string
	for id := range objects {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) > 100 {
		ids = ids[:100]
	}
	var nd struct {
		Nodes []map[string]any `json:"nodes"`
	}
	api.query(t, `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`, map[string]any{"ids": ids}).decode(t, &nd)
	if len(nd.Nodes) != len(ids) {
		t.Fatalf("nodes answered %d of %d", len(nd.Nodes), len(ids))
	}
	for i, n := range nd.Nodes {
		if n == nil || n["id"] != ids[i] || n["__typename"] != objects[ids[i]].typ {
			t.Errorf("nodes[%d] = %v, want the %s %s", i, n, objects[ids[i]].typ, ids[i])
		}
	}
}

// TestNodesBatchThroughTheTypedFieldsLoaders counts upstream calls: the
// demo corporation's two cards, its two cardholders and its wallets cost
// one card listing, one person listing and one wallet listing, as the
// typed fields do.
func TestNodesBatchThroughTheTypedFieldsLoaders(t *testing.T) {
	g := startGateway(t)
	api := g.as(g.signInAPI(t))
	var d struct {
		CurrentCorporation struct {
			Cards []struct {
				ID         string
				Cardholder struct{ ID string }
			}
			Wallets []struct{ ID string }
		} `json:"currentCorporation"`
	}
	api.query(t, `{ currentCorporation { cards { id cardholder { id } } wallets { id } } }`, nil).decode(t, &d)
	var ids []string
	for _, c := range d.CurrentCorporation.Cards {
		ids = append(ids, c.ID, c.Cardholder.ID)
	}
	for _, w := range d.CurrentCorporation.Wallets {
		ids = append(ids, w.ID)
	}
	if len(d.CurrentCorporation.Cards) < 2 || len(d.CurrentCorporation.Wallets) < 2 {
		t.Fatalf("demo data: %+v", d)
	}
	g.resetStats(t)
	var nd struct {
		Nodes []struct{ ID string } `json:"nodes"`
	}
	api.query(t, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": ids}).decode(t, &nd)
	for i, n := range nd.Nodes {
		if n.ID != ids[i] {
			t.Fatalf("nodes[%d] = %q, want %q", i, n.ID, ids[i])
		}
	}
	st := g.stats(t)
	for route, want := range map[string]int{
		"GET /banking/v2/cards":                     1,
		"GET /banking/v2/persons":                   1,
		"GET /banking/v2/corporations/{id}/wallets": 1,
		"GET /banking/v2/corporations":              1,
	} {
		if st.Routes[route] != want {
			t.Errorf("%s called %d times, want %d (all: %v)", route, st.Routes[route], want, st.Routes)
		}
	}
}

// TestForgedForeignAndMalformedGlobalIDsAreNotFound: every way an id can
// be wrong gives NOT_FOUND, never another tenant's object and never
// INTERNAL; a wrong-type id costs no upstream call.
func TestForgedForeignAndMalformedGlobalIDsAreNotFound(t *testing.T) {
	g := startGateway(t)
	api := g.as(g.signInAPI(t))
	var d struct {
		Customers          []struct{ ID, UpstreamID string } `json:"customers"`
		CurrentCorporation struct {
			ID    string
			Cards []struct {
				ID, UpstreamID string
			}
			Wallets []struct{ ID string }
		} `json:"currentCorporation"`
	}
	api.query(t, `{ customers { id upstreamId } currentCorporation { id cards { id upstreamId } wallets { id } } }`, nil).decode(t, &d)
	card := d.CurrentCorporation.Cards[0]
	wallet := d.CurrentCorporation.Wallets[0]

	notFound := func(t *testing.T, who *testGateway, id string, why string) {
		t.Helper()
		r := who.query(t, `query($id: ID!) { node(id: $id) { __typename id } }`, map[string]any{"id": id})
		if r.code() != "NOT_FOUND" || string(r.Data) != `{"node":null}` {
			t.Errorf("%s: node(%q) = %s %+v, want null and NOT_FOUND", why, id, r.Data, r.Errors)
		}
	}
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

	// Another type's prefix on a real raw id: forged.
	notFound(t, api, b64("Person:"+card.UpstreamID), "a card's raw id under another type")
	notFound(t, api, b64("Wallet:"+card.UpstreamID), "too few parts")
	// A typed look-up given another type's global id refuses it before
	// any upstream call.
	g.resetStats(t)
	for _, q := range []string{
		`query($id: ID!) { card(id: $id) { id } }`,
		`query($id: ID!) { person(id: $id) { id } }`,
		`query($id: ID!) { customer(id: $id) { id } }`,
		`query($id: ID!) { order(id: $id) { id } }`,
		`query($id: ID!) { event(id: $id) { id } }`,
	} {
		other := wallet.ID
		r := api.query(t, q, map[string]any{"id": other})
		if r.code() != "NOT_FOUND" {
			t.Errorf("%s with a wallet's id: %s %+v", q, r.Data, r.Errors)
		}
	}
	r := api.query(t, `query($id: ID!) { corporation(id: $id) { id } }`, map[string]any{"id": card.ID})
	if r.code() != "NOT_FOUND" {
		t.Errorf("corporation(id) with a card's id: %s %+v", r.Data, r.Errors)
	}
	if n := g.stats(t).Total; n != 0 {
		t.Errorf("ids of the wrong type cost %d upstream calls", n)
	}
	// For compatibility a typed look-up still takes the raw upstream id.
	var byRaw struct {
		Card struct{ ID string } `json:"card"`
	}
	api.query(t, `query($id: ID!) { card(id: $id) { id } }`, map[string]any{"id": card.UpstreamID}).decode(t, &byRaw)
	if byRaw.Card.ID != card.ID {
		t.Errorf("card(id: raw) = %+v, want %s", byRaw, card.ID)
	}
	for name, id := range map[string]string{
		"empty":        "",
		"random bytes": base64.RawURLEncoding.EncodeToString([]byte{0x9f, 0x00, 0xfe, 0x42, 0x13}),
		"not base64":   "%%%",
		"the raw id":   card.UpstreamID,
		"unknown type": b64("Secret:" + card.UpstreamID),
		"dot segment":  b64("Card:.."),
		"huge":         strings.Repeat("QUFB", 1000),
		"a card id of a card that does not exist": b64("Card:00000000-0000-0000-0000-00000000dead"),
	} {
		notFound(t, api, id, name)
	}

	// A person of the second corporation sees nothing of the demo one.
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	notFound(t, ben, card.ID, "another corporation's card")
	notFound(t, ben, wallet.ID, "another corporation's wallet")
	notFound(t, ben, d.CurrentCorporation.ID, "another corporation")
	var own struct {
		Viewer struct{ Corporation struct{ ID string } } `json:"viewer"`
	}
	ben.query(t, `{ viewer { corporation { id } } }`, nil).decode(t, &own)
	notFound(t, api, own.Viewer.Corporation.ID, "the second corporation, asked by the demo corporation's API client")

	// A customer session sees its own customer only.
	cust := g.as(g.signInCustomerDemo(t))
	var me struct {
		CurrentCustomer struct{ ID string } `json:"currentCustomer"`
	}
	cust.query(t, `{ currentCustomer { id } }`, nil).decode(t, &me)
	var mine struct {
		Node struct{ ID string } `json:"node"`
	}
	cust.query(t, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": me.CurrentCustomer.ID}).decode(t, &mine)
	if mine.Node.ID != me.CurrentCustomer.ID {
		t.Errorf("a customer's own node: %+v", mine)
	}
	for _, c := range d.Customers {
		if c.ID != me.CurrentCustomer.ID {
			notFound(t, cust, c.ID, "a customer the customer session does not own")
			break
		}
	}
	// A customer session may not see banking types: NOT_FOUND, not FORBIDDEN.
	notFound(t, cust, card.ID, "a banking type asked by a payments customer")

	// nodes: a bad id fails only its own item; more than 100 is refused first.
	r = api.query(t, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": []string{card.ID, "nope", wallet.ID}})
	var nd struct {
		Nodes []*struct{ ID string } `json:"nodes"`
	}
	if err := json.Unmarshal(r.Data, &nd); err != nil {
		t.Fatal(err)
	}
	if len(nd.Nodes) != 3 || nd.Nodes[0] == nil || nd.Nodes[0].ID != card.ID || nd.Nodes[1] != nil || nd.Nodes[2] == nil || nd.Nodes[2].ID != wallet.ID {
		t.Errorf("nodes with one bad id: %s", r.Data)
	}
	if len(r.Errors) != 1 || r.code() != "NOT_FOUND" || !slices.Equal(r.Errors[0].Path, []any{"nodes", float64(1)}) {
		t.Errorf("nodes errors: %+v", r.Errors)
	}
	many := make([]string, 101)
	for i := range many {
		many[i] = card.ID
	}
	g.resetStats(t)
	if r := api.query(t, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": many}); r.code() != "BAD_USER_INPUT" {
		t.Errorf("101 ids: %+v", r.Errors)
	}
	if n := g.stats(t).Total; n != 0 {
		t.Errorf("101 ids cost %d upstream calls", n)
	}
}

// signInCustomerDemo signs the demo customer C-1001 in with its customer
// key and returns the bearer session token.
func (g *testGateway) signInCustomerDemo(t *testing.T) string {
	t.Helper()
	var signed struct {
		SignInCustomer struct {
			SessionToken string `json:"sessionToken"`
		} `json:"signInCustomer"`
	}
	g.query(t, `mutation($k: String!) { signInCustomer(input: {customerKey: $k}) { sessionToken } }`,
		map[string]any{"k": "ck_sandbox_demo"}).decode(t, &signed)
	return signed.SignInCustomer.SessionToken
}

// rawID decodes a global id (docs/relay.md) to the upstream's own id
// of the object, for tests that compare with the sandbox's raw ids. Only
// tests may look inside an id; clients treat it as opaque.
func rawID(id string) string {
	b, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil {
		return id
	}
	parts := strings.Split(string(b), ":")
	if len(parts) < 2 {
		return id
	}
	last := parts[len(parts)-1]
	return strings.NewReplacer("%3A", ":", "%25", "%").Replace(last)
}
