package resolvers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fingraph/fingraph/upstream/payments"
)

// The merchant's customers: reads, the conversion of the upstream's record,
// and the mutations that create and change customers and their cards.

const customerQuery = `query($id: ID!) { customer(id: $id) {
  id upstreamId number status currency total
  contact { type name email phone identityNumber address { street zipCode city countryCode } }
  paymentMethods { token type scheme iin last4 expiresMonth expiresYear acquirer created }
  balance { currency amount raw }
  subscription { id start due currency callback items { shape total items { name amount quantity } } }
} }`

type customerAnswer struct {
	ID, UpstreamID, Number, Status string
	Currency                       *string
	Total                          float64
	Contact                        struct {
		Type                               *string
		Name, Email, Phone, IdentityNumber *string
		Address                            *struct{ Street, ZipCode, City, CountryCode *string }
	}
	PaymentMethods []struct {
		Token, Type                  string
		Scheme, Iin, Last4, Acquirer *string
		ExpiresMonth, ExpiresYear    *int
		Created                      *time.Time
	}
	Balance []struct {
		Currency *string
		Amount   *int64
		Raw      any
	}
	Subscription []struct {
		ID, Start, Due, Currency, Callback *string
		Items                              *struct {
			Shape string
			Total int64
			Items []struct {
				Name             *string
				Amount, Quantity int64
			}
		}
	}
}

// A customer's record reaches the client as the upstream holds it: absent
// optional values are null, an unknown contact type is null rather than an
// error, stored cards keep their order and carry no more than the card's
// details, and balance entries of any shape keep their raw value.
func TestCustomerConvertsTheUpstreamsRecord(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	amount := int64(500)
	h.payments.customers.add(paymentsCustomer{
		ID: "cus-2", Number: "C-2", Status: "active", Total: 12.5,
		Contact: payments.Contact{Type: "organisation", Name: "Acme", Email: "billing@acme.test", IdentityNumber: "40003",
			Address: &payments.Address{Street: "Main 1", CountryCode: "LV"}},
		Method: deferred([]payments.PaymentMethod{
			{CardDetails: payments.CardDetails{Type: "card", Scheme: "visa", IIN: "424242", Last4: "4242", Expires: []int{12, 30}, Acquirer: "acq"},
				Created: "2025-01-02T03:04:05Z", Token: "pm-b"},
			{CardDetails: payments.CardDetails{Type: "card", Last4: "1111", Expires: []int{1}}, Created: "not a time", Token: "pm-a"},
		}),
		Balance: []json.RawMessage{json.RawMessage(`{"currency":"EUR","amount":1250}`), json.RawMessage(`"opaque"`), json.RawMessage(`{"amount":1.5}`)},
		Subscription: deferred([]payments.Subscription{
			{ID: "sub-1", Start: "2025-01-01", Due: "2025-02-01T10:00:00Z", Currency: "EUR", Items: payments.Items{Number: &amount}},
			{Start: "someday"},
		}),
	})
	h.payments.customers.add(paymentsCustomer{ID: "cus-3", Number: "C-3", Contact: payments.Contact{Type: "robot", Name: "R"}})

	var got struct{ Customer customerAnswer }
	h.as(staff).exec(customerQuery, map[string]any{"id": globalCustomer("cus-2")}).decode(t, &got)
	c := got.Customer
	if c.ID != globalCustomer("cus-2") || c.UpstreamID != "cus-2" || c.Number != "C-2" || c.Total != 12.5 || c.Currency != nil {
		t.Fatalf("customer %+v: want its global id, upstream id, number, total and a null currency", c)
	}
	if c.Contact.Type == nil || *c.Contact.Type != "ORGANISATION" || *c.Contact.IdentityNumber != "40003" || c.Contact.Phone != nil ||
		c.Contact.Address == nil || *c.Contact.Address.Street != "Main 1" || c.Contact.Address.City != nil {
		t.Fatalf("contact %+v", c.Contact)
	}
	if len(c.PaymentMethods) != 2 || c.PaymentMethods[0].Token != "pm-b" || c.PaymentMethods[1].Token != "pm-a" {
		t.Fatalf("payment methods %+v: want pm-b then pm-a, in the upstream's order", c.PaymentMethods)
	}
	first, second := c.PaymentMethods[0], c.PaymentMethods[1]
	if *first.ExpiresMonth != 12 || *first.ExpiresYear != 30 || *first.Iin != "424242" || first.Created == nil ||
		!first.Created.Equal(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("first method %+v", first)
	}
	if second.ExpiresMonth != nil || second.Created != nil || second.Scheme != nil {
		t.Fatalf("a method with a one-part expiry, no scheme and an unreadable date: %+v, want those null", second)
	}
	if len(c.Balance) != 3 || *c.Balance[0].Currency != "EUR" || *c.Balance[0].Amount != 1250 ||
		c.Balance[1].Raw != nil || c.Balance[1].Amount != nil || c.Balance[2].Amount != nil || c.Balance[2].Raw == nil {
		t.Fatalf("balance %+v", c.Balance)
	}
	if len(c.Subscription) != 2 {
		t.Fatalf("subscriptions %+v", c.Subscription)
	}
	s := c.Subscription[0]
	if *s.ID != "sub-1" || *s.Start != "2025-01-01" || *s.Due != "2025-02-01" || s.Items == nil || s.Items.Shape != "AMOUNT" || s.Items.Total != 500 || len(s.Items.Items) != 0 {
		t.Fatalf("subscription %+v", s)
	}
	if s := c.Subscription[1]; s.Start != nil || s.ID != nil || s.Items != nil {
		t.Fatalf("a subscription with no id, items or valid start: %+v", s)
	}

	h.exec(customerQuery, map[string]any{"id": globalCustomer("cus-3")}).decode(t, &got)
	if got.Customer.Contact.Type != nil {
		t.Fatalf("an unknown contact type: %v, want null", *got.Customer.Contact.Type)
	}
}

// A customer whose stored cards cannot be read is an error at its
// paymentMethods field, whose cause is logged and not shown.
func TestCustomerWithUnreadableCardsIsAnErrorAtThatField(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var bad payments.Customer
	if err := json.Unmarshal([]byte(`{"id":"cus-bad","number":"B","method":{"not":"a list"}}`), &bad); err != nil {
		t.Fatal(err)
	}
	h.payments.customers.add(bad)
	resp := h.as(staff).exec(`query($id: ID!) { customer(id: $id) { number paymentMethods { token } } }`, map[string]any{"id": globalCustomer("cus-bad")})
	e := refused(t, resp, "INTERNAL", "")
	if len(e.Path) != 2 || e.Path[1] != "paymentMethods" || strings.Contains(e.Message, "decode") {
		t.Fatalf("error %+v, want INTERNAL at customer.paymentMethods without its cause", e)
	}
	if !h.logged("decode its stored cards") {
		t.Fatal("the cause was not logged")
	}
}

// customer(id) takes a Customer's global id or its raw id; an id of
// another type is NOT_FOUND and an empty one BAD_USER_INPUT, both without
// an upstream call; a customer the upstream does not have is null.
func TestCustomerByIDRules(t *testing.T) {
	t.Parallel()
	query := `query($id: ID!) { customer(id: $id) { number } }`
	for _, tc := range []struct {
		name, id string
		// want is the error code; "" for an answer, "null" for none.
		want  string
		calls int
	}{
		{"global id", globalCustomer(demoCustomer), "", 1},
		{"raw id", demoCustomer, "", 1},
		{"an order's id", globalOrder("ord-1"), "NOT_FOUND", 0},
		{"empty", "", "BAD_USER_INPUT", 0},
		{"not there", globalCustomer("cus-none"), "null", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			resp := h.as(staff).exec(query, map[string]any{"id": tc.id})
			var got struct{ Customer *struct{ Number string } }
			switch tc.want {
			case "":
				resp.decode(t, &got)
				if got.Customer == nil || got.Customer.Number != "C-1" {
					t.Fatalf("got %s, want C-1", resp)
				}
			case "null":
				resp.decode(t, &got)
				if got.Customer != nil {
					t.Fatalf("got %s, want null", resp)
				}
			default:
				refused(t, resp, tc.want, "")
			}
			if n := h.payments.total(); n != tc.calls {
				t.Fatalf("%d payments calls, want %d", n, tc.calls)
			}
		})
	}
}

// A read the payments upstream refuses or cannot answer is the client's
// error code, with the upstream's own reason for a refusal: never INTERNAL
// for something the client can act on, and never the gateway's secrets.
func TestCustomerReadErrorsMapToCodes(t *testing.T) {
	t.Parallel()
	query := `query($id: ID!) { customer(id: $id) { number } }`
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"rejected", paymentsRejection(http.StatusBadRequest, "invalid_request", "id", "bad id"), "UPSTREAM_REJECTED"},
		{"conflict", paymentsRejection(http.StatusConflict, "conflict", "", "busy"), "UPSTREAM_REJECTED"},
		{"rate limited", paymentsRejection(http.StatusTooManyRequests, "rate_limited", "", "slow down"), "RATE_LIMITED"},
		{"server error", paymentsRejection(http.StatusInternalServerError, "oops", "", "stack trace here"), "UPSTREAM_UNAVAILABLE"},
		{"no answer", unavailable("payments"), "UPSTREAM_UNAVAILABLE"},
		// A 403 on the merchant's own key is the gateway's configuration,
		// which no client can fix.
		{"merchant key refused", paymentsRejection(http.StatusForbidden, "forbidden", "", "wrong key"), "INTERNAL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.payments.customers.failNext("Get", tc.err)
			e := refused(t, h.as(staff).exec(query, map[string]any{"id": globalCustomer(demoCustomer)}), tc.want, "")
			if strings.Contains(e.Message, "stack trace") {
				t.Fatalf("a server error's body reached the client: %q", e.Message)
			}
		})
	}
}

// currentCustomer needs a customer session: any other principal is
// UNAUTHENTICATED for it, before an upstream call.
func TestCurrentCustomerNeedsACustomerSession(t *testing.T) {
	t.Parallel()
	for _, who := range []principal{staff, person, anonymous} {
		h := newHarness(t)
		refused(t, h.as(who).exec(`{ currentCustomer { number } }`, nil), "UNAUTHENTICATED", "")
		h.noUpstreamCall(t, 0, string(who.kind))
	}
}

// orders { customer } reads the customers of a page of orders with the one
// customer listing when they are several, by id when there is one, and
// not at all when the query does not select them.
func TestOrdersReadTheirCustomersOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		customers  []string
		query      string
		list, gets int
	}{
		{"several customers", []string{demoCustomer, "cus-2", demoCustomer}, `{ orders { customer { number } } }`, 1, 0},
		{"one customer", []string{demoCustomer, demoCustomer}, `{ orders { customer { number } } }`, 0, 1},
		{"customer not selected", []string{demoCustomer, "cus-2"}, `{ orders { upstreamId } }`, 0, 0},
		{"selected through a fragment", []string{demoCustomer, "cus-2"}, `{ orders { ...on Order { customer { number } } } }`, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.payments.customers.add(paymentsCustomer{ID: "cus-2", Number: "C-2"})
			for i, c := range tc.customers {
				h.payments.orders.add(payments.Order{ID: "ord-" + string(rune('a'+i)), Created: time.Now().UTC().Add(-time.Hour),
					Customer: payments.OrderCustomer{ID: c}, Currency: "EUR", Amount: 100, Status: "authorized"})
			}
			var got struct {
				Orders []struct {
					Customer *struct{ Number string }
				}
			}
			h.as(staff).exec(tc.query, nil).decode(t, &got)
			if len(got.Orders) != len(tc.customers) {
				t.Fatalf("%d orders, want %d", len(got.Orders), len(tc.customers))
			}
			for i, o := range got.Orders {
				if tc.list+tc.gets > 0 && (o.Customer == nil || o.Customer.Number != map[string]string{demoCustomer: "C-1", "cus-2": "C-2"}[tc.customers[i]]) {
					t.Fatalf("order %d has customer %+v, want %s's", i, o.Customer, tc.customers[i])
				}
			}
			if l, g := h.payments.customers.calls("List"), h.payments.customers.calls("Get"); l != tc.list || g != tc.gets {
				t.Fatalf("%d listings and %d reads by id, want %d and %d", l, g, tc.list, tc.gets)
			}
			if n := h.payments.orders.calls("List"); n != 1 {
				t.Fatalf("%d order listings, want 1", n)
			}
		})
	}
}

// Customer.orders answers every customer of a list from one order listing
// per date window, each customer its own orders; a window the field refuses
// is BAD_USER_INPUT and reads nothing; a listing that fails is an error on
// each customer's own orders, and the customers are still answered.
func TestCustomersOrdersReadOneListingPerWindow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.payments.customers.add(paymentsCustomer{ID: "cus-2", Number: "C-2"})
	h.payments.customers.add(paymentsCustomer{ID: "cus-3", Number: "C-3"})
	day := func(d int) time.Time { return time.Date(2025, 3, d, 12, 0, 0, 0, time.UTC) }
	for id, o := range map[string]struct {
		customer string
		day      int
	}{"ord-1": {demoCustomer, 1}, "ord-2": {"cus-2", 2}, "ord-3": {"cus-2", 20}, "ord-4": {"", 3}} {
		h.payments.orders.add(payments.Order{ID: id, Created: day(o.day), Customer: payments.OrderCustomer{ID: o.customer}, Currency: "EUR", Amount: 1})
	}
	h.as(staff)

	var got struct {
		Customers []struct {
			UpstreamID string
			Orders     []struct{ UpstreamID string }
		}
	}
	h.exec(`{ customers { upstreamId orders(start: "2025-03-01", end: "2025-03-10") { upstreamId } } }`, nil).decode(t, &got)
	want := map[string]string{demoCustomer: "[ord-1]", "cus-2": "[ord-2]", "cus-3": "[]"}
	for _, c := range got.Customers {
		var ids []string
		for _, o := range c.Orders {
			ids = append(ids, o.UpstreamID)
		}
		if s := "[" + strings.Join(ids, " ") + "]"; s != want[c.UpstreamID] {
			t.Fatalf("customer %s: orders %s, want %s", c.UpstreamID, s, want[c.UpstreamID])
		}
	}
	if len(got.Customers) != 3 || h.payments.orders.calls("List") != 1 {
		t.Fatalf("%d customers with %d order listings, want 3 with 1", len(got.Customers), h.payments.orders.calls("List"))
	}

	// Three windows by alias: one listing each.
	h.exec(`{ customers { a: orders(start: "2025-03-01", end: "2025-03-02") { upstreamId }
	  b: orders(start: "2025-03-01", end: "2025-03-31") { upstreamId }
	  c: orders(start: "2025-02-01", end: "2025-03-31") { upstreamId }
	  d: orders(start: "2025-03-01", end: "2025-03-02") { upstreamId } } }`, nil).noErrors(t)
	if n := h.payments.orders.calls("List"); n != 1+3 {
		t.Fatalf("three windows made %d listings, want 3", n-1)
	}

	before := h.payments.orders.calls("List")
	resp := h.exec(`{ customers { upstreamId orders(start: "2025-03-10", end: "2025-03-01") { upstreamId } } }`, nil)
	if len(resp.Errors) == 0 {
		t.Fatal("a window that ends before it starts was answered")
	}
	for _, e := range resp.Errors {
		if e.Code() != "BAD_USER_INPUT" || e.Extensions["field"] != "end" {
			t.Fatalf("reversed window: %s, want BAD_USER_INPUT on end", resp)
		}
	}
	if h.payments.orders.calls("List") != before {
		t.Fatal("a refused window was listed")
	}

	h.payments.orders.failNext("List", unavailable("payments"))
	resp = h.exec(`{ customers { upstreamId orders(start: "2025-01-01", end: "2025-01-02") { upstreamId } } }`, nil)
	if len(resp.Errors) != 3 {
		t.Fatalf("a failed listing: %s, want one error per customer", resp)
	}
	for i, e := range resp.Errors {
		if e.Code() != "UPSTREAM_UNAVAILABLE" || len(e.Path) != 3 || e.Path[0] != "customers" || e.Path[2] != "orders" {
			t.Fatalf("error %d: %+v, want UPSTREAM_UNAVAILABLE at customers.<i>.orders", i, e)
		}
	}
	var partial struct {
		Customers []struct {
			UpstreamID string
			Orders     []json.RawMessage
		}
	}
	if err := json.Unmarshal(resp.Data, &partial); err != nil || len(partial.Customers) != 3 || partial.Customers[0].UpstreamID == "" || partial.Customers[0].Orders != nil {
		t.Fatalf("a failed listing: data %s, want the customers with null orders", resp.Data)
	}
}

const createCustomerMutation = `mutation($in: CreateCustomerInput!) { createCustomer(input: $in) {
  customer { id upstreamId number paymentMethods { token last4 } }
  orders { token order { upstreamId status amount { amount currency } } }
} }`

type createCustomerAnswer struct {
	CreateCustomer struct {
		Customer struct {
			ID, UpstreamID, Number string
			PaymentMethods         []struct{ Token, Last4 string }
		}
		Orders []struct {
			Token string
			Order struct {
				UpstreamID, Status string
				Amount             struct {
					Amount   int64
					Currency string
				}
			}
		}
	} `json:"createCustomer"`
}

// newCustomerInput is a valid createCustomer input; change sets fields.
func newCustomerInput(change func(in map[string]any)) map[string]any {
	in := map[string]any{"number": "C-9", "contact": map[string]any{"name": "Ann", "email": "ann@example.test"},
		"cardTokens": []any{"tok_ok_1"}}
	if change != nil {
		change(in)
	}
	return map[string]any{"in": in}
}

// createCustomer refuses bad input with BAD_USER_INPUT naming the field,
// before any upstream call.
func TestCreateCustomerRefusesBadInput(t *testing.T) {
	t.Parallel()
	eleven := make([]any, 11)
	for i := range eleven {
		eleven[i] = "tok_ok_" + string(rune('a'+i))
	}
	order := func(o map[string]any) []any {
		base := map[string]any{"items": map[string]any{"amount": 1200}, "currency": "EUR"}
		for k, v := range o {
			base[k] = v
		}
		return []any{base}
	}
	for _, tc := range []struct {
		field  string
		change func(in map[string]any)
	}{
		{"input.number", func(in map[string]any) { in["number"] = " " }},
		{"input.number", func(in map[string]any) { in["number"] = strings.Repeat("n", 256) }},
		{"input.contact.name", func(in map[string]any) { in["contact"] = map[string]any{"name": "", "email": "a@b.test"} }},
		{"input.contact.email", func(in map[string]any) { in["contact"] = map[string]any{"name": "A", "email": "not an address"} }},
		{"input.contact.address.countryCode", func(in map[string]any) {
			in["contact"] = map[string]any{"name": "A", "email": "a@b.test", "address": map[string]any{"countryCode": "lv"}}
		}},
		{"input.contact.phone", func(in map[string]any) {
			in["contact"] = map[string]any{"name": "A", "email": "a@b.test", "phone": strings.Repeat("1", 256)}
		}},
		{"input.contact.address.city", func(in map[string]any) {
			in["contact"] = map[string]any{"name": "A", "email": "a@b.test", "address": map[string]any{"city": strings.Repeat("c", 256)}}
		}},
		{"input.cardTokens", func(in map[string]any) { in["cardTokens"] = eleven }},
		{"input.cardTokens[1]", func(in map[string]any) { in["cardTokens"] = []any{"tok_ok_1", "tok ok"} }},
		{"input.cardTokens", func(in map[string]any) { in["cardTokens"] = []any{}; in["orders"] = order(nil) }},
		{"input.orders[0].currency", func(in map[string]any) { in["orders"] = order(map[string]any{"currency": "eur"}) }},
		{"input.orders[0].items.amount", func(in map[string]any) { in["orders"] = order(map[string]any{"items": map[string]any{"amount": 0}}) }},
		{"input.orders[0].number", func(in map[string]any) { in["orders"] = order(map[string]any{"number": strings.Repeat("n", 256)}) }},
		{"input.idempotencyKey", func(in map[string]any) { in["idempotencyKey"] = "  " }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			wantFieldError(t, h.as(anonymous).exec(createCustomerMutation, newCustomerInput(tc.change)), tc.field)
			h.noUpstreamCall(t, 0, tc.field)
		})
	}

	// A card token written into the query text is refused: it would land
	// in query caches and logs.
	h := newHarness(t)
	resp := h.as(anonymous).exec(`mutation { createCustomer(input: {number: "C-9", contact: {name: "A", email: "a@b.test"}, cardTokens: ["tok_ok_inline"]}) { customer { id } } }`, nil)
	wantFieldError(t, resp, "input.cardTokens[0]")
	h.noUpstreamCall(t, 0, "an inline card token")
}

// A new customer stores its cards, and the orders authorised with it come
// back with their signed tokens, each verified against the upstream's
// published keys, or, where it publishes none, confirmed from its order
// listing; a token that fails verification is never passed on.
func TestCreateCustomerVerifiesTheSignedOrders(t *testing.T) {
	t.Parallel()
	in := newCustomerInput(func(in map[string]any) {
		in["cardTokens"] = []any{"tok_ok_1", "tok_ok_2"}
		in["orders"] = []any{map[string]any{"items": map[string]any{"list": []any{
			map[string]any{"name": "tea", "amount": 300, "quantity": 2}, map[string]any{"name": "cup", "amount": 600}}}, "currency": "EUR"}}
	})
	for _, specOnly := range []bool{false, true} {
		h := newHarness(t)
		h.payments.specOnly = specOnly
		var got createCustomerAnswer
		h.as(anonymous).exec(createCustomerMutation, in).decode(t, &got)
		c := got.CreateCustomer
		if c.Customer.UpstreamID == "" || c.Customer.ID != globalCustomer(c.Customer.UpstreamID) || c.Customer.Number != "C-9" || len(c.Customer.PaymentMethods) != 2 {
			t.Fatalf("customer %+v, want C-9 with two cards", c.Customer)
		}
		if len(c.Orders) != 1 || c.Orders[0].Token != "token:"+c.Orders[0].Order.UpstreamID ||
			c.Orders[0].Order.Amount.Amount != 1200 || c.Orders[0].Order.Amount.Currency != "EUR" || c.Orders[0].Order.Status != "AUTHORIZED" {
			t.Fatalf("orders %+v, want one authorised order of 1200 EUR with its token", c.Orders)
		}
		verified, confirmed := h.payments.orderTokens.calls("VerifyAll"), h.payments.orderTokens.calls("ConfirmAll")
		if specOnly && (verified != 0 || confirmed != 1) || !specOnly && (verified != 1 || confirmed != 0) {
			t.Fatalf("spec only %v: %d verifications and %d confirmations", specOnly, verified, confirmed)
		}
		if sent := h.payments.customers.calls("Create"); sent != 1 {
			t.Fatalf("%d creations", sent)
		}
	}

	h := newHarness(t)
	h.payments.orderTokens.failNext("VerifyAll", payments.ErrInvalidOrderToken)
	resp := h.as(anonymous).exec(createCustomerMutation, in)
	e := refused(t, resp, "INTERNAL", "")
	if strings.Contains(resp.String(), "token:") {
		t.Fatalf("an unverified token reached the client: %s (%s)", resp, e.Message)
	}
}

// A createCustomer retried with its key creates one customer and answers
// it again, read anew; the same key for another request of the same
// principal is refused naming the key. Keys are per principal, and a
// signed-out caller's key is bound to what it asked.
func TestCreateCustomerWithAKeyCreatesOnce(t *testing.T) {
	t.Parallel()
	withKey := func(key, number, token string) map[string]any {
		return newCustomerInput(func(in map[string]any) {
			in["idempotencyKey"], in["number"], in["cardTokens"] = key, number, []any{token}
			in["orders"] = []any{map[string]any{"items": map[string]any{"amount": 700}, "currency": "EUR"}}
		})
	}
	h := newHarness(t)
	h.as(staff)
	var first, retry createCustomerAnswer
	h.exec(createCustomerMutation, withKey("k-1", "C-9", "tok_ok_1")).decode(t, &first)
	h.exec(createCustomerMutation, withKey("k-1", "C-9", "tok_ok_1")).decode(t, &retry)
	if first.CreateCustomer.Customer.UpstreamID == "" || retry.CreateCustomer.Customer.UpstreamID != first.CreateCustomer.Customer.UpstreamID ||
		len(retry.CreateCustomer.Orders) != 1 || retry.CreateCustomer.Orders[0].Token != first.CreateCustomer.Orders[0].Token {
		t.Fatalf("the retry answered %+v, want the first call's customer and order %+v", retry.CreateCustomer, first.CreateCustomer)
	}
	if len(retry.CreateCustomer.Customer.PaymentMethods) != 1 {
		t.Fatalf("the replayed customer has cards %+v, want its one card", retry.CreateCustomer.Customer.PaymentMethods)
	}
	if c, g := h.payments.customers.calls("Create"), h.payments.customers.calls("Get"); c != 1 || g != 1 {
		t.Fatalf("%d creations and %d reads, want one creation and the replay's one read", c, g)
	}

	wantFieldError(t, h.exec(createCustomerMutation, withKey("k-1", "C-10", "tok_ok_2")), "input.idempotencyKey")
	if n := h.payments.customers.calls("Create"); n != 1 {
		t.Fatalf("a refused key created: %d creations", n)
	}

	// Another principal's k-1 is its own key.
	var other createCustomerAnswer
	h.as(apiClient).exec(createCustomerMutation, withKey("k-1", "C-10", "tok_ok_2")).decode(t, &other)
	if other.CreateCustomer.Customer.UpstreamID == first.CreateCustomer.Customer.UpstreamID {
		t.Fatal("another principal's key answered the first principal's customer")
	}

	// Signed out, a key with another request is another key: a second
	// caller that reuses it neither learns of the first nor gets its
	// customer.
	var a, b createCustomerAnswer
	h.as(anonymous).exec(createCustomerMutation, withKey("k-anon", "C-20", "tok_ok_3")).decode(t, &a)
	h.exec(createCustomerMutation, withKey("k-anon", "C-21", "tok_ok_4")).decode(t, &b)
	if a.CreateCustomer.Customer.UpstreamID == b.CreateCustomer.Customer.UpstreamID {
		t.Fatal("two signed-out requests under one key were answered as one")
	}
	if n := h.payments.customers.calls("Create"); n != 4 {
		t.Fatalf("%d creations, want 4", n)
	}
}

// A creation whose answer was lost is never repeated: with a key it is
// OUTCOME_UNKNOWN, and stays so on a retry with the key (the upstream
// keeps no reference to look the customer up by), which sends nothing;
// without a key nothing was promised, and the transport's error stands.
// A refusal is the upstream's, with its code.
func TestCreateCustomerWhoseAnswerWasLost(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(staff)
	h.payments.customers.loseNext("Create")
	in := newCustomerInput(func(in map[string]any) { in["idempotencyKey"] = "k-lost" })
	for range 2 {
		e := refused(t, h.exec(createCustomerMutation, in), "OUTCOME_UNKNOWN", "")
		if e.Extensions["field"] != "input.idempotencyKey" || e.Extensions["retryable"] != false {
			t.Fatalf("lost answer: %+v, want OUTCOME_UNKNOWN on the key, not retryable", e)
		}
	}
	if n := h.payments.customers.calls("Create"); n != 1 {
		t.Fatalf("%d creations, want the lost one only", n)
	}

	h.payments.customers.loseNext("Create")
	refused(t, h.exec(createCustomerMutation, newCustomerInput(func(in map[string]any) { in["cardTokens"] = []any{"tok_ok_2"} })), "UPSTREAM_UNAVAILABLE", "")

	// The token was used by the lost creation: the upstream refuses it.
	e := refused(t, h.exec(createCustomerMutation, newCustomerInput(func(in map[string]any) { in["cardTokens"] = []any{"tok_ok_2"} })), "UPSTREAM_REJECTED", "")
	if up := e.Upstream(); up["code"] != "card_token_used" || up["status"] != 409.0 {
		t.Fatalf("a used token: %v, want the upstream's 409 card_token_used", up)
	}
}

const addMethodMutation = `mutation($in: AddPaymentMethodInput!) { addPaymentMethod(input: $in) {
  paymentMethod { token last4 expiresMonth }
  orders { token order { upstreamId amount { amount } } }
  customer { upstreamId paymentMethods { token } }
} }`

type addMethodAnswer struct {
	AddPaymentMethod struct {
		PaymentMethod struct {
			Token, Last4 string
			ExpiresMonth int
		}
		Orders []struct {
			Token string
			Order struct {
				UpstreamID string
				Amount     struct{ Amount int64 }
			}
		}
		Customer struct {
			UpstreamID     string
			PaymentMethods []struct{ Token string }
		}
	} `json:"addPaymentMethod"`
}

func addMethodInput(customer, token string, change func(in map[string]any)) map[string]any {
	in := map[string]any{"customerId": customer, "cardToken": token}
	if change != nil {
		change(in)
	}
	return map[string]any{"in": in}
}

// addPaymentMethod stores a card and answers it with the customer read
// after the change; with orders it authorises them with the card and
// answers their verified tokens.
func TestAddPaymentMethodStoresTheCard(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	addCustomerWithCards(h, "cus-m", "pm-old")
	var got addMethodAnswer
	h.as(anonymous).exec(addMethodMutation, addMethodInput(globalCustomer("cus-m"), "tok_ok_1", nil)).decode(t, &got)
	a := got.AddPaymentMethod
	if a.PaymentMethod.Token == "" || a.PaymentMethod.Last4 != "4242" || a.PaymentMethod.ExpiresMonth != 12 || len(a.Orders) != 0 {
		t.Fatalf("stored %+v with orders %+v", a.PaymentMethod, a.Orders)
	}
	if a.Customer.UpstreamID != "cus-m" || len(a.Customer.PaymentMethods) != 2 || a.Customer.PaymentMethods[1].Token != a.PaymentMethod.Token {
		t.Fatalf("customer after the change: %+v, want its old card and the new one", a.Customer)
	}
	if h.payments.customers.calls("AddMethod") != 1 || h.payments.customers.calls("AddMethodWithOrder") != 0 {
		t.Fatal("a card without orders is stored with AddMethod")
	}

	in := addMethodInput("cus-m", "tok_ok_2", func(in map[string]any) {
		in["orders"] = []any{map[string]any{"items": map[string]any{"amount": 900}, "currency": "EUR"},
			map[string]any{"items": map[string]any{"item": map[string]any{"name": "x", "amount": 50, "quantity": 3}}, "currency": "EUR", "autoCharge": true}}
	})
	h.exec(addMethodMutation, in).decode(t, &got)
	a = got.AddPaymentMethod
	if len(a.Orders) != 2 || a.Orders[0].Order.Amount.Amount != 900 || a.Orders[1].Order.Amount.Amount != 150 || a.Orders[0].Token != "token:"+a.Orders[0].Order.UpstreamID {
		t.Fatalf("orders %+v, want 900 and 150 with their tokens", a.Orders)
	}
	if h.payments.customers.calls("AddMethodWithOrder") != 1 {
		t.Fatal("a card with orders is stored with AddMethodWithOrder")
	}
}

// addPaymentMethod's input is checked before any upstream call: the
// customer's id of another type is NOT_FOUND, a card token written into
// the query or malformed, or a bad order, is BAD_USER_INPUT naming it.
func TestAddPaymentMethodRefusesBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		want, field string
	}{
		{"an order's id", addMethodMutation, addMethodInput(globalOrder("ord-1"), "tok_ok_1", nil), "NOT_FOUND", ""},
		{"empty customer", addMethodMutation, addMethodInput("", "tok_ok_1", nil), "BAD_USER_INPUT", "input.customerId"},
		{"malformed token", addMethodMutation, addMethodInput(demoCustomer, "tok\n1", nil), "BAD_USER_INPUT", "input.cardToken"},
		{"bad order", addMethodMutation, addMethodInput(demoCustomer, "tok_ok_1", func(in map[string]any) {
			in["orders"] = []any{map[string]any{"items": map[string]any{"amount": 5}, "currency": "EURO"}}
		}), "BAD_USER_INPUT", "input.orders[0].currency"},
		{"empty key", addMethodMutation, addMethodInput(demoCustomer, "tok_ok_1", func(in map[string]any) { in["idempotencyKey"] = "" }), "BAD_USER_INPUT", "input.idempotencyKey"},
		{"token in the query", `mutation { addPaymentMethod(input: {customerId: "cus-1", cardToken: "tok_ok_inline"}) { paymentMethod { token } } }`, nil, "BAD_USER_INPUT", "input.cardToken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			refused(t, h.as(anonymous).exec(tc.query, tc.vars), tc.want, tc.field)
			h.noUpstreamCall(t, 0, tc.name)
		})
	}
}

// A card stored under a key is stored once: the retry finds it in the
// customer by its token's digest (the key keeps no card token) and answers
// it; once the card is gone from the customer, the retry says so.
func TestAddPaymentMethodWithAKeyStoresOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	addCustomerWithCards(h, "cus-m")
	in := addMethodInput("cus-m", "tok_ok_1", func(in map[string]any) { in["idempotencyKey"] = "card-1" })
	var first, retry addMethodAnswer
	h.as(staff).exec(addMethodMutation, in).decode(t, &first)
	h.exec(addMethodMutation, in).decode(t, &retry)
	if first.AddPaymentMethod.PaymentMethod.Token == "" || retry.AddPaymentMethod.PaymentMethod != first.AddPaymentMethod.PaymentMethod {
		t.Fatalf("the retry answered %+v, want the stored card %+v", retry.AddPaymentMethod.PaymentMethod, first.AddPaymentMethod.PaymentMethod)
	}
	if n := h.payments.customers.calls("AddMethod"); n != 1 {
		t.Fatalf("%d cards stored, want 1", n)
	}
	if len(retry.AddPaymentMethod.Customer.PaymentMethods) != 1 {
		t.Fatalf("the customer holds %d cards, want 1", len(retry.AddPaymentMethod.Customer.PaymentMethods))
	}

	h.exec(`mutation($in: SetPaymentMethodsInput!) { setPaymentMethods(input: $in) { customer { upstreamId } } }`,
		map[string]any{"in": map[string]any{"customerId": "cus-m", "methodTokens": []any{}}}).noErrors(t)
	refused(t, h.exec(addMethodMutation, in), "NOT_FOUND", "")
	if n := h.payments.customers.calls("AddMethod"); n != 1 {
		t.Fatalf("the retry of a card since removed stored it again: %d calls", n)
	}
}

const setMethodsMutation = `mutation($in: SetPaymentMethodsInput!) { setPaymentMethods(input: $in) { customer { upstreamId paymentMethods { token last4 } } } }`

// setPaymentMethods sends the customer's stored cards, unchanged, in the
// wanted order (those left out are removed); a token that is not the
// customer's, or named twice, is BAD_USER_INPUT at its index, before the
// change is sent.
func TestSetPaymentMethodsReordersTheStoredCards(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	addCustomerWithCards(h, "cus-m", "pm-a", "pm-b", "pm-c")
	h.as(staff)
	set := func(id any, tokens ...any) *response {
		in := map[string]any{"methodTokens": tokens}
		if id != nil {
			in["customerId"] = id
		}
		return h.exec(setMethodsMutation, map[string]any{"in": in})
	}
	var got struct {
		SetPaymentMethods struct {
			Customer struct {
				UpstreamID     string
				PaymentMethods []struct{ Token, Last4 string }
			}
		} `json:"setPaymentMethods"`
	}
	set(globalCustomer("cus-m"), "pm-c", "pm-a").decode(t, &got)
	pm := got.SetPaymentMethods.Customer.PaymentMethods
	if len(pm) != 2 || pm[0].Token != "pm-c" || pm[1].Token != "pm-a" || pm[0].Last4 != "c000" {
		t.Fatalf("cards %+v, want pm-c then pm-a, unchanged", pm)
	}

	for _, tc := range []struct {
		tokens []any
		field  string
	}{
		{[]any{"pm-c", "pm-b"}, "input.methodTokens[1]"}, // pm-b was removed
		{[]any{"pm-a", "pm-a"}, "input.methodTokens[1]"},
		{[]any{"nope"}, "input.methodTokens[0]"},
	} {
		wantFieldError(t, set("cus-m", tc.tokens...), tc.field)
	}
	if n := h.payments.customers.calls("SetMethods"); n != 1 {
		t.Fatalf("%d changes sent, want the one valid change", n)
	}

	reads := h.payments.customers.calls("Get")
	many := make([]any, 101)
	for i := range many {
		many[i] = "pm-a"
	}
	wantFieldError(t, set("cus-m", many...), "input.methodTokens")
	wantFieldError(t, set(nil, "pm-a"), "input.customerId")
	refused(t, set(globalOrder("o"), "pm-a"), "NOT_FOUND", "")
	if h.payments.customers.calls("Get") != reads {
		t.Fatal("a refused input read the customer")
	}
	refused(t, set("cus-none", "pm-a"), "NOT_FOUND", "")
}

const updateContactMutation = `mutation($in: UpdateCustomerContactInput!) { updateCustomerContact(input: $in) {
  contact { name email type address { countryCode } }
  customer { upstreamId contact { name } }
} }`

// updateCustomerContact replaces the contact of the customer an operator
// names, or of a customer session's own customer, which may name none; the
// payload's customer is read after the change.
func TestUpdateCustomerContactAddressesOneCustomer(t *testing.T) {
	t.Parallel()
	contact := map[string]any{"name": "New Name", "email": "new@example.test", "type": "PERSON", "address": map[string]any{"countryCode": "EE"}}
	type answer struct {
		UpdateCustomerContact struct {
			Contact struct {
				Name, Email, Type string
				Address           struct{ CountryCode string }
			}
			Customer struct {
				UpstreamID string
				Contact    struct{ Name string }
			}
		} `json:"updateCustomerContact"`
	}

	h := newHarness(t)
	var got answer
	h.as(staff).exec(updateContactMutation, map[string]any{"in": map[string]any{"customerId": globalCustomer(demoCustomer), "contact": contact}}).decode(t, &got)
	u := got.UpdateCustomerContact
	if u.Contact.Name != "New Name" || u.Contact.Type != "PERSON" || u.Contact.Address.CountryCode != "EE" ||
		u.Customer.UpstreamID != demoCustomer || u.Customer.Contact.Name != "New Name" {
		t.Fatalf("got %+v", u)
	}
	wantFieldError(t, h.exec(updateContactMutation, map[string]any{"in": map[string]any{"contact": contact}}), "input.customerId")
	refused(t, h.exec(updateContactMutation, map[string]any{"in": map[string]any{"customerId": "cus-none", "contact": contact}}), "NOT_FOUND", "")
	wantFieldError(t, h.exec(updateContactMutation, map[string]any{"in": map[string]any{"customerId": demoCustomer,
		"contact": map[string]any{"name": "X", "email": "x@example.test", "identityNumber": strings.Repeat("9", 300)}}}), "input.contact.identityNumber")

	// A customer session changes its own customer, and may not name one.
	h = newHarness(t)
	h.payments.customers.add(paymentsCustomer{ID: "cus-2", Number: "C-2"})
	h.as(customer).exec(updateContactMutation, map[string]any{"in": map[string]any{"contact": contact}}).decode(t, &got)
	if got.UpdateCustomerContact.Customer.UpstreamID != demoCustomer {
		t.Fatalf("a customer session changed %s, want its own %s", got.UpdateCustomerContact.Customer.UpstreamID, demoCustomer)
	}
	calls := h.payments.total()
	wantFieldError(t, h.exec(updateContactMutation, map[string]any{"in": map[string]any{"customerId": globalCustomer("cus-2"), "contact": contact}}), "input.customerId")
	if h.payments.total() != calls {
		t.Fatal("a customer session naming another customer reached the upstream")
	}

	h = newHarness(t)
	refused(t, h.as(person).exec(updateContactMutation, map[string]any{"in": map[string]any{"customerId": demoCustomer, "contact": contact}}), "FORBIDDEN", "")
	h.noUpstreamCall(t, 0, "a person's contact update")
}

// A customer session reorders its own cards and names no customer.
func TestCustomerSessionSetsItsOwnCards(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.payments.customers.list = nil
	addCustomerWithCards(h, demoCustomer, "pm-a", "pm-b")
	var got struct {
		SetPaymentMethods struct {
			Customer struct {
				UpstreamID     string
				PaymentMethods []struct{ Token string }
			}
		} `json:"setPaymentMethods"`
	}
	h.as(customer).exec(setMethodsMutation, map[string]any{"in": map[string]any{"methodTokens": []any{"pm-b"}}}).decode(t, &got)
	if c := got.SetPaymentMethods.Customer; c.UpstreamID != demoCustomer || len(c.PaymentMethods) != 1 || c.PaymentMethods[0].Token != "pm-b" {
		t.Fatalf("got %+v", c)
	}
	wantFieldError(t, h.exec(setMethodsMutation, map[string]any{"in": map[string]any{"customerId": demoCustomer, "methodTokens": []any{"pm-b"}}}), "input.customerId")
}
