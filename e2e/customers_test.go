package e2e

import (
	"strings"
	"testing"
)

// Tests of customer contact and card management through the graph.

const addMethodMutation = `mutation($input: AddPaymentMethodInput!) {
  addPaymentMethod(input: $input) {
    paymentMethod { token last4 }
    orders { token order { id status amount { amount currency } customer { id } } }
  }
}`

type signedOrder struct {
	Token string `json:"token"`
	Order struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Amount struct {
			Amount   int64  `json:"amount"`
			Currency string `json:"currency"`
		} `json:"amount"`
		Customer *struct {
			ID string `json:"id"`
		} `json:"customer"`
	} `json:"order"`
}

func TestCreateCustomerWithOrdersReturnsVerifiedSignedOrders(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	var d struct {
		CreateCustomer struct {
			Customer struct {
				ID     string `json:"id"`
				Orders []struct {
					ID string `json:"id"`
				} `json:"orders"`
			} `json:"customer"`
			Orders []signedOrder `json:"orders"`
		} `json:"createCustomer"`
	}
	g.query(t, `mutation($input: CreateCustomerInput!) {
	  createCustomer(input: $input) { customer { id orders { id } } orders { token order { id status amount { amount currency } customer { id } } } }
	}`, map[string]any{"input": map[string]any{
		"number": uniq("SO-"), "contact": map[string]any{"name": "Signed Orders", "email": "so@example.com"},
		"cardTokens": []string{uniq("tok_ok_")},
		"orders": []any{
			map[string]any{"number": "first", "currency": "EUR", "items": map[string]any{"item": map[string]any{"name": "Plan", "amount": 990}}},
			map[string]any{"currency": "EUR", "autoCharge": true, "items": map[string]any{"amount": 250}},
		},
	}}).decode(t, &d)
	c := d.CreateCustomer
	if len(c.Orders) != 2 {
		t.Fatalf("want two signed orders, got %+v", c.Orders)
	}
	for i, want := range []struct {
		amount int64
		status string
	}{{990, "AUTHORIZED"}, {250, "CAPTURED"}} {
		so := c.Orders[i]
		if strings.Count(so.Token, ".") != 2 || so.Order.ID == "" || so.Order.Amount.Amount != want.amount || so.Order.Status != want.status {
			t.Errorf("signed order %d: %+v", i, so)
		}
		if so.Order.Customer == nil || so.Order.Customer.ID != c.Customer.ID {
			t.Errorf("signed order %d is not the new customer's: %+v", i, so.Order.Customer)
		}
	}
	if len(c.Customer.Orders) != 2 {
		t.Errorf("the customer's orders: %+v", c.Customer.Orders)
	}
}

func TestAddPaymentMethodAndSingleUseTokens(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	customerID, _ := createCustomer(t, g)
	token := uniq("tok_ok_")
	var d struct {
		AddPaymentMethod struct {
			PaymentMethod struct{ Token, Last4 string } `json:"paymentMethod"`
			Orders        []signedOrder                 `json:"orders"`
		} `json:"addPaymentMethod"`
	}
	g.query(t, addMethodMutation, map[string]any{"input": map[string]any{"customerId": customerID, "cardToken": token}}).decode(t, &d)
	if !strings.HasPrefix(d.AddPaymentMethod.PaymentMethod.Token, "pm_") || d.AddPaymentMethod.PaymentMethod.Last4 != "4242" || len(d.AddPaymentMethod.Orders) != 0 {
		t.Fatalf("addPaymentMethod: %+v", d)
	}

	// The card token was consumed: using it again is refused upstream.
	reuse := g.query(t, addMethodMutation, map[string]any{"input": map[string]any{"customerId": customerID, "cardToken": token}})
	if reuse.code() != "UPSTREAM_REJECTED" || reuse.Errors[0].Extensions["upstream"].(map[string]any)["code"] != "card_token_used" {
		t.Errorf("reused card token: %+v", reuse.Errors)
	}
	reuseOrder := g.query(t, createOrderMutation, map[string]any{"input": map[string]any{"currency": "EUR", "items": map[string]any{"amount": 5},
		"payment": map[string]any{"card": map[string]any{"token": token}}}})
	if reuseOrder.code() != "UPSTREAM_REJECTED" {
		t.Errorf("reused card token in an order: %+v", reuseOrder.Errors)
	}

	// With an order: the card authorises it and the order comes back signed.
	g.query(t, addMethodMutation, map[string]any{"input": map[string]any{"customerId": customerID, "cardToken": uniq("tok_ok_"),
		"orders": []any{map[string]any{"currency": "EUR", "items": map[string]any{"amount": 4200}}}}}).decode(t, &d)
	if len(d.AddPaymentMethod.Orders) != 1 || d.AddPaymentMethod.Orders[0].Order.Amount.Amount != 4200 || d.AddPaymentMethod.Orders[0].Token == "" {
		t.Errorf("addPaymentMethod with an order: %+v", d.AddPaymentMethod.Orders)
	}

	if resp := g.query(t, addMethodMutation, map[string]any{"input": map[string]any{"customerId": "00000000-0000-0000-0000-000000000000", "cardToken": uniq("tok_ok_")}}); resp.code() != "NOT_FOUND" {
		t.Errorf("unknown customer: want NOT_FOUND, got %+v", resp.Errors)
	}
	if resp := g.query(t, `mutation($c: ID!) { addPaymentMethod(input: {customerId: $c, cardToken: "tok_ok_inline"}) { paymentMethod { token } } }`,
		map[string]any{"c": customerID}); resp.code() != "BAD_USER_INPUT" {
		t.Errorf("card token written into the query: %+v", resp.Errors)
	}
}

func TestSetPaymentMethodsReordersWithoutChangingCards(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	customerID, methods := createCustomer(t, g, uniq("tok_ok_"), uniq("tok_ok_"), uniq("tok_ok_"))
	if len(methods) != 3 {
		t.Fatalf("want three cards, got %v", methods)
	}
	const set = `mutation($input: SetPaymentMethodsInput!) { setPaymentMethods(input: $input) { customer { paymentMethods { token last4 expiresMonth } } } }`
	var d struct {
		SetPaymentMethods struct {
			Customer struct {
				PaymentMethods []struct {
					Token string `json:"token"`
				} `json:"paymentMethods"`
			} `json:"customer"`
		} `json:"setPaymentMethods"`
	}
	g.query(t, set, map[string]any{"input": map[string]any{"customerId": customerID, "methodTokens": []string{methods[2], methods[0]}}}).decode(t, &d)
	got := []string{}
	for _, m := range d.SetPaymentMethods.Customer.PaymentMethods {
		got = append(got, m.Token)
	}
	if strings.Join(got, ",") != methods[2]+","+methods[0] {
		t.Fatalf("methods after reorder = %v, want [%s %s]", got, methods[2], methods[0])
	}

	g.resetStats(t)
	for name, tokens := range map[string][]string{
		"unknown token":   {methods[0], "pm_not_hers"},
		"duplicate token": {methods[0], methods[0]},
		"removed token":   {methods[1]},
	} {
		resp := g.query(t, set, map[string]any{"input": map[string]any{"customerId": customerID, "methodTokens": tokens}})
		if resp.code() != "BAD_USER_INPUT" || !strings.HasPrefix(resp.Errors[0].Extensions["field"].(string), "input.methodTokens[") {
			t.Errorf("%s: want BAD_USER_INPUT on input.methodTokens[i], got %+v", name, resp.Errors)
		}
	}
	if s := g.stats(t); s.Routes["PUT /payments/v1/customer/{customer_id}/methods"] != 0 {
		t.Errorf("a refused reorder reached the upstream: %v", s.Routes)
	}
	if resp := g.query(t, set, map[string]any{"input": map[string]any{"customerId": "00000000-0000-0000-0000-000000000000", "methodTokens": []string{}}}); resp.code() != "NOT_FOUND" {
		t.Errorf("unknown customer: %+v", resp.Errors)
	}
}

func TestUpdateCustomerContactAndSavedCardOwnership(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	customerID, methods := createCustomer(t, g, uniq("tok_ok_"))
	otherID, _ := createCustomer(t, g, uniq("tok_ok_"))
	var d struct {
		UpdateCustomerContact struct {
			Contact struct {
				Name, Email string
				Type        string `json:"type"`
				Address     struct {
					City, CountryCode string
				} `json:"address"`
			} `json:"contact"`
		} `json:"updateCustomerContact"`
	}
	const update = `mutation($input: UpdateCustomerContactInput!) { updateCustomerContact(input: $input) { contact { name email type address { city countryCode } } } }`
	g.query(t, update, map[string]any{"input": map[string]any{"customerId": customerID, "contact": map[string]any{
		"name": "Renamed AB", "email": "billing@renamed.example", "type": "ORGANISATION",
		"address": map[string]any{"city": "Riga", "countryCode": "LV"}}}}).decode(t, &d)
	c := d.UpdateCustomerContact.Contact
	if c.Name != "Renamed AB" || c.Type != "ORGANISATION" || c.Address.CountryCode != "LV" {
		t.Errorf("contact as stored: %+v", c)
	}
	if resp := g.query(t, update, map[string]any{"input": map[string]any{"customerId": customerID, "contact": map[string]any{
		"name": "X", "email": "x@example.com", "address": map[string]any{"countryCode": "Latvia"}}}}); resp.code() != "BAD_USER_INPUT" {
		t.Errorf("bad country code: %+v", resp.Errors)
	}
	if resp := g.query(t, update, map[string]any{"input": map[string]any{"contact": map[string]any{"name": "X", "email": "x@example.com"}}}); resp.code() != "BAD_USER_INPUT" {
		t.Errorf("no customer outside a customer session: %+v", resp.Errors)
	}
	if resp := g.query(t, update, map[string]any{"input": map[string]any{"customerId": "00000000-0000-0000-0000-000000000000",
		"contact": map[string]any{"name": "X", "email": "x@example.com"}}}); resp.code() != "NOT_FOUND" {
		t.Errorf("unknown customer: %+v", resp.Errors)
	}

	// A stored card pays only for its own customer.
	resp := g.query(t, createOrderMutation, map[string]any{"input": map[string]any{"currency": "EUR", "customerId": otherID,
		"items": map[string]any{"amount": 100}, "payment": map[string]any{"savedCard": map[string]any{"methodToken": methods[0], "initiator": "CARDHOLDER"}}}})
	if resp.code() != "BAD_USER_INPUT" || resp.Errors[0].Extensions["field"] != "input.payment.savedCard.methodToken" {
		t.Errorf("another customer's card: %+v", resp.Errors)
	}
	// An unknown customer is the upstream's to refuse.
	unknown := g.query(t, createOrderMutation, map[string]any{"input": map[string]any{"currency": "EUR", "customerId": "00000000-0000-0000-0000-000000000000",
		"items": map[string]any{"amount": 100}, "payment": map[string]any{"customer": map[string]any{}}}})
	if unknown.code() != "UPSTREAM_REJECTED" {
		t.Errorf("customer payment for an unknown customer: %+v", unknown.Errors)
	}
	var q struct {
		Customer *struct{ ID string } `json:"customer"`
	}
	g.query(t, `{ customer(id: "00000000-0000-0000-0000-000000000000") { id } }`, nil).decode(t, &q)
	if q.Customer != nil {
		t.Errorf("unknown customer: want null, got %+v", q.Customer)
	}
}

func TestCustomerSessionManagesItsOwnCustomer(t *testing.T) {
	g := startGateway(t)
	if resp := g.query(t, `{ currentCustomer { id } }`, nil); resp.code() != "UNAUTHENTICATED" {
		t.Errorf("currentCustomer without a session: %+v", resp.Errors)
	}
	if resp := g.queryAs(t, g.signInAPI(t), `{ currentCustomer { id } }`, nil); resp.code() != "UNAUTHENTICATED" {
		t.Errorf("currentCustomer in an API session: %+v", resp.Errors)
	}
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
			ID             string `json:"id"`
			Number         string `json:"number"`
			PaymentMethods []struct {
				Token string `json:"token"`
			} `json:"paymentMethods"`
			Orders []struct {
				ID       string `json:"id"`
				Customer struct {
					ID string `json:"id"`
				} `json:"customer"`
			} `json:"orders"`
		} `json:"currentCustomer"`
	}
	g.resetStats(t)
	me.query(t, `{ currentCustomer { id number paymentMethods { token } orders { id customer { id } } } }`, nil).decode(t, &cur)
	c := cur.CurrentCustomer
	if c.Number != "C-1001" || len(c.Orders) == 0 || len(c.PaymentMethods) == 0 {
		t.Fatalf("currentCustomer: %+v", c)
	}
	for _, o := range c.Orders {
		if o.Customer.ID != c.ID {
			t.Errorf("order %s of another customer in a customer session", o.ID)
		}
	}
	if s := g.stats(t); s.Routes["GET /payments/v1/customer"] != 0 {
		t.Errorf("a customer session listed the merchant's customers: %v", s.Routes)
	}

	var upd struct {
		UpdateCustomerContact struct {
			Contact struct{ Name string } `json:"contact"`
		} `json:"updateCustomerContact"`
	}
	me.query(t, `mutation { updateCustomerContact(input: {contact: {name: "Anna L.", email: "anna.l@example.com"}}) { contact { name } } }`, nil).decode(t, &upd)
	if upd.UpdateCustomerContact.Contact.Name != "Anna L." {
		t.Errorf("own contact update: %+v", upd)
	}
	otherID, _ := createCustomer(t, g.as(g.signInAPI(t)))
	if resp := me.query(t, `mutation($id: ID!) { updateCustomerContact(input: {customerId: $id, contact: {name: "X", email: "x@example.com"}}) { contact { name } } }`,
		map[string]any{"id": otherID}); resp.code() != "BAD_USER_INPUT" {
		t.Errorf("a customer naming another customer: %+v", resp.Errors)
	}
	var set struct {
		SetPaymentMethods struct {
			Customer struct {
				PaymentMethods []struct{ Token string } `json:"paymentMethods"`
			} `json:"customer"`
		} `json:"setPaymentMethods"`
	}
	me.query(t, `mutation($t: [ID!]!) { setPaymentMethods(input: {methodTokens: $t}) { customer { paymentMethods { token } } } }`,
		map[string]any{"t": []string{c.PaymentMethods[0].Token}}).decode(t, &set)
	if got := set.SetPaymentMethods.Customer.PaymentMethods; len(got) != 1 || got[0].Token != c.PaymentMethods[0].Token {
		t.Errorf("own reorder: %+v", got)
	}
}

// TestSubscriptionsNeedTheirSessionOverWebsocket: over a websocket, the
// events subscription needs a session (connection_init's sessionToken),
// and the payments-only ones an operator that is staff or an API client.
// Who may call the other event operations is the resolvers' tests'
// (resolvers.TestEventOperationsNeedAPaymentsOperator).
func TestSubscriptionsNeedTheirSessionOverWebsocket(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	// A dashboard's subscription needs a session; a payments-only one an
	// operator that is staff or an API client.
	for name, c := range map[string]struct {
		init map[string]any
		sub  string
	}{
		"no session": {map[string]any{}, `subscription { events ` + liveFields + ` }`},
		"a person":   {map[string]any{"sessionToken": anna.bearer}, `subscription { orderUpdates(orderId: "o-1") ` + liveFields + ` }`},
	} {
		ws := g.dialWS(t, nil, c.init)
		ws.subscribe("1", c.sub, nil)
		m := ws.read()
		if !strings.Contains(string(m.Payload), "UNAUTHENTICATED") && !strings.Contains(string(m.Payload), "FORBIDDEN") {
			t.Errorf("subscription with %s: %s %s", name, m.Type, m.Payload)
		}
	}
}
