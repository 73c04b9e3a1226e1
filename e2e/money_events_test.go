package e2e

import (
	"encoding/json"
	"testing"
)

// The gateway's own events about money: a conversion is announced once
// however often its key is retried (lost answers included), and every
// event id the gateway hands out refetches through node, nodes and event.

// conversionEvents reads the ConversionCreated events in the history that
// announce the conversion txID (Conversion.id is the upstream's id).
func conversionEvents(t *testing.T, g *testGateway, txID string) []string {
	t.Helper()
	var ids []string
	for _, e := range g.history(t, 100, nil, []string{"ConversionCreated"}).Edges {
		if e.Node.Payload["transaction_id"] == txID {
			ids = append(ids, e.Node.ID)
		}
	}
	return ids
}

func TestRetriedConversionIsAnnouncedOnce(t *testing.T) {
	t.Parallel()
	l := newLossy()
	g := startGatewayWith(t, sandboxBehind(l.wrap))
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	api := g.as(g.signInAPI(t))

	// A conversion answered, then retried: one announcement.
	in := map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 2000, "currency": "GBP", "idempotencyKey": uniq("announce-")}
	res, r := anna.convert(t, in)
	if len(r.Errors) > 0 {
		t.Fatalf("convert: %+v", r.Errors)
	}
	for range 3 {
		anna.convert(t, in)
	}
	if ids := conversionEvents(t, api, res.ID); len(ids) != 1 {
		t.Errorf("a conversion retried 3 times was announced %d times (%v), want once", len(ids), ids)
	}

	// A conversion whose answer was lost: announced once, when a retry
	// finds it.
	in = map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 3000, "currency": "GBP", "idempotencyKey": uniq("announce-lost-")}
	l.lose(routeConvert, 1)
	anna.convert(t, in)
	var found conversionResult
	for range 3 {
		if res, r := anna.convert(t, in); len(r.Errors) == 0 {
			found = res
		}
	}
	if found.ID == "" {
		t.Fatal("no retry found the conversion whose answer was lost")
	}
	if ids := conversionEvents(t, api, found.ID); len(ids) != 1 {
		t.Errorf("a conversion whose answer was lost was announced %d times (%v), want once", len(ids), ids)
	}
}

func TestGatewayEventsRefetchByNodeNodesAndEvent(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	api := g.as(g.signInAPI(t))
	if _, r := anna.convert(t, map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 2000, "currency": "GBP"}); len(r.Errors) > 0 {
		t.Fatalf("convert: %+v", r.Errors)
	}
	anna.issueCard(t, issueInput())

	var ids []string
	names := map[string]string{}
	for _, e := range api.history(t, 100, nil, []string{"ConversionCreated", "CardIssued"}).Edges {
		if e.Source != "gateway" {
			continue
		}
		ids = append(ids, e.Node.ID)
		names[e.Node.ID] = e.Node.Name
	}
	if len(ids) < 2 {
		t.Fatalf("want a ConversionCreated and a CardIssued in the history, got %v", names)
	}
	for _, id := range ids {
		var d struct {
			Node  *struct{ ID, Name string } `json:"node"`
			Event *struct{ ID, Name string } `json:"event"`
		}
		r := api.query(t, `query($id: ID!) { node(id: $id) { id ... on Event { name } } event(id: $id) { id name } }`, map[string]any{"id": id})
		if len(r.Errors) > 0 {
			t.Errorf("%s %s: %+v", names[id], id, r.Errors)
			continue
		}
		if err := json.Unmarshal(r.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.Node == nil || d.Node.ID != id || d.Node.Name != names[id] {
			t.Errorf("node(%s) of a %s = %+v", id, names[id], d.Node)
		}
		if d.Event == nil || d.Event.ID != id || d.Event.Name != names[id] {
			t.Errorf("event(%s) of a %s = %+v", id, names[id], d.Event)
		}
	}
	var d struct {
		Nodes []*struct{ ID string } `json:"nodes"`
	}
	api.query(t, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": ids}).decode(t, &d)
	for i, n := range d.Nodes {
		if n == nil || n.ID != ids[i] {
			t.Errorf("nodes[%d] = %+v, want %s", i, n, ids[i])
		}
	}
	// A person of another corporation does not see them.
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	for _, id := range ids {
		if r := ben.query(t, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id}); len(r.Errors) == 0 && string(r.Data) != `{"node":null}` {
			t.Errorf("another corporation's person refetched %s: %s", id, r.Data)
		}
	}
}
