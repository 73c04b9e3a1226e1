package e2e

import (
	"slices"
	"testing"
)

// changedCustomer is a customer as a mutation's payload answers it: what a
// normalized client cache (Apollo's InMemoryCache, urql's graphcache,
// Relay's store) merges into the customer it holds, by id.
type changedCustomer struct {
	Typename string `json:"__typename"`
	ID       string `json:"id"`
	Contact  struct {
		Name  string `json:"name"`
		Email string `json:"email"`
	} `json:"contact"`
	PaymentMethods []struct {
		Token string `json:"token"`
	} `json:"paymentMethods"`
}

// TestMutationAnswersCarryTheCustomerTheyChanged: updateCustomerContact
// and addPaymentMethod answer the customer they changed, with the id a
// query of it gave and its state after the change, for the merchant and
// in a customer session (where no customer id is sent).
func TestMutationAnswersCarryTheCustomerTheyChanged(t *testing.T) {
	g := startGateway(t)
	api := g.as(g.signInAPI(t))
	id, _ := createCustomer(t, api, uniq("tok_ok_"))
	// What a client cached before the change.
	var before struct {
		Customer changedCustomer `json:"customer"`
	}
	api.query(t, `query($id: ID!) { customer(id: $id) { __typename id contact { name email } paymentMethods { token } } }`,
		map[string]any{"id": id}).decode(t, &before)
	if before.Customer.ID != id {
		t.Fatalf("the customer read back: %+v, want id %s", before.Customer, id)
	}

	var upd struct {
		UpdateCustomerContact struct {
			Customer changedCustomer `json:"customer"`
		} `json:"updateCustomerContact"`
	}
	api.query(t, `mutation($input: UpdateCustomerContactInput!) { updateCustomerContact(input: $input) {
	  contact { name } customer { __typename id contact { name email } } } }`,
		map[string]any{"input": map[string]any{"customerId": id, "contact": map[string]any{"name": "Cached Then Renamed", "email": "renamed@example.com"}}}).decode(t, &upd)
	c := upd.UpdateCustomerContact.Customer
	if c.Typename != "Customer" || c.ID != id || c.Contact.Name != "Cached Then Renamed" || c.Contact.Email != "renamed@example.com" {
		t.Errorf("updateCustomerContact's customer: %+v, want Customer %s with the new contact", c, id)
	}

	var add struct {
		AddPaymentMethod struct {
			PaymentMethod struct {
				Token string `json:"token"`
			} `json:"paymentMethod"`
			Customer changedCustomer `json:"customer"`
		} `json:"addPaymentMethod"`
	}
	api.query(t, `mutation($input: AddPaymentMethodInput!) { addPaymentMethod(input: $input) {
	  paymentMethod { token } customer { __typename id paymentMethods { token } } } }`,
		map[string]any{"input": map[string]any{"customerId": id, "cardToken": uniq("tok_ok_")}}).decode(t, &add)
	a := add.AddPaymentMethod
	if a.Customer.ID != id || len(a.Customer.PaymentMethods) != len(before.Customer.PaymentMethods)+1 ||
		!slices.ContainsFunc(a.Customer.PaymentMethods, func(m struct {
			Token string `json:"token"`
		}) bool {
			return m.Token == a.PaymentMethod.Token
		}) {
		t.Errorf("addPaymentMethod's customer: %+v, want %s with the new card %s beside %d", a.Customer, id, a.PaymentMethod.Token, len(before.Customer.PaymentMethods))
	}

	// A customer session names no customer; the answer still carries it.
	var signed struct {
		SignInCustomer struct {
			SessionToken string `json:"sessionToken"`
		} `json:"signInCustomer"`
	}
	g.query(t, `mutation($k: String!) { signInCustomer(input: {customerKey: $k}) { sessionToken } }`,
		map[string]any{"k": "ck_sandbox_demo"}).decode(t, &signed)
	me := g.as(signed.SignInCustomer.SessionToken)
	var cur struct {
		CurrentCustomer struct {
			ID string `json:"id"`
		} `json:"currentCustomer"`
	}
	me.query(t, `{ currentCustomer { id } }`, nil).decode(t, &cur)
	me.query(t, `mutation { updateCustomerContact(input: {contact: {name: "Anna Self", email: "anna.self@example.com"}}) { customer { id contact { name email } } } }`, nil).decode(t, &upd)
	if c := upd.UpdateCustomerContact.Customer; c.ID != cur.CurrentCustomer.ID || c.Contact.Name != "Anna Self" {
		t.Errorf("a customer session's updateCustomerContact: %+v, want %s with the new contact", c, cur.CurrentCustomer.ID)
	}
}

// TestConversionAnswersBothWallets: createConversion answers the two
// wallets it changed, each with its id and its balance after the
// conversion, as a query of them reads it then.
func TestConversionAnswersBothWallets(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	type wallet struct {
		ID      string `json:"id"`
		Balance struct {
			Amount int64 `json:"amount"`
		} `json:"balance"`
	}
	var d struct {
		CreateConversion struct {
			Typename     string  `json:"__typename"`
			SourceWallet *wallet `json:"sourceWallet"`
			TargetWallet *wallet `json:"targetWallet"`
		} `json:"createConversion"`
	}
	anna.query(t, `mutation($input: CreateConversionInput!) { createConversion(input: $input) { __typename
	  ... on Conversion { sourceWallet { id balance { amount } } targetWallet { id balance { amount } } } } }`,
		map[string]any{"input": map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 1000, "currency": "EUR"}}).decode(t, &d)
	c := d.CreateConversion
	if c.Typename != "Conversion" || c.SourceWallet == nil || c.TargetWallet == nil || c.SourceWallet.ID == c.TargetWallet.ID {
		t.Fatalf("createConversion's wallets: %+v", c)
	}
	for _, w := range []*wallet{c.SourceWallet, c.TargetWallet} {
		var now struct {
			Node *wallet `json:"node"`
		}
		anna.query(t, `query($id: ID!) { node(id: $id) { ... on Wallet { id balance { amount } } } }`, map[string]any{"id": w.ID}).decode(t, &now)
		if now.Node == nil || now.Node.Balance.Amount != w.Balance.Amount {
			t.Errorf("wallet %s answered with balance %d; a query of it now: %+v", w.ID, w.Balance.Amount, now.Node)
		}
	}
}
