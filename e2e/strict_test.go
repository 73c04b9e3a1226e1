package e2e

import (
	"strings"
	"testing"
)

// TestStrictSandboxCoreScreens runs the core screens against the strict
// sandbox, which serves only what the specs show: customers with their
// orders, the viewer, the corporation with its wallets, cards. The features
// that need the sandbox's additions say so once in the log and answer a
// client error, and no addition is ever called. The contract validator
// checks the traffic against the strict documents, as for every test.
func TestStrictSandboxCoreScreens(t *testing.T) {
	g := startGateway(t, "-sandbox-strict", "true")
	if n := strings.Count(g.Logs.String(), "strict sandbox: features that need the sandbox's additions are off or degraded"); n != 1 {
		t.Errorf("the strict-mode notice was logged %d times, want once", n)
	}
	api := g.as(g.signInAPI(t))

	var created struct {
		CreateCustomer struct {
			Customer struct {
				ID string `json:"id"`
			} `json:"customer"`
			Orders []struct {
				Token string               `json:"token"`
				Order *struct{ ID string } `json:"order"`
			} `json:"orders"`
		} `json:"createCustomer"`
	}
	api.query(t, `mutation($input: CreateCustomerInput!) {
	  createCustomer(input: $input) { customer { id } orders { token order { id } } }
	}`, map[string]any{"input": map[string]any{
		"number": uniq("ST-"), "contact": map[string]any{"name": "Strict", "email": "strict@example.com"},
		"cardTokens": []string{uniq("tok_ok_")},
		"orders":     []any{map[string]any{"currency": "EUR", "items": map[string]any{"amount": 700}}},
	}}).decode(t, &created)
	if os := created.CreateCustomer.Orders; len(os) != 1 || strings.Count(os[0].Token, ".") != 2 || os[0].Order == nil || os[0].Order.ID == "" {
		t.Errorf("strict mode: want the signed token with its order (confirmed by the listing), got %+v", os)
	}

	var screens struct {
		Customers []struct {
			ID     string `json:"id"`
			Orders []struct {
				ID string `json:"id"`
			} `json:"orders"`
		} `json:"customers"`
		Viewer struct {
			Kind        string `json:"kind"`
			Corporation struct {
				ID      string `json:"id"`
				Wallets []struct {
					ID string `json:"id"`
				} `json:"wallets"`
			} `json:"corporation"`
		} `json:"viewer"`
		Cards []struct {
			ID string `json:"id"`
		} `json:"cards"`
	}
	api.query(t, `{ customers { id orders { id } } viewer { kind corporation { id wallets { id } } } cards { id } }`, nil).decode(t, &screens)
	found := false
	for _, c := range screens.Customers {
		if c.ID == created.CreateCustomer.Customer.ID {
			found = len(c.Orders) == 1
		}
	}
	if !found {
		t.Errorf("the new customer with its order is not on the customers screen: %+v", screens.Customers)
	}
	if screens.Viewer.Corporation.ID == "" || len(screens.Viewer.Corporation.Wallets) == 0 || len(screens.Cards) == 0 {
		t.Errorf("viewer, corporation with wallets, cards: %+v", screens)
	}

	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	var me struct {
		Viewer struct {
			Person struct {
				ID string `json:"id"`
			} `json:"person"`
		} `json:"viewer"`
		Persons struct {
			Edges []struct {
				Node struct {
					ID string `json:"id"`
				} `json:"node"`
			} `json:"edges"`
			PageInfo struct {
				EndCursor string `json:"endCursor"`
			} `json:"pageInfo"`
		} `json:"persons"`
	}
	anna.query(t, `{ viewer { person { id } } persons(first: 100) { edges { node { id } } pageInfo { endCursor } } }`, nil).decode(t, &me)
	if me.Viewer.Person.ID == "" || len(me.Persons.Edges) == 0 {
		t.Errorf("person screens: %+v", me)
	}

	// What needs an addition answers a client error, never INTERNAL.
	if r := api.query(t, `{ individuals { id } }`, nil); r.code() != "UPSTREAM_UNAVAILABLE" {
		t.Errorf("individuals listing in strict mode: %+v", r.Errors)
	}
	if r := anna.query(t, `query($after: String) { persons(first: 10, after: $after) { edges { node { id } } } }`,
		map[string]any{"after": me.Persons.PageInfo.EndCursor}); r.code() != "BAD_USER_INPUT" {
		t.Errorf("paging past the first page in strict mode: %+v", r.Errors)
	}

	for route := range g.stats(t).Routes {
		for _, addition := range []string{"/payments/v1/events", "/payments/v3/individuals", "jwks", "meta"} {
			if strings.HasSuffix(route, addition) || strings.Contains(route, addition+"?") {
				t.Errorf("strict mode called the addition %s", route)
			}
		}
	}
}
