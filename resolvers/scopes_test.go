package resolvers

import (
	"testing"

	"github.com/fingraph/fingraph/relay"
)

// Who may call what: each root field's @requires role, applied by the
// directives as app wires them, before any resolver runs. A refused call
// costs the upstreams nothing.
func TestWhoMayCallWhat(t *testing.T) {
	customers := `{ customers { id } }`
	persons := `{ persons(first: 5) { totalCount } }`
	deleteKey := `mutation($in: DeleteApiKeyInput!) { deleteApiKey(input: $in) }`
	keyVars := map[string]any{"in": map[string]any{"corporationId": relay.ID(relay.Corporation, demoCorp), "id": "key-1"}}

	for _, tc := range []struct {
		name  string
		query string
		vars  map[string]any
		who   principal
		// want is the error code, "" when the call is allowed.
		want string
	}{
		{"customers/staff", customers, nil, staff, ""},
		{"customers/merchant's API client", customers, nil, apiClient, ""},
		{"customers/another corporation's API client", customers, nil, outsider, "FORBIDDEN"},
		{"customers/person", customers, nil, person, "FORBIDDEN"},
		{"customers/introducer", customers, nil, introducer, "FORBIDDEN"},
		{"customers/payments customer", customers, nil, customer, "FORBIDDEN"},
		{"customers/anonymous", customers, nil, anonymous, "UNAUTHENTICATED"},

		{"persons/staff", persons, nil, staff, ""},
		{"persons/person", persons, nil, person, ""},
		{"persons/API client", persons, nil, apiClient, ""},
		{"persons/payments customer", persons, nil, customer, "FORBIDDEN"},
		{"persons/anonymous", persons, nil, anonymous, "UNAUTHENTICATED"},

		{"deleteApiKey/staff", deleteKey, keyVars, staff, ""},
		{"deleteApiKey/API client", deleteKey, keyVars, apiClient, "FORBIDDEN"},
		{"deleteApiKey/person", deleteKey, keyVars, person, "FORBIDDEN"},
		{"deleteApiKey/anonymous", deleteKey, keyVars, anonymous, "UNAUTHENTICATED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.banking.apiKeys.add(demoCorp, &bankingAPIKey{ID: "key-1", Name: "ci"})
			resp := h.as(tc.who).exec(tc.query, tc.vars)
			if tc.want == "" {
				resp.noErrors(t)
				if h.payments.total()+h.banking.total() == 0 {
					t.Fatal("an allowed call reached no upstream")
				}
				return
			}
			if got := resp.code(t); got != tc.want {
				t.Fatalf("code %s, want %s: %s", got, tc.want, resp)
			}
			if n := h.payments.total() + h.banking.total(); n != 0 {
				t.Fatalf("a refused call made %d upstream calls, want none", n)
			}
		})
	}
}

// A payments customer session acts on its own customer only: `me` and its
// own id read it, another customer's id is refused without an upstream call.
func TestCustomerSessionReadsOnlyItself(t *testing.T) {
	h := newHarness(t)
	h.payments.customers.add(paymentsCustomer{ID: "cus-2", Number: "C-2"})
	h.as(customer)

	var own struct {
		CurrentCustomer struct{ Number string } `json:"currentCustomer"`
	}
	h.exec(`{ currentCustomer { number } }`, nil).decode(t, &own)
	if own.CurrentCustomer.Number != "C-1" {
		t.Fatalf("currentCustomer is %q, want the session's own C-1", own.CurrentCustomer.Number)
	}

	before := h.payments.customers.calls("Get")
	resp := h.exec(`query($id: ID!) { customer(id: $id) { number } }`, map[string]any{"id": relay.ID(relay.Customer, "cus-2")})
	if got := resp.code(t); got != "FORBIDDEN" {
		t.Fatalf("another customer's read: %s, want FORBIDDEN", resp)
	}
	if h.payments.customers.calls("Get") != before {
		t.Fatal("the refused read asked the upstream")
	}
}
