package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// Tests of the payments part of the graph, through the gateway and the
// sandbox over real HTTP.

const readmeQuery = `{ customers { id number contact { name email } orders { id } } }`

type customersData struct {
	Customers []struct {
		ID      string `json:"id"`
		Number  string `json:"number"`
		Contact struct {
			Name  string `json:"name"`
			Email string `json:"email"`
		} `json:"contact"`
		PaymentMethods []struct {
			Token string `json:"token"`
		} `json:"paymentMethods"`
		Orders []struct {
			ID string `json:"id"`
		} `json:"orders"`
	} `json:"customers"`
}

func TestReadmeQueryAnswersSeededData(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	var d customersData
	g.query(t, readmeQuery, nil).decode(t, &d)
	if len(d.Customers) < 5 {
		t.Fatalf("want the seeded customers, got %d", len(d.Customers))
	}
	withOrders := 0
	for _, c := range d.Customers {
		if c.ID == "" || c.Number == "" || c.Contact.Name == "" || !strings.Contains(c.Contact.Email, "@") {
			t.Errorf("incomplete customer %+v", c)
		}
		if len(c.Orders) > 0 {
			withOrders++
		}
	}
	if withOrders < len(d.Customers)/2 {
		t.Errorf("only %d of %d seeded customers have orders in the last 30 days", withOrders, len(d.Customers))
	}
}

const createCustomerMutation = `mutation($input: CreateCustomerInput!) {
  createCustomer(input: $input) { customer { id number paymentMethods { token last4 } } }
}`

func createCustomer(t *testing.T, g *testGateway, cards ...string) (id string, methods []string) {
	t.Helper()
	var d struct {
		CreateCustomer struct {
			Customer struct {
				ID             string `json:"id"`
				PaymentMethods []struct {
					Token string `json:"token"`
				} `json:"paymentMethods"`
			} `json:"customer"`
		} `json:"createCustomer"`
	}
	if cards == nil {
		cards = []string{}
	}
	g.query(t, createCustomerMutation, map[string]any{"input": map[string]any{
		"number":     uniq("T-"),
		"contact":    map[string]any{"name": "Test Customer", "email": "test@example.com"},
		"cardTokens": cards,
	}}).decode(t, &d)
	for _, m := range d.CreateCustomer.Customer.PaymentMethods {
		methods = append(methods, m.Token)
	}
	return d.CreateCustomer.Customer.ID, methods
}

const createOrderMutation = `mutation($input: CreateOrderInput!) {
  createOrder(input: $input) {
    __typename
    ... on Order { id status amount { amount currency } capturedAmount { amount } items { shape total items { amount quantity } } payment { last4 } customer { id } }
    ... on VerificationRequired { orderId verificationUrl message }
    ... on OrderFailed { orderId code message }
  }
}`

type orderResult struct {
	Typename string `json:"__typename"`
	ID       string `json:"id"`
	Status   string `json:"status"`
	Amount   struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
	} `json:"amount"`
	CapturedAmount struct {
		Amount int64 `json:"amount"`
	} `json:"capturedAmount"`
	Items struct {
		Shape string `json:"shape"`
		Total int64  `json:"total"`
	} `json:"items"`
	Payment struct {
		Last4 string `json:"last4"`
	} `json:"payment"`
	Customer *struct {
		ID string `json:"id"`
	} `json:"customer"`
	OrderID         string `json:"orderId"`
	VerificationURL string `json:"verificationUrl"`
	Code            string `json:"code"`
	Message         string `json:"message"`
}

func createOrder(t *testing.T, g *testGateway, input map[string]any) orderResult {
	t.Helper()
	var d struct {
		CreateOrder orderResult `json:"createOrder"`
	}
	g.query(t, createOrderMutation, map[string]any{"input": input}).decode(t, &d)
	return d.CreateOrder
}

func TestCreateOrderEachPaymentShape(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	customerID, methods := createCustomer(t, g, uniq("tok_ok_"))
	if len(methods) != 1 {
		t.Fatalf("want one stored method, got %v", methods)
	}
	tests := []struct {
		name       string
		input      map[string]any
		wantStatus string
		wantAmount int64
		wantShape  string
		customer   bool
	}{
		{
			name: "one-time card",
			input: map[string]any{"currency": "EUR", "items": map[string]any{"amount": 1250},
				"payment": map[string]any{"card": map[string]any{"token": uniq("tok_ok_"), "browser": map[string]any{"userAgent": "test"}}}},
			wantStatus: "AUTHORIZED", wantAmount: 1250, wantShape: "AMOUNT",
		},
		{
			name: "saved card, merchant-initiated by default",
			input: map[string]any{"currency": "EUR", "customerId": customerID,
				"items":   map[string]any{"item": map[string]any{"name": "Plan", "amount": 500, "quantity": 2}},
				"payment": map[string]any{"savedCard": map[string]any{"methodToken": methods[0]}}},
			wantStatus: "AUTHORIZED", wantAmount: 1000, wantShape: "ITEM", customer: true,
		},
		{
			name: "existing customer, charged on creation",
			input: map[string]any{"currency": "EUR", "customerId": customerID, "autoCharge": true,
				"items": map[string]any{"list": []any{map[string]any{"name": "Setup", "amount": 300},
					map[string]any{"name": "Seat", "amount": 200, "quantity": 3}}},
				"payment": map[string]any{"customer": map[string]any{"initiator": "CARDHOLDER"}}},
			wantStatus: "CAPTURED", wantAmount: 900, wantShape: "LIST", customer: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := createOrder(t, g, tc.input)
			if o.Typename != "Order" {
				t.Fatalf("want an Order, got %+v", o)
			}
			if o.Status != tc.wantStatus || o.Amount.Amount != tc.wantAmount || o.Amount.Currency != "EUR" || o.Items.Shape != tc.wantShape || o.Items.Total != tc.wantAmount {
				t.Errorf("got %+v", o)
			}
			if o.Payment.Last4 == "" {
				t.Errorf("order has no card details: %+v", o)
			}
			if tc.customer && (o.Customer == nil || o.Customer.ID != customerID) {
				t.Errorf("order customer = %+v, want %s", o.Customer, customerID)
			}
		})
	}
}

func TestVerificationRequiredThenRetrySucceedsUnderSameOrder(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	key := uniq("idem-")
	token := uniq("tok_3ds_")
	input := map[string]any{"idempotencyKey": key, "currency": "EUR", "items": map[string]any{"amount": 700},
		"payment": map[string]any{"card": map[string]any{"token": token}}}

	first := createOrder(t, g, input)
	if first.Typename != "VerificationRequired" || first.OrderID == "" || first.Message != "verification required" {
		t.Fatalf("want VerificationRequired with an order id, got %+v", first)
	}
	// Before 3-D Secure is done, the retry is still unverified, same order.
	again := createOrder(t, g, input)
	if again.Typename != "VerificationRequired" || again.OrderID != first.OrderID {
		t.Fatalf("retry before 3-D Secure: got %+v, want VerificationRequired for %s", again, first.OrderID)
	}
	g.sandbox(t, http.MethodPost, "/_sandbox/3ds/"+rawID(first.OrderID)+"/complete", nil, nil)
	done := createOrder(t, g, input)
	if done.Typename != "Order" || done.ID != first.OrderID {
		t.Fatalf("retry after 3-D Secure: got %+v, want Order %s", done, first.OrderID)
	}
}

func TestFailedOrderRetryWithSameKeyKeepsOrderID(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	key := uniq("idem-")
	input := func(token string) map[string]any {
		return map[string]any{"idempotencyKey": key, "number": "ORD-1", "currency": "EUR", "items": map[string]any{"amount": 4200},
			"payment": map[string]any{"card": map[string]any{"token": token}}}
	}
	failed := createOrder(t, g, input(uniq("tok_fail_")))
	if failed.Typename != "OrderFailed" || failed.OrderID == "" || failed.Code == "" {
		t.Fatalf("want OrderFailed with an order id, got %+v", failed)
	}
	ok := createOrder(t, g, input(uniq("tok_ok_")))
	if ok.Typename != "Order" || ok.ID != failed.OrderID {
		t.Fatalf("retry: got %+v, want Order %s", ok, failed.OrderID)
	}

	// Repeating a successful attempt answers the same order without a second
	// upstream charge.
	g.resetStats(t)
	repeat := createOrder(t, g, input(uniq("tok_ok_")))
	if repeat.Typename != "Order" || repeat.ID != ok.ID {
		t.Fatalf("repeat: got %+v, want Order %s", repeat, ok.ID)
	}
	if n := g.stats(t).Routes["POST /payments/v1/order"]; n != 0 {
		t.Errorf("repeat of a created order called the upstream %d times", n)
	}

	// The same key for a different order is refused.
	other := input(uniq("tok_ok_"))
	other["items"] = map[string]any{"amount": 1}
	resp := g.query(t, createOrderMutation, map[string]any{"input": other})
	if resp.code() != "BAD_USER_INPUT" {
		t.Fatalf("reused key for another order: got %+v", resp.Errors)
	}
}

const changeFields = `{ orderId applied order { id status capturedAmount { amount } refundedAmount { amount } } }`

type changeResult struct {
	OrderID string `json:"orderId"`
	Applied string `json:"applied"`
	Order   *struct {
		ID             string `json:"id"`
		Status         string `json:"status"`
		CapturedAmount struct {
			Amount int64 `json:"amount"`
		} `json:"capturedAmount"`
		RefundedAmount struct {
			Amount int64 `json:"amount"`
		} `json:"refundedAmount"`
	} `json:"order"`
}

func changeOrder(g *testGateway, t *testing.T, op, orderID string, amount *int) gqlResponse {
	t.Helper()
	input := map[string]any{"orderId": orderID}
	if amount != nil {
		input["amount"] = *amount
	}
	typ := strings.ToUpper(op[:1]) + op[1:] + "OrderInput"
	return g.query(t, fmt.Sprintf(`mutation($input: %s!) { %sOrder(input: $input) %s }`, typ, op, changeFields), map[string]any{"input": input})
}

func TestCaptureRefundCancelAndInvalidTransitions(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	newOrder := func() string {
		o := createOrder(t, g, map[string]any{"currency": "EUR", "items": map[string]any{"amount": 1000},
			"payment": map[string]any{"card": map[string]any{"token": uniq("tok_ok_")}}})
		if o.Typename != "Order" {
			t.Fatalf("create: %+v", o)
		}
		return o.ID
	}
	amount := func(n int) *int { return &n }
	applied := func(resp gqlResponse, field string) changeResult {
		t.Helper()
		var d map[string]changeResult
		resp.decode(t, &d)
		return d[field]
	}

	// Capture part, then refund, then the rest of the flow.
	id := newOrder()
	c := applied(changeOrder(g, t, "capture", id, amount(600)), "captureOrder")
	if c.Applied != "capture" || c.Order == nil || c.Order.Status != "CAPTURED" || c.Order.CapturedAmount.Amount != 600 {
		t.Fatalf("capture: %+v", c)
	}
	r := applied(changeOrder(g, t, "refund", id, amount(200)), "refundOrder")
	if r.Order == nil || r.Order.Status != "PARTIALLY_REFUNDED" || r.Order.RefundedAmount.Amount != 200 {
		t.Fatalf("partial refund: %+v", r.Order)
	}
	r = applied(changeOrder(g, t, "refund", id, nil), "refundOrder")
	if r.Order == nil || r.Order.Status != "REFUNDED" || r.Order.RefundedAmount.Amount != 600 {
		t.Fatalf("full refund: %+v", r.Order)
	}

	cancelled := newOrder()
	if x := applied(changeOrder(g, t, "cancel", cancelled, nil), "cancelOrder"); x.Order == nil || x.Order.Status != "CANCELLED" {
		t.Fatalf("cancel: %+v", x)
	}

	fresh := newOrder()
	invalid := []struct {
		name, op, id string
		amount       *int
	}{
		{"refund an authorised order", "refund", fresh, nil},
		{"cancel a refunded order", "cancel", id, nil},
		{"capture a cancelled order", "capture", cancelled, nil},
		{"capture more than authorised", "capture", fresh, amount(5000)},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			resp := changeOrder(g, t, tc.op, tc.id, tc.amount)
			if resp.code() != "UPSTREAM_REJECTED" {
				t.Fatalf("want UPSTREAM_REJECTED, got %+v", resp.Errors)
			}
			up, _ := resp.Errors[0].Extensions["upstream"].(map[string]any)
			if up["code"] != "invalid_transition" || resp.Errors[0].Message == "" {
				t.Errorf("want the upstream reason invalid_transition and a message, got %+v", resp.Errors[0])
			}
		})
	}

	if resp := changeOrder(g, t, "capture", "no-such-order", nil); resp.code() != "NOT_FOUND" {
		t.Errorf("unknown order: want NOT_FOUND, got %+v", resp.Errors)
	}
}

// TestUpstreamCallsForTwentyCustomersWithOrders pins the cost of the
// README's query: one customer listing and one order listing, whatever the
// number of customers (see README, "What a query costs").
func TestUpstreamCallsForTwentyCustomersWithOrders(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	var d customersData
	g.query(t, readmeQuery, nil).decode(t, &d)
	for i := len(d.Customers); i < 20; i++ {
		id, methods := createCustomer(t, g, uniq("tok_ok_"))
		o := createOrder(t, g, map[string]any{"currency": "EUR", "customerId": id, "items": map[string]any{"amount": 100 + i},
			"payment": map[string]any{"savedCard": map[string]any{"methodToken": methods[0]}}})
		if o.Typename != "Order" {
			t.Fatalf("order for customer %d: %+v", i, o)
		}
	}

	g.resetStats(t)
	g.query(t, readmeQuery, nil).decode(t, &d)
	if len(d.Customers) != 20 {
		t.Fatalf("want 20 customers, got %d", len(d.Customers))
	}
	for _, c := range d.Customers {
		if len(c.Orders) == 0 {
			t.Errorf("customer %s has no orders", c.Number)
		}
	}
	want := map[string]int{"GET /payments/v1/customer": 1, "GET /payments/v1/order": 1}
	s := g.stats(t)
	if s.Total != 2 || len(s.Routes) != len(want) {
		t.Fatalf("upstream calls = %+v, want exactly %v", s.Routes, want)
	}
	for route, n := range want {
		if s.Routes[route] != n {
			t.Errorf("%s called %d times, want %d", route, s.Routes[route], n)
		}
	}

	// Going back from orders to their customers costs nothing more: the
	// customers are already in the request's loader.
	g.resetStats(t)
	resp := g.query(t, `{ customers { id orders { id customer { id number } } } }`, nil)
	var back struct {
		Customers []struct {
			ID     string `json:"id"`
			Orders []struct {
				Customer struct {
					ID string `json:"id"`
				} `json:"customer"`
			} `json:"orders"`
		} `json:"customers"`
	}
	resp.decode(t, &back)
	for _, c := range back.Customers {
		for _, o := range c.Orders {
			if o.Customer.ID != c.ID {
				t.Errorf("order of %s points at customer %s", c.ID, o.Customer.ID)
			}
		}
	}
	if s := g.stats(t); s.Total != 2 {
		t.Errorf("customers -> orders -> customer cost %d upstream calls, want 2: %v", s.Total, s.Routes)
	}
}

// TestUpstreamFaultsBecomeUpstreamUnavailable injects failures in the
// sandbox and counts attempts: reads are retried (and answer
// UPSTREAM_UNAVAILABLE), writes never are (and a money call answers
// OUTCOME_UNKNOWN).
func TestUpstreamFaultsBecomeUpstreamUnavailable(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	for _, route := range []string{"GET /payments/v1/customer", "POST /payments/v1/order"} {
		g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": route, "error_rate": 1, "status": 503}, nil)
	}
	t.Cleanup(func() { g.sandbox(t, http.MethodDelete, "/_sandbox/faults", nil, nil) })
	g.resetStats(t)
	resp := g.query(t, `{ customers { id } }`, nil)
	if resp.code() != "UPSTREAM_UNAVAILABLE" || strings.Contains(resp.Errors[0].Message, "injected") {
		t.Fatalf("customers with the upstream down: %+v", resp.Errors)
	}
	if n := g.stats(t).Routes["GET /payments/v1/customer"]; n != 3 {
		t.Errorf("a failing read was attempted %d times, want 3 (two retries)", n)
	}
	g.resetStats(t)
	order := g.query(t, createOrderMutation, map[string]any{"input": map[string]any{"currency": "EUR", "items": map[string]any{"amount": 100},
		"payment": map[string]any{"card": map[string]any{"token": uniq("tok_ok_")}}}})
	// A 5xx may come after the upstream acted: a money call is never told
	// "unavailable, try again" then, but that its outcome is unknown.
	if order.code() != "OUTCOME_UNKNOWN" {
		t.Fatalf("createOrder with the upstream down: %+v", order.Errors)
	}
	if n := g.stats(t).Routes["POST /payments/v1/order"]; n != 1 {
		t.Errorf("a failing order creation was sent %d times; a write is never retried", n)
	}
}

// TestWrongKeyKindIsAConfigurationErrorNotALeak runs the gateway against a
// separately started sandbox, as against real upstreams, with the public
// key configured where the private key belongs: the upstream refuses the
// key kind, the client sees only "internal error", and the log names the
// problem without the key.
func TestWrongKeyKindIsAConfigurationErrorNotALeak(t *testing.T) {
	sb := sandbox.New(sandbox.Config{})
	sb.Seed()
	srv := httptest.NewServer(validated(t, sb))
	t.Cleanup(func() { srv.Close(); sb.Close() })
	g := startGateway(t,
		"-payments-url", srv.URL+"/payments", "-banking-url", srv.URL+"/banking", "-payments-corporations", demoCorpID,
		"-payments-private-key", paymentsim.PublicKey, "-payments-public-key", paymentsim.PublicKey,
		"-payments-access-token", paymentsim.AccessToken)
	g.SandboxURL = srv.URL
	g = g.as(g.signInAPI(t))
	resp := g.query(t, `{ customers { id } }`, nil)
	if resp.code() != "INTERNAL" || resp.Errors[0].Message != "internal error" {
		t.Fatalf("want INTERNAL, got %+v", resp.Errors)
	}
	if s := g.stats(t); s.Routes["GET /payments/v1/customer"] != 1 {
		t.Errorf("a refused key must not be retried: %v", s.Routes)
	}
	logs := g.Logs.String()
	mustContain(t, logs, "payments refused the gateway's credentials")
	if strings.Contains(logs, paymentsim.PublicKey) || strings.Contains(logs, paymentsim.AccessToken) {
		t.Errorf("a configured key appears in the log")
	}
}

// TestCustomersOrdersFailEachOnItsOwnPath: Customer.orders is a batch
// resolver (one call for all the customers of a list); when the order
// listing fails, every customer still reports the failure on its own
// path, with the code the per-customer resolver gave, and the listing is
// read once (a retried attempt counts as one per attempt, not per
// customer).
func TestCustomersOrdersFailEachOnItsOwnPath(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	var d customersData
	g.query(t, `{ customers { id } }`, nil).decode(t, &d)
	if len(d.Customers) < 2 {
		t.Fatalf("the seed has %d customers; the test needs a list", len(d.Customers))
	}
	g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": "GET /payments/v1/order", "error_rate": 1}, nil)
	t.Cleanup(func() {
		g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": "GET /payments/v1/order", "error_rate": 0}, nil)
	})
	g.resetStats(t)

	r := g.query(t, `{ customers { id orders { id } } }`, nil)

	if len(r.Errors) != len(d.Customers) {
		t.Fatalf("%d errors for %d customers: %+v", len(r.Errors), len(d.Customers), r.Errors)
	}
	seen := map[float64]bool{}
	for _, e := range r.Errors {
		if c, _ := e.Extensions["code"].(string); c != "UPSTREAM_UNAVAILABLE" {
			t.Errorf("code %q: %+v", c, e)
		}
		if len(e.Path) != 3 || e.Path[0] != "customers" || e.Path[2] != "orders" {
			t.Errorf("path %v, want [customers i orders]", e.Path)
			continue
		}
		i, _ := e.Path[1].(float64)
		seen[i] = true
	}
	if len(seen) != len(d.Customers) {
		t.Errorf("errors on %d distinct customers of %d: %+v", len(seen), len(d.Customers), r.Errors)
	}
	if s := g.stats(t); s.Routes["GET /payments/v1/customer"] != 1 || s.Routes["GET /payments/v1/order"] > 3 {
		t.Errorf("upstream calls %+v: want one customer listing and one order listing (with its retries)", s.Routes)
	}
}
