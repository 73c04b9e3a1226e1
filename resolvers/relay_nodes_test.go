package resolvers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
)

// node(id) and nodes(ids): every node type read by its global id with the
// caller's credentials, role and tenant; what the caller may not see is
// NOT_FOUND, whether it exists or not.

const nodeQuery = `query($id: ID!) { node(id: $id) { __typename id } }`

// seedNodes gives the harness one object of every node type, of the demo
// corporation, and a wallet of the other corporation.
func seedNodes(h *harness) {
	h.payments.orders.add(payments.Order{ID: "ord-1", Created: time.Now().UTC().Add(-time.Hour), Currency: "EUR", Amount: 5, Status: "authorized"})
	h.payments.events.add(payments.Event{ID: "ev-1", Name: "OrderCreated", Payload: json.RawMessage(`{"order_id":"ord-1"}`)})
	b := h.banking
	b.wallets.add(otherCorp, &bankingWallet{ID: "wallet-other", Name: "Theirs", Currency: "EUR", Type: "real"})
	b.requisites.add(demoCorp, &banking.Requisites{ID: "req-1", Number: "LV00", Type: "iban"})
	b.kyc.add(demoCorp, &banking.KYCDocument{ID: "doc-1", Name: "passport", Type: "passport"})
	b.invoices.add(demoCorp, &banking.Invoice{ID: "inv-1", Amount: 100, Currency: "EUR"})
	b.limits.add(demoCorp, &banking.Limit{ID: "lim-1", PaymentMethod: "card", TransactionType: "purchase"})
	b.cards.add(&banking.Card{ID: "card-1", Status: "active", Type: "virtual", Currency: "EUR", FundingSourceID: demoWalletEUR,
		Cardholder: banking.CardholderRef{ExternalID: demoPerson}})
	b.cards.transactions["card-1"] = []*banking.CardTransaction{{ID: "ctx-1", Type: "purchase", SourceAmount: 5, SourceCurrency: "EUR"}}
}

// Every node type is read by its global id and answered as its own type,
// under the same id.
func TestNodeReadsEveryType(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id, typename string
		who          principal
	}{
		{globalCustomer(demoCustomer), "Customer", staff},
		{globalOrder("ord-1"), "Order", staff},
		{relay.ID(relay.Event, "ev-1"), "Event", staff},
		{relay.ID(relay.Person, demoPerson), "Person", person},
		{relay.ID(relay.Corporation, demoCorp), "Corporation", person},
		{relay.ID(relay.Card, "card-1"), "Card", person},
		{relay.ID(relay.CardTransaction, "card-1", "ctx-1"), "CardTransaction", person},
		{relay.ID(relay.Wallet, demoCorp, demoWalletEUR), "Wallet", person},
		{relay.ID(relay.WalletRequisites, demoCorp, "req-1"), "WalletRequisites", person},
		{relay.ID(relay.KycDocument, demoCorp, "doc-1"), "KycDocument", person},
		{relay.ID(relay.Invoice, demoCorp, "inv-1"), "Invoice", person},
		{relay.ID(relay.Limit, demoCorp, "lim-1"), "Limit", person},
	} {
		t.Run(tc.typename, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			seedNodes(h)
			var got struct {
				Node struct {
					Typename string `json:"__typename"`
					ID       string
				}
			}
			h.as(tc.who).exec(nodeQuery, map[string]any{"id": tc.id}).decode(t, &got)
			if got.Node.Typename != tc.typename || got.Node.ID != tc.id {
				t.Fatalf("node %+v, want the %s %s", got.Node, tc.typename, tc.id)
			}
		})
	}
}

// What the caller may not see is NOT_FOUND, told apart from nothing that
// does not exist: another tenant's object, a type its role may not read
// (without an upstream call), an object the upstream hides from it (403)
// or does not have (404), a malformed id. An upstream that fails is not
// hidden.
func TestNodeHidesWhatTheCallerMayNotSee(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		who   principal
		id    string
		fail  func(h *harness)
		want  string
		calls bool
	}{
		{"signed out", anonymous, globalOrder("ord-1"), nil, "UNAUTHENTICATED", false},
		{"malformed", staff, "not-an-id", nil, "NOT_FOUND", false},
		{"a person reads a customer", person, globalCustomer(demoCustomer), nil, "NOT_FOUND", false},
		{"a person reads an order", person, globalOrder("ord-1"), nil, "NOT_FOUND", false},
		{"a payments customer reads a person", customer, relay.ID(relay.Person, demoPerson), nil, "NOT_FOUND", false},
		{"a payments customer reads another customer", customer, globalCustomer("cus-2"), nil, "NOT_FOUND", false},
		{"another corporation's wallet", person, relay.ID(relay.Wallet, otherCorp, "wallet-other"), nil, "NOT_FOUND", false},
		{"another corporation", apiClient, relay.ID(relay.Corporation, otherCorp), nil, "NOT_FOUND", false},
		{"another corporation's limit", person, relay.ID(relay.Limit, otherCorp, "limit-1"), nil, "NOT_FOUND", false},
		{"a wallet under another corporation's id", person, relay.ID(relay.Wallet, demoCorp, "wallet-other"), nil, "NOT_FOUND", true},
		{"a requisite that is not there", person, relay.ID(relay.WalletRequisites, demoCorp, "req-none"), nil, "NOT_FOUND", true},
		{"an order not listed", staff, globalOrder("ord-none"), nil, "NOT_FOUND", true},
		{"a card the viewer does not hold", person, relay.ID(relay.Card, "card-none"), nil, "NOT_FOUND", true},
		{"a transaction of no card", person, relay.ID(relay.CardTransaction, "card-none", "ctx-1"), nil, "NOT_FOUND", true},
		{"a transaction not there", person, relay.ID(relay.CardTransaction, "card-1", "ctx-none"), nil, "NOT_FOUND", true},
		{"a person the upstream hides", person, relay.ID(relay.Person, demoPerson), func(h *harness) {
			h.banking.persons.failNext("List", bankingRejection(http.StatusForbidden, 0, "", "not yours"))
		}, "NOT_FOUND", true},
		{"a customer the upstream does not have", staff, globalCustomer("cus-none"), nil, "NOT_FOUND", true},
		{"the upstream fails", staff, globalCustomer(demoCustomer), func(h *harness) {
			h.payments.customers.failNext("Get", unavailable("payments"))
		}, "UPSTREAM_UNAVAILABLE", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			seedNodes(h)
			h.payments.customers.add(paymentsCustomer{ID: "cus-2", Number: "C-2"})
			if tc.fail != nil {
				tc.fail(h)
			}
			resp := h.as(tc.who).exec(nodeQuery, map[string]any{"id": tc.id})
			e := refused(t, resp, tc.want, "")
			if tc.want == "NOT_FOUND" && e.Message != "no object has this id" {
				t.Fatalf("message %q tells more than that nothing is there", e.Message)
			}
			if calls := h.payments.total()+h.banking.total() > 0; calls != tc.calls {
				t.Fatalf("upstream called: %v, want %v", calls, tc.calls)
			}
		})
	}
}

// A payments customer session reads its own customer as a node, as
// currentCustomer does.
func TestCustomerSessionReadsItsOwnNode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var got struct {
		Node struct {
			ID     string
			Number string
		}
	}
	h.as(customer).exec(`query($id: ID!) { node(id: $id) { id ... on Customer { number } } }`, map[string]any{"id": globalCustomer(demoCustomer)}).decode(t, &got)
	if got.Node.Number != "C-1" {
		t.Fatalf("own node %+v", got.Node)
	}
	if h.payments.customers.calls("List") != 0 {
		t.Fatal("a customer session listed the merchant's customers")
	}
}

// A card's transactions are looked up page by page, newest first, as far
// as the upstream pages: one past the first page is found where offset
// paging is offered, not where it is not.
func TestCardTransactionNodeReadsFurtherPages(t *testing.T) {
	t.Parallel()
	for _, specOnly := range []bool{false, true} {
		h := newHarness(t)
		seedNodes(h)
		h.banking.specOnly = specOnly
		var list []*banking.CardTransaction
		for i := range 150 {
			list = append(list, &banking.CardTransaction{ID: fmt.Sprint("ctx-", i), Type: "purchase"})
		}
		h.banking.cards.transactions["card-1"] = list
		resp := h.as(person).exec(nodeQuery, map[string]any{"id": relay.ID(relay.CardTransaction, "card-1", "ctx-120")})
		if specOnly {
			refused(t, resp, "NOT_FOUND", "")
		} else {
			resp.noErrors(t)
		}
		if pages := h.banking.cards.calls("Transactions"); specOnly && pages != 1 || !specOnly && pages != 2 {
			t.Fatalf("spec only %v: %d pages read", specOnly, pages)
		}
	}
}

// nodes(ids) reads up to 100 objects, each null with its own error when
// the caller may not see it, without failing the others; several
// customers cost one customer listing (and a read of one it lacks).
func TestNodesReadsEachIDOnItsOwn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedNodes(h)
	h.payments.customers.add(paymentsCustomer{ID: "cus-2", Number: "C-2"})
	h.as(staff)
	query := `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`
	ids := []any{globalCustomer(demoCustomer), "bogus", globalCustomer("cus-2"), globalOrder("ord-1"), globalCustomer("cus-none")}
	resp := h.exec(query, map[string]any{"ids": ids})
	var got struct {
		Nodes []*struct {
			Typename string `json:"__typename"`
			ID       string
		}
	}
	if err := json.Unmarshal(resp.Data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Nodes) != 5 || got.Nodes[0].ID != ids[0] || got.Nodes[1] != nil || got.Nodes[2].ID != ids[2] || got.Nodes[3].Typename != "Order" || got.Nodes[4] != nil {
		t.Fatalf("nodes %s", resp.Data)
	}
	if len(resp.Errors) != 2 {
		t.Fatalf("errors %s, want two", resp)
	}
	for _, e := range resp.Errors {
		if e.Code() != "NOT_FOUND" || len(e.Path) != 2 || (e.Path[1] != 1.0 && e.Path[1] != 4.0) {
			t.Fatalf("error %+v, want NOT_FOUND at nodes.1 and nodes.4", e)
		}
	}
	// The customers the listing holds cost it alone; the one it lacks is
	// asked for by id.
	if l, g := h.payments.customers.calls("List"), h.payments.customers.calls("Get"); l != 1 || g != 1 {
		t.Fatalf("%d customer listings and %d reads by id, want one listing and one read of cus-none", l, g)
	}

	many := make([]any, MaxNodes+1)
	for i := range many {
		many[i] = globalOrder(fmt.Sprint(i))
	}
	calls := h.payments.total()
	wantFieldError(t, h.exec(query, map[string]any{"ids": many}), "ids")
	if h.payments.total() != calls {
		t.Fatal("too many ids reached the upstream")
	}

	// A person's nodes of customers cost nothing: it may not read them.
	h = newHarness(t)
	h.as(person).exec(query, map[string]any{"ids": []any{globalCustomer(demoCustomer), globalCustomer("cus-2")}})
	if n := h.payments.total(); n != 0 {
		t.Fatalf("a person's customer nodes made %d payments calls", n)
	}
}

// A card names its funding wallet by the wallet's global id, under the
// corporation of the viewer or, for staff, of the cardholder; where no
// corporation can be found the raw id is answered, which wallet arguments
// still accept. A card without a funding wallet names none.
func TestCardNamesItsFundingWalletByGlobalID(t *testing.T) {
	t.Parallel()
	query := `query($id: ID!) { node(id: $id) { ... on Card { fundingWalletId } } }`
	for _, tc := range []struct {
		name   string
		who    principal
		card   *banking.Card
		wallet string
	}{
		{"the viewer's", person, &banking.Card{ID: "card-1", FundingSourceID: demoWalletEUR}, relay.ID(relay.Wallet, demoCorp, demoWalletEUR)},
		{"staff, the cardholder's", staff, &banking.Card{ID: "card-1", FundingSourceID: demoWalletEUR, Cardholder: banking.CardholderRef{ExternalID: demoPerson}},
			relay.ID(relay.Wallet, demoCorp, demoWalletEUR)},
		{"staff, no cardholder", staff, &banking.Card{ID: "card-1", FundingSourceID: demoWalletEUR, Cardholder: banking.CardholderRef{ExternalID: "person-gone"}}, demoWalletEUR},
		{"none", person, &banking.Card{ID: "card-1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.banking.cards.add(tc.card)
			var got struct {
				Node struct{ FundingWalletID string }
			}
			h.as(tc.who).exec(query, map[string]any{"id": relay.ID(relay.Card, "card-1")}).decode(t, &got)
			if got.Node.FundingWalletID != tc.wallet {
				t.Fatalf("fundingWalletId %q, want %q", got.Node.FundingWalletID, tc.wallet)
			}
		})
	}
	h := newHarness(t)
	h.banking.cards.add(&banking.Card{ID: "card-1", FundingSourceID: demoWalletEUR, Cardholder: banking.CardholderRef{ExternalID: demoPerson}})
	h.banking.persons.failNext("List", unavailable("banking"))
	refused(t, h.as(staff).exec(query, map[string]any{"id": relay.ID(relay.Card, "card-1")}), "UPSTREAM_UNAVAILABLE", "")
}
