package e2e

import (
	"encoding/json"
	"testing"
)

// wsRun runs one query as operation id on an open websocket and returns its
// result, after the operation's complete message.
func (c *wsClient) wsRun(id, query string) gqlResponse {
	c.t.Helper()
	c.subscribe(id, query, nil)
	var out gqlResponse
	for {
		m := c.read()
		if m.ID != id {
			c.t.Fatalf("want messages for %s, got %s %s %s", id, m.Type, m.ID, m.Payload)
		}
		switch m.Type {
		case "next":
			if err := json.Unmarshal(m.Payload, &out); err != nil {
				c.t.Fatalf("decode %s: %v", m.Payload, err)
			}
		case "complete":
			return out
		default:
			c.t.Fatalf("operation %s answered %s %s", id, m.Type, m.Payload)
		}
	}
}

// Loaders are made per operation: two operations on one websocket share the
// upgrade request's context, and loaders kept there would serve the second
// run of a query from the first run's cache, without calling the upstream
// and without seeing what changed in between.
func TestWebsocketOperationsHaveTheirOwnLoaders(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	api := g.as(g.signInAPI(t))
	c := api.dialWS(t, nil, nil)

	const q = `{ currentCorporation { id walletRequisites { id } } }`
	type result struct {
		CurrentCorporation struct {
			ID               string `json:"id"`
			WalletRequisites []struct {
				ID string `json:"id"`
			} `json:"walletRequisites"`
		} `json:"currentCorporation"`
	}
	run := func(id string) (result, sandboxStats) {
		g.resetStats(t)
		var d result
		c.wsRun(id, q).decode(t, &d)
		return d, g.stats(t)
	}

	first, s1 := run("1")
	if s1.Total == 0 {
		t.Fatalf("the first run cost no upstream call: %v", s1.Routes)
	}

	var created struct {
		CreateWalletRequisites []struct {
			ID string `json:"id"`
		} `json:"createWalletRequisites"`
	}
	api.query(t, `mutation($corp: ID!) { createWalletRequisites(input: {corporationId: $corp, adapter: ADAPTER_A}) { id } }`,
		map[string]any{"corp": first.CurrentCorporation.ID}).decode(t, &created)
	if len(created.CreateWalletRequisites) != 1 {
		t.Fatalf("created requisites = %+v", created)
	}

	second, s2 := run("2")
	if s2.Total != s1.Total || len(s2.Routes) != len(s1.Routes) {
		t.Errorf("the second operation cost %v, the first %v: each operation must read the upstream itself", s2.Routes, s1.Routes)
	}
	for route, n := range s1.Routes {
		if s2.Routes[route] != n {
			t.Errorf("%s: %d calls in the second operation, %d in the first", route, s2.Routes[route], n)
		}
	}
	if got, want := len(second.CurrentCorporation.WalletRequisites), len(first.CurrentCorporation.WalletRequisites)+1; got != want {
		t.Errorf("the second operation sees %d requisites, want %d: it was served a stale cache", got, want)
	}
	seen := false
	for _, r := range second.CurrentCorporation.WalletRequisites {
		seen = seen || r.ID == created.CreateWalletRequisites[0].ID
	}
	if !seen {
		t.Errorf("the requisites created between the operations are missing from the second")
	}
}
