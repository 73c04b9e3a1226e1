package resolvers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fingraph/fingraph/upstream/payments"
)

// Orders: reads, their conversion, createOrder's payment shapes and typed
// refusals, and the money intents (create, capture, refund, cancel) under
// idempotency keys, with answers lost on the way back.

const createOrderMutation = `mutation($in: CreateOrderInput!) { createOrder(input: $in) {
  __typename
  ... on Order { id upstreamId number status charge amount { amount currency } capturedAmount { amount }
    items { shape total items { name amount quantity } } payment { type last4 expiresMonth expiresYear } }
  ... on VerificationRequired { orderId verificationUrl message }
  ... on OrderFailed { orderId code message }
} }`

type createOrderAnswer struct {
	CreateOrder struct {
		Typename       string `json:"__typename"`
		ID, UpstreamID string
		Number, Charge *string
		Status         string
		Amount         *struct {
			Amount   int64
			Currency string
		}
		CapturedAmount *struct{ Amount int64 }
		Items          *struct {
			Shape string
			Total int64
			Items []struct {
				Name             *string
				Amount, Quantity int64
			}
		}
		Payment *struct {
			Type                      string
			Last4                     *string
			ExpiresMonth, ExpiresYear *int
		}
		OrderID, VerificationURL, Code, Message string
	} `json:"createOrder"`
}

// orderInput is a valid createOrder input paying 1200 EUR with a card
// token; change edits it.
func orderInput(change func(in map[string]any)) map[string]any {
	in := map[string]any{"items": map[string]any{"amount": 1200}, "currency": "EUR",
		"payment": map[string]any{"card": map[string]any{"token": "tok_ok_1"}}}
	if change != nil {
		change(in)
	}
	return map[string]any{"in": in}
}

func createOrder(t *testing.T, h *harness, vars map[string]any) createOrderAnswer {
	t.Helper()
	var got createOrderAnswer
	h.exec(createOrderMutation, vars).decode(t, &got)
	return got
}

// createOrder's input is checked before any upstream call, each refusal
// naming its field.
func TestCreateOrderRefusesBadInput(t *testing.T) {
	t.Parallel()
	item := func(name string, amount, quantity int64) map[string]any {
		return map[string]any{"name": name, "amount": amount, "quantity": quantity}
	}
	list := make([]any, 101)
	for i := range list {
		list[i] = item("x", 1, 1)
	}
	for _, tc := range []struct {
		field  string
		change func(in map[string]any)
	}{
		{"input.items.amount", func(in map[string]any) { in["items"] = map[string]any{"amount": 0} }},
		{"input.items.list", func(in map[string]any) { in["items"] = map[string]any{"list": []any{}} }},
		{"input.items.list", func(in map[string]any) { in["items"] = map[string]any{"list": list} }},
		{"input.items.list[1].quantity", func(in map[string]any) {
			in["items"] = map[string]any{"list": []any{item("a", 1, 1), item("b", 1, 0)}}
		}},
		{"input.items.item.name", func(in map[string]any) { in["items"] = map[string]any{"item": item(" ", 1, 1)} }},
		{"input.items.item.amount", func(in map[string]any) { in["items"] = map[string]any{"item": item("a", -5, 1)} }},
		{"input.items", func(in map[string]any) {
			in["items"] = map[string]any{"item": item("a", 9_007_199_254_740, 1_000_000)}
		}},
		{"input.currency", func(in map[string]any) { in["currency"] = "Eur" }},
		{"input.number", func(in map[string]any) { in["number"] = strings.Repeat("n", 300) }},
		{"input.customerId", func(in map[string]any) { in["customerId"] = "" }},
		{"input.payment.card.token", func(in map[string]any) {
			in["payment"] = map[string]any{"card": map[string]any{"token": `tok"1`}}
		}},
		{"input.customerId", func(in map[string]any) {
			in["payment"] = map[string]any{"savedCard": map[string]any{"methodToken": "pm-a"}}
		}},
		{"input.customerId", func(in map[string]any) { in["payment"] = map[string]any{"customer": map[string]any{}} }},
		{"input.payment.savedCard.methodToken", func(in map[string]any) {
			in["customerId"] = demoCustomer
			in["payment"] = map[string]any{"savedCard": map[string]any{"methodToken": ""}}
		}},
		{"input.idempotencyKey", func(in map[string]any) { in["idempotencyKey"] = strings.Repeat("k", 256) }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			wantFieldError(t, h.as(staff).exec(createOrderMutation, orderInput(tc.change)), tc.field)
			h.noUpstreamCall(t, 0, tc.field)
		})
	}

	// What the schema itself refuses (two item forms or payment shapes of
	// a @oneOf input, a missing payment, an unknown field) is
	// BAD_USER_INPUT too, and reaches no resolver.
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
	}{
		{"two item forms", createOrderMutation, orderInput(func(in map[string]any) {
			in["items"] = map[string]any{"amount": 5, "list": []any{item("x", 5, 1)}}
		})},
		{"two payment shapes", createOrderMutation, orderInput(func(in map[string]any) {
			in["payment"] = map[string]any{"card": map[string]any{"token": "tok_ok_x"}, "customer": map[string]any{}}
		})},
		{"missing payment", createOrderMutation, orderInput(func(in map[string]any) { delete(in, "payment") })},
		{"an unknown field", `{ customers { id cardNumber } }`, nil},
	} {
		h := newHarness(t)
		resp := h.as(staff).exec(tc.query, tc.vars)
		if e := refused(t, resp, "BAD_USER_INPUT", ""); e.Message == "" {
			t.Fatalf("%s: an error without a message", tc.name)
		}
		h.noUpstreamCall(t, 0, tc.name)
	}

	h := newHarness(t)
	h.as(staff)
	wantFieldError(t, h.exec(createOrderMutation, orderInput(func(in map[string]any) { in["items"] = map[string]any{"item": item("a", 5, 0)} })),
		"input.items.item.quantity")
	refused(t, h.exec(createOrderMutation, orderInput(func(in map[string]any) { in["customerId"] = globalOrder("ord-1") })), "NOT_FOUND", "")
	resp := h.exec(`mutation { createOrder(input: {items: {amount: 5}, currency: "EUR", payment: {card: {token: "tok_ok_inline"}}}) { __typename } }`, nil)
	wantFieldError(t, resp, "input.payment.card.token")
	h.noUpstreamCall(t, 0, "refused orders")

	// A saved card must be one of the customer's: that takes a read of
	// the customer, and nothing is sent.
	addCustomerWithCards(h, "cus-m", "pm-a")
	wantFieldError(t, h.exec(createOrderMutation, orderInput(func(in map[string]any) {
		in["customerId"] = globalCustomer("cus-m")
		in["payment"] = map[string]any{"savedCard": map[string]any{"methodToken": "pm-other"}}
	})), "input.payment.savedCard.methodToken")
	if h.payments.orders.calls("Create") != 0 {
		t.Fatal("an order with another customer's card was sent")
	}
}

// An order paid by card token is authorised and answered as the upstream
// holds it: its items as given, its total as amount, the card without its
// token; autoCharge captures it at once.
func TestCreateOrderByCardToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(staff)
	got := createOrder(t, h, orderInput(func(in map[string]any) {
		in["number"] = "N-1"
		in["items"] = map[string]any{"list": []any{map[string]any{"name": "tea", "amount": 300, "quantity": 3}, map[string]any{"name": "cup", "amount": 100}}}
		in["payment"] = map[string]any{"card": map[string]any{"token": "tok_ok_1", "browser": map[string]any{"ua": "x"}}}
	})).CreateOrder
	if got.Typename != "Order" || got.ID != globalOrder(got.UpstreamID) || *got.Number != "N-1" || got.Status != "AUTHORIZED" || got.Charge != nil {
		t.Fatalf("order %+v", got)
	}
	if got.Amount.Amount != 1000 || got.Amount.Currency != "EUR" || got.CapturedAmount.Amount != 0 {
		t.Fatalf("amounts %+v %+v, want 1000 EUR authorised, none captured", got.Amount, got.CapturedAmount)
	}
	if it := got.Items; it.Shape != "LIST" || it.Total != 1000 || len(it.Items) != 2 || *it.Items[0].Name != "tea" || it.Items[0].Quantity != 3 || it.Items[1].Quantity != 1 {
		t.Fatalf("items %+v", got.Items)
	}
	if p := got.Payment; p.Type != "card" || *p.Last4 != "4242" || *p.ExpiresMonth != 12 || *p.ExpiresYear != 30 {
		t.Fatalf("payment %+v", got.Payment)
	}
	sent := h.payments.orders.sent()
	if len(sent) != 1 || sent[0].Payment.Type != "card" || sent[0].Payment.Card != "tok_ok_1" || sent[0].Payment.Client.Browser["ua"] != "x" || sent[0].Customer != "" {
		t.Fatalf("sent %+v", sent)
	}

	got = createOrder(t, h, orderInput(func(in map[string]any) {
		in["autoCharge"] = true
		in["items"] = map[string]any{"item": map[string]any{"name": "one", "amount": 250, "quantity": 2}}
	})).CreateOrder
	if got.Status != "CAPTURED" || got.CapturedAmount.Amount != 500 || got.Charge == nil || *got.Charge != "auto" || got.Items.Shape != "ITEM" {
		t.Fatalf("auto-charged order %+v", got)
	}
}

// A saved-card payment is built from the customer's stored card, as the
// spec's conversion does: its token, the merchant as initiator unless told
// otherwise, and the order number (or a reference of the gateway's) as the
// series' reference. A customer payment names the customer and initiator.
func TestCreateOrderWithStoredCards(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	addCustomerWithCards(h, "cus-m", "pm-a", "pm-b")
	h.as(staff)
	for _, tc := range []struct {
		name                 string
		saved                map[string]any
		number               any
		initiator, reference string
	}{
		{"defaults", map[string]any{"methodToken": "pm-b"}, "N-7", "merchant", "N-7"},
		{"given", map[string]any{"methodToken": "pm-b", "initiator": "CARDHOLDER", "reference": "series-1"}, "N-8", "cardholder", "series-1"},
		{"no number", map[string]any{"methodToken": "pm-a"}, nil, "merchant", "fg-"},
	} {
		got := createOrder(t, h, orderInput(func(in map[string]any) {
			in["customerId"], in["number"] = globalCustomer("cus-m"), tc.number
			in["payment"] = map[string]any{"savedCard": tc.saved}
		})).CreateOrder
		if got.Typename != "Order" {
			t.Fatalf("%s: %+v", tc.name, got)
		}
		sent := h.payments.orders.sent()
		p := sent[len(sent)-1]
		if p.Customer != "cus-m" || p.Payment.Card != tc.saved["methodToken"] || p.Payment.Subsequent == nil ||
			p.Payment.Subsequent.Initiator != tc.initiator || !strings.HasPrefix(p.Payment.Subsequent.Reference, tc.reference) {
			t.Fatalf("%s: sent %+v (%+v), want card %v by %s, reference %s", tc.name, p, p.Payment.Subsequent, tc.saved["methodToken"], tc.initiator, tc.reference)
		}
	}

	createOrder(t, h, orderInput(func(in map[string]any) {
		in["customerId"] = "cus-m"
		in["payment"] = map[string]any{"customer": map[string]any{"initiator": "MERCHANT"}}
	}))
	sent := h.payments.orders.sent()
	if p := sent[len(sent)-1]; p.Customer != "cus-m" || p.Payment.Type != "customer" || p.Payment.Initiator != "merchant" {
		t.Fatalf("customer payment sent %+v", p.Payment)
	}

	refused(t, h.exec(createOrderMutation, orderInput(func(in map[string]any) {
		in["customerId"] = "cus-none"
		in["payment"] = map[string]any{"savedCard": map[string]any{"methodToken": "pm-a"}}
	})), "BAD_USER_INPUT", "")
}

// A customer session orders for itself only: it may name no customer,
// "me" or its own id, and its saved cards are read as `me`; naming another
// customer is FORBIDDEN without an upstream call.
func TestCustomerSessionOrdersForItself(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.payments.customers.list = nil
	addCustomerWithCards(h, demoCustomer, "pm-own")
	addCustomerWithCards(h, "cus-2", "pm-theirs")
	h.as(customer)
	for _, id := range []any{nil, "me", demoCustomer} {
		got := createOrder(t, h, orderInput(func(in map[string]any) {
			in["customerId"] = id
			in["payment"] = map[string]any{"savedCard": map[string]any{"methodToken": "pm-own"}}
		})).CreateOrder
		if got.Typename != "Order" {
			t.Fatalf("customer %v: %+v", id, got)
		}
	}
	for _, s := range h.payments.orders.sent() {
		if s.Customer != demoCustomer {
			t.Fatalf("a customer session's order was sent for %q", s.Customer)
		}
	}
	before := h.payments.total()
	refused(t, h.exec(createOrderMutation, orderInput(func(in map[string]any) { in["customerId"] = "cus-2" })), "FORBIDDEN", "")
	if h.payments.total() != before {
		t.Fatal("a customer session's order for another customer reached the upstream")
	}
	wantFieldError(t, h.exec(createOrderMutation, orderInput(func(in map[string]any) {
		in["payment"] = map[string]any{"savedCard": map[string]any{"methodToken": "pm-theirs"}}
	})), "input.payment.savedCard.methodToken")
}

// 3-D Secure and a declined card are typed results naming the attempt's
// order (its global id), not errors. A retry with the key sends that order
// id back (the spec's rule 3) and completes the same order; without a key
// a retry is a new attempt.
func TestCreateOrderRefusalsAreTypedAndRetriedUnderTheirOrderID(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(staff)
	key := "order-3ds"
	in := orderInput(func(in map[string]any) {
		in["idempotencyKey"] = key
		in["payment"] = map[string]any{"card": map[string]any{"token": "tok_3ds_1"}}
	})
	first := createOrder(t, h, in).CreateOrder
	if first.Typename != "VerificationRequired" || first.OrderID == "" || first.VerificationURL == "" || first.Message == "" {
		t.Fatalf("3-D Secure: %+v", first)
	}
	raw := h.payments.orders.sent()[0]
	if first.OrderID == "ord-new-1" || !strings.HasPrefix(raw.Number, "fg-") {
		t.Fatalf("orderId %s, want the global id; sent number %q, want the key's own", first.OrderID, raw.Number)
	}
	again := createOrder(t, h, in).CreateOrder
	if again.Typename != "VerificationRequired" || again.OrderID != first.OrderID {
		t.Fatalf("the retry before verification: %+v, want the same attempt", again)
	}
	sent := h.payments.orders.sent()
	if sent[1].ID == "" || globalOrder(sent[1].ID) != first.OrderID || sent[1].Number != raw.Number {
		t.Fatalf("the retry sent id %q number %q, want the refused order's id and the same number", sent[1].ID, sent[1].Number)
	}
	h.payments.orders.verify(sent[1].ID)
	done := createOrder(t, h, in).CreateOrder
	if done.Typename != "Order" || done.ID != first.OrderID {
		t.Fatalf("after verification: %+v, want the order %s", done, first.OrderID)
	}

	failed := createOrder(t, h, orderInput(func(in map[string]any) {
		in["payment"] = map[string]any{"card": map[string]any{"token": "tok_fail_1"}}
	})).CreateOrder
	if failed.Typename != "OrderFailed" || failed.Code != "card_declined" || failed.OrderID == "" {
		t.Fatalf("declined: %+v", failed)
	}
	createOrder(t, h, orderInput(func(in map[string]any) {
		in["payment"] = map[string]any{"card": map[string]any{"token": "tok_fail_1"}}
	}))
	sent = h.payments.orders.sent()
	if last := sent[len(sent)-1]; last.ID != "" {
		t.Fatalf("a retry without a key sent the earlier order id %q", last.ID)
	}
	again = createOrder(t, h, orderInput(func(in map[string]any) {
		in["payment"] = map[string]any{"card": map[string]any{"token": "tok_fail_2"}}
	})).CreateOrder
	if again.Typename != "OrderFailed" || again.OrderID == failed.OrderID {
		t.Fatalf("two attempts without a key: %s and %s, want two orders", failed.OrderID, again.OrderID)
	}
}

// An order under a key is placed once: the retry answers the same order
// without sending, the same key for another order is refused naming the
// key, and another principal's key of the same name is its own.
func TestCreateOrderWithAKeyPlacesOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := func(k string, amount int) map[string]any {
		return orderInput(func(in map[string]any) {
			in["idempotencyKey"], in["items"] = k, map[string]any{"amount": amount}
		})
	}
	h.as(staff)
	first := createOrder(t, h, key("o-1", 1200)).CreateOrder
	retry := createOrder(t, h, key("o-1", 1200)).CreateOrder
	if first.Typename != "Order" || retry.ID != first.ID || retry.Amount.Amount != 1200 || retry.Status != first.Status {
		t.Fatalf("the retry answered %+v, want %+v", retry, first)
	}
	if n := h.payments.orders.calls("Create"); n != 1 {
		t.Fatalf("%d orders placed, want 1", n)
	}
	wantFieldError(t, h.exec(createOrderMutation, key("o-1", 1300)), "input.idempotencyKey")
	other := createOrder(t, h.as(apiClient), key("o-1", 1200)).CreateOrder
	if other.ID == first.ID {
		t.Fatal("another principal's key answered the first principal's order")
	}
	if n := h.payments.orders.calls("Create"); n != 2 {
		t.Fatalf("%d orders placed, want 2", n)
	}

	// So are the declined attempts of two principals under one key: each
	// its own order, never a retry of the other's.
	declined := func(who principal) string {
		got := createOrder(t, h.as(who), orderInput(func(in map[string]any) {
			in["idempotencyKey"] = "shared"
			in["payment"] = map[string]any{"card": map[string]any{"token": "tok_fail_" + string(who.kind)}}
		})).CreateOrder
		if got.Typename != "OrderFailed" {
			t.Fatalf("%s: %+v, want OrderFailed", who.kind, got)
		}
		return got.OrderID
	}
	if a, b := declined(apiClient), declined(staff); a == b {
		t.Fatalf("two principals' attempts under one key share the order %s", a)
	}
	h.as(staff)

	// A refusal the client can fix releases the key: the retry sends.
	h.payments.orders.failNext("Create", paymentsRejection(http.StatusBadRequest, "invalid_request", "currency", "unsupported currency"))
	e := refused(t, h.exec(createOrderMutation, key("o-2", 500)), "UPSTREAM_REJECTED", "")
	if up := e.Upstream(); up["code"] != "invalid_request" || up["field"] != "currency" || e.Message != "unsupported currency" {
		t.Fatalf("refusal %+v", e)
	}
	if got := createOrder(t, h, key("o-2", 500)).CreateOrder; got.Typename != "Order" {
		t.Fatalf("the retry after a refusal: %+v", got)
	}
}

// An order whose answer was lost is OUTCOME_UNKNOWN; the retry with the
// key finds the order by the number the gateway gave it and answers it,
// placing nothing twice. Without a key, or with a number the client chose
// (another request may have used it), the gateway cannot find out, and
// says so: not retryable.
func TestCreateOrderWhoseAnswerWasLost(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(staff)
	in := orderInput(func(in map[string]any) { in["idempotencyKey"] = "o-lost" })
	h.payments.orders.loseNext("Create")
	e := refused(t, h.exec(createOrderMutation, in), "OUTCOME_UNKNOWN", "")
	if e.Extensions["retryable"] != true || e.Extensions["field"] != "input.idempotencyKey" || e.Extensions["attemptedAt"] == nil {
		t.Fatalf("lost answer: %+v, want a retryable OUTCOME_UNKNOWN with attemptedAt", e)
	}
	got := createOrder(t, h, in).CreateOrder
	if got.Typename != "Order" || got.UpstreamID != "ord-new-1" || got.Amount.Amount != 1200 {
		t.Fatalf("the retry answered %+v, want the order the lost attempt made", got)
	}
	if n := h.payments.orders.calls("Create"); n != 1 {
		t.Fatalf("%d orders placed, want the lost one only", n)
	}

	h.payments.orders.loseNext("Create")
	e = refused(t, h.exec(createOrderMutation, orderInput(nil)), "OUTCOME_UNKNOWN", "")
	if e.Extensions["retryable"] != false || e.Extensions["field"] != nil {
		t.Fatalf("lost answer without a key: %+v, want OUTCOME_UNKNOWN, not retryable", e)
	}

	own := orderInput(func(in map[string]any) { in["idempotencyKey"], in["number"] = "o-own-number", "CLIENT-1" })
	h.payments.orders.loseNext("Create")
	refused(t, h.exec(createOrderMutation, own), "OUTCOME_UNKNOWN", "")
	e = refused(t, h.exec(createOrderMutation, own), "OUTCOME_UNKNOWN", "")
	if e.Extensions["retryable"] != false {
		t.Fatalf("an order found only by the client's number: %+v, want it unprovable", e)
	}
	if n := h.payments.orders.calls("Create"); n != 3 {
		t.Fatalf("%d orders placed, want 3", n)
	}
}

// A lost attempt that made no order is sent again only once it has
// settled: before then the retry is OUTCOME_UNKNOWN again (it may still be
// on its way), after it the retry places the order, once.
func TestCreateOrderLostBeforeTheUpstreamActedIsSentOnceSettled(t *testing.T) {
	t.Parallel()
	in := orderInput(func(in map[string]any) { in["idempotencyKey"] = "o-1" })

	h := newHarness(t)
	h.payments.orders.failNext("Create", unavailable("payments"))
	refused(t, h.as(staff).exec(createOrderMutation, in), "OUTCOME_UNKNOWN", "")
	e := refused(t, h.exec(createOrderMutation, in), "OUTCOME_UNKNOWN", "")
	if e.Extensions["retryable"] != true || h.payments.orders.calls("Create") != 1 {
		t.Fatalf("before it settled: %+v after %d sends, want retryable and nothing sent again", e, h.payments.orders.calls("Create"))
	}

	h = newHarness(t)
	h.r.OutcomeSettle = time.Nanosecond
	h.payments.orders.failNext("Create", unavailable("payments"))
	refused(t, h.as(staff).exec(createOrderMutation, in), "OUTCOME_UNKNOWN", "")
	if got := createOrder(t, h, in).CreateOrder; got.Typename != "Order" {
		t.Fatalf("after it settled: %+v", got)
	}
	if n := len(h.payments.orders.list); n != 1 {
		t.Fatalf("%d orders exist, want 1", n)
	}
}

const (
	captureMutation = `mutation($in: CaptureOrderInput!) { captureOrder(input: $in) { orderId applied order { status capturedAmount { amount } refundedAmount { amount } } } }`
	refundMutation  = `mutation($in: RefundOrderInput!) { refundOrder(input: $in) { orderId applied order { status refundedAmount { amount } } } }`
	cancelMutation  = `mutation($in: CancelOrderInput!) { cancelOrder(input: $in) { orderId applied order { status } } }`
)

type orderChangeAnswer struct {
	OrderID, Applied string
	Order            *struct {
		Status                         string
		CapturedAmount, RefundedAmount *struct{ Amount int64 }
	}
}

// withOrder stores an authorised order of 1000 EUR created an hour ago.
func withOrder(h *harness, id string) {
	h.payments.orders.add(payments.Order{ID: id, Created: time.Now().UTC().Add(-time.Hour), Customer: payments.OrderCustomer{ID: demoCustomer},
		Currency: "EUR", Amount: 1000, Status: "authorized"})
}

func changeOrder(t *testing.T, h *harness, mutation string, in map[string]any) orderChangeAnswer {
	t.Helper()
	var got map[string]orderChangeAnswer
	h.exec(mutation, map[string]any{"in": in}).decode(t, &got)
	for _, v := range got {
		return v
	}
	t.Fatal("no payload")
	return orderChangeAnswer{}
}

// Capture, refund and cancel apply one event each to the order and answer
// the order read back after it; whether the order's state allows it is
// the upstream's call, its refusal reaching the client with its reason.
func TestOrderChangesApplyOneEvent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withOrder(h, "ord-1")
	withOrder(h, "ord-2")
	h.as(apiClient)

	got := changeOrder(t, h, captureMutation, map[string]any{"orderId": globalOrder("ord-1"), "amount": 600})
	if got.OrderID != globalOrder("ord-1") || got.Applied != "capture" || got.Order.Status != "CAPTURED" || got.Order.CapturedAmount.Amount != 600 {
		t.Fatalf("capture: %+v", got)
	}
	got = changeOrder(t, h, refundMutation, map[string]any{"orderId": "ord-1", "amount": 100})
	if got.Order.Status != "PARTIALLY_REFUNDED" || got.Order.RefundedAmount.Amount != 100 {
		t.Fatalf("partial refund: %+v", got)
	}
	got = changeOrder(t, h, refundMutation, map[string]any{"orderId": "ord-1"})
	if got.Order.Status != "REFUNDED" || got.Order.RefundedAmount.Amount != 600 {
		t.Fatalf("refund of the rest: %+v", got)
	}
	got = changeOrder(t, h, cancelMutation, map[string]any{"orderId": globalOrder("ord-2")})
	if got.Applied != "cancel" || got.Order.Status != "CANCELLED" {
		t.Fatalf("cancel: %+v", got)
	}
	applied := h.payments.orders.applied
	if len(applied) != 4 || applied[0][0].ID != "ord-1" || applied[0][0].Event[0].Type != "capture" || *applied[0][0].Event[0].Amount != 600 ||
		applied[2][0].Event[0].Amount != nil || applied[3][0].Event[0].Type != "cancel" {
		t.Fatalf("applied %+v", applied)
	}

	e := refused(t, h.exec(captureMutation, map[string]any{"in": map[string]any{"orderId": "ord-2"}}), "UPSTREAM_REJECTED", "")
	if up := e.Upstream(); up["code"] != "invalid_transition" || up["status"] != 409.0 || !strings.Contains(e.Message, "cancelled") {
		t.Fatalf("capture of a cancelled order: %+v", e)
	}
	refused(t, h.exec(cancelMutation, map[string]any{"in": map[string]any{"orderId": "ord-none"}}), "NOT_FOUND", "")

	// An order older than the 90 days the listing reads is changed, and
	// read back as null.
	h.payments.orders.add(payments.Order{ID: "ord-old", Created: time.Now().UTC().AddDate(0, 0, -120), Currency: "EUR", Amount: 10, Status: "authorized"})
	if got := changeOrder(t, h, cancelMutation, map[string]any{"orderId": "ord-old"}); got.Applied != "cancel" || got.Order != nil {
		t.Fatalf("cancel of an old order: %+v, want applied and a null order", got)
	}
}

// Changes of an order are refused before any upstream call when their
// input is bad or the caller does not operate payments.
func TestOrderChangesRefuseBadInputAndOtherPrincipals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, mutation string
		in             map[string]any
		who            principal
		want, field    string
	}{
		{"zero capture", captureMutation, map[string]any{"orderId": "ord-1", "amount": 0}, staff, "BAD_USER_INPUT", "input.amount"},
		{"negative refund", refundMutation, map[string]any{"orderId": "ord-1", "amount": -5}, staff, "BAD_USER_INPUT", "input.amount"},
		{"empty order", cancelMutation, map[string]any{"orderId": ""}, staff, "BAD_USER_INPUT", "input.orderId"},
		{"a customer's id", captureMutation, map[string]any{"orderId": globalCustomer(demoCustomer)}, staff, "NOT_FOUND", ""},
		{"blank key", refundMutation, map[string]any{"orderId": "ord-1", "idempotencyKey": " "}, staff, "BAD_USER_INPUT", "input.idempotencyKey"},
		{"person", captureMutation, map[string]any{"orderId": "ord-1"}, person, "FORBIDDEN", ""},
		{"payments customer", cancelMutation, map[string]any{"orderId": "ord-1"}, customer, "FORBIDDEN", ""},
		{"another corporation's API client", refundMutation, map[string]any{"orderId": "ord-1"}, outsider, "FORBIDDEN", ""},
		{"signed out", captureMutation, map[string]any{"orderId": "ord-1"}, anonymous, "UNAUTHENTICATED", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			withOrder(h, "ord-1")
			refused(t, h.as(tc.who).exec(tc.mutation, map[string]any{"in": tc.in}), tc.want, tc.field)
			h.noUpstreamCall(t, 0, tc.name)
		})
	}
}

// A change under a key is applied once; the same key for another change
// is refused naming the key.
func TestOrderChangeWithAKeyAppliesOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withOrder(h, "ord-1")
	h.as(staff)
	in := map[string]any{"orderId": "ord-1", "amount": 300, "idempotencyKey": "cap-1"}
	first := changeOrder(t, h, captureMutation, in)
	retry := changeOrder(t, h, captureMutation, in)
	if retry.Applied != "capture" || retry.Order.CapturedAmount.Amount != 300 || first.Order.CapturedAmount.Amount != 300 {
		t.Fatalf("first %+v, retry %+v: want one capture of 300", first, retry)
	}
	if n := h.payments.orders.calls("Apply"); n != 1 {
		t.Fatalf("%d changes applied, want 1", n)
	}
	wantFieldError(t, h.exec(captureMutation, map[string]any{"in": map[string]any{"orderId": "ord-1", "amount": 400, "idempotencyKey": "cap-1"}}), "input.idempotencyKey")
}

// A change whose answer was lost is OUTCOME_UNKNOWN; the retry with the
// key reads the order and answers what it finds: the change, when the
// order moved by exactly it, without applying it again; an order that
// moved otherwise can never be attributed (not retryable).
func TestOrderChangeWhoseAnswerWasLost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, mutation string
		in             map[string]any
		setup          func(o *payments.Order)
		want           string
	}{
		{"capture", captureMutation, map[string]any{"orderId": "ord-1", "amount": 400}, nil, "CAPTURED"},
		{"whole capture", captureMutation, map[string]any{"orderId": "ord-1"}, nil, "CAPTURED"},
		{"refund", refundMutation, map[string]any{"orderId": "ord-1"}, func(o *payments.Order) { o.Status, o.CapturedAmount = "captured", 700 }, "REFUNDED"},
		{"cancel", cancelMutation, map[string]any{"orderId": "ord-1"}, nil, "CANCELLED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			withOrder(h, "ord-1")
			if tc.setup != nil {
				tc.setup(&h.payments.orders.list[0])
			}
			h.as(staff)
			tc.in["idempotencyKey"] = "lost-" + tc.name
			h.payments.orders.loseNext("Apply")
			e := refused(t, h.exec(tc.mutation, map[string]any{"in": tc.in}), "OUTCOME_UNKNOWN", "")
			if e.Extensions["retryable"] != true {
				t.Fatalf("lost answer: %+v, want retryable", e)
			}
			got := changeOrder(t, h, tc.mutation, tc.in)
			if got.Order == nil || got.Order.Status != tc.want {
				t.Fatalf("the retry answered %+v, want the order %s", got, tc.want)
			}
			if n := h.payments.orders.calls("Apply"); n != 1 {
				t.Fatalf("%d changes sent, want the lost one only", n)
			}
		})
	}

	h := newHarness(t)
	withOrder(h, "ord-1")
	h.as(staff)
	in := map[string]any{"in": map[string]any{"orderId": "ord-1", "amount": 400, "idempotencyKey": "cap-x"}}
	h.payments.orders.loseNext("Apply")
	refused(t, h.exec(captureMutation, in), "OUTCOME_UNKNOWN", "")
	h.payments.orders.list[0].CapturedAmount = 900 // moved by more than the capture
	e := refused(t, h.exec(captureMutation, in), "OUTCOME_UNKNOWN", "")
	if e.Extensions["retryable"] != false || h.payments.orders.calls("Apply") != 1 {
		t.Fatalf("an order that moved otherwise: %+v, want OUTCOME_UNKNOWN, not retryable, nothing sent", e)
	}
}

// A lost change that did not reach the upstream is sent again once it has
// settled; meanwhile every other change of that order is refused as
// RATE_LIMITED with when to come back, and nothing is sent.
func TestOrderChangeLostBeforeTheUpstreamActed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withOrder(h, "ord-1")
	h.as(staff)
	h.payments.orders.failNext("Apply", unavailable("payments"))
	refused(t, h.exec(cancelMutation, map[string]any{"in": map[string]any{"orderId": "ord-1"}}), "OUTCOME_UNKNOWN", "")
	e := refused(t, h.exec(captureMutation, map[string]any{"in": map[string]any{"orderId": "ord-1"}}), "RATE_LIMITED", "")
	if after, _ := e.Extensions["retryAfter"].(float64); after < 1 {
		t.Fatalf("a busy order: %+v, want retryAfter", e)
	}
	if n := h.payments.orders.calls("Apply"); n != 1 {
		t.Fatalf("%d changes sent, want the lost one only", n)
	}

	h = newHarness(t)
	h.r.OutcomeSettle = time.Nanosecond
	withOrder(h, "ord-1")
	h.as(staff)
	in := map[string]any{"orderId": "ord-1", "amount": 250, "idempotencyKey": "cap-1"}
	h.payments.orders.failNext("Apply", unavailable("payments"))
	refused(t, h.exec(captureMutation, map[string]any{"in": in}), "OUTCOME_UNKNOWN", "")
	got := changeOrder(t, h, captureMutation, in)
	if got.Order.CapturedAmount.Amount != 250 || h.payments.orders.calls("Apply") != 2 {
		t.Fatalf("after it settled: %+v after %d sends, want one capture of 250 sent again", got, h.payments.orders.calls("Apply"))
	}
}

const ordersQuery = `query($s: Date, $e: Date) { orders(start: $s, end: $e) { id upstreamId status number amount { amount currency } contact { name } } }`

// orders(start, end) refuses a window that ends before it starts or spans
// more than 366 days, before an upstream call; without dates it reads the
// last 30 days.
func TestOrdersWindowRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	now := time.Date(2025, 6, 15, 10, 0, 0, 0, time.UTC)
	h.r.Now = func() time.Time { return now }
	h.payments.orders.add(payments.Order{ID: "ord-may", Created: now.AddDate(0, 0, -20), Currency: "EUR", Amount: 5, Status: "refunded"})
	h.payments.orders.add(payments.Order{ID: "ord-jan", Created: now.AddDate(0, -5, 0), Currency: "EUR", Amount: 5, Status: "chargeback"})
	h.as(staff)
	wantFieldError(t, h.exec(ordersQuery, map[string]any{"s": "2025-03-02", "e": "2025-03-01"}), "end")
	wantFieldError(t, h.exec(ordersQuery, map[string]any{"s": "2024-01-01", "e": "2025-03-01"}), "start")
	refused(t, h.exec(ordersQuery, map[string]any{"s": "yesterday"}), "BAD_USER_INPUT", "")
	refused(t, h.exec(ordersQuery, map[string]any{"s": "2024-13-45"}), "BAD_USER_INPUT", "")
	h.noUpstreamCall(t, 0, "refused order ranges")

	var got struct {
		Orders []struct {
			UpstreamID, Status string
			Contact            *struct{ Name string }
		}
	}
	h.exec(ordersQuery, nil).decode(t, &got)
	if len(got.Orders) != 1 || got.Orders[0].UpstreamID != "ord-may" || got.Orders[0].Status != "REFUNDED" {
		t.Fatalf("the default window: %+v, want May's order only", got.Orders)
	}
	h.exec(ordersQuery, map[string]any{"s": "2025-01-01", "e": "2025-01-31"}).decode(t, &got)
	if len(got.Orders) != 1 || got.Orders[0].Status != "UNKNOWN" {
		t.Fatalf("an order of a status the gateway does not know: %+v, want UNKNOWN", got.Orders)
	}
}

// order(id) finds an order of the last 90 days by its global or raw id;
// an older one, or none, is null; another type's id is NOT_FOUND without
// an upstream call. An order's contact and amount come from what the
// upstream holds: inline contact data, the items' total when it names no
// amount.
func TestOrderByID(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	items := payments.Items{List: []payments.Item{{Name: "a", Amount: 150, Quantity: 2}, {Amount: 20}}}
	h.payments.orders.add(payments.Order{ID: "ord-1", Created: time.Now().UTC().Add(-time.Hour), Currency: "EUR", Items: deferred(items),
		Customer: payments.OrderCustomer{Contact: &payments.Contact{Name: "Walk-in"}}})
	h.payments.orders.add(payments.Order{ID: "ord-old", Created: time.Now().UTC().AddDate(0, 0, -100), Currency: "EUR", Amount: 5})
	var bad payments.Order
	if err := json.Unmarshal([]byte(`{"id":"ord-bad","created":"`+time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)+`","currency":"EUR","items":"?","payment":7}`), &bad); err != nil {
		t.Fatal(err)
	}
	h.payments.orders.add(bad)
	h.as(staff)
	query := `query($id: ID!) { order(id: $id) { upstreamId amount { amount } contact { name } customer { upstreamId } } }`
	type answer struct {
		Order *struct {
			UpstreamID string
			Amount     struct{ Amount int64 }
			Contact    *struct{ Name string }
			Customer   *struct{ UpstreamID string }
		}
	}
	for _, id := range []string{globalOrder("ord-1"), "ord-1"} {
		var got answer
		h.exec(query, map[string]any{"id": id}).decode(t, &got)
		if got.Order == nil || got.Order.Amount.Amount != 320 || got.Order.Contact.Name != "Walk-in" || got.Order.Customer != nil {
			t.Fatalf("order %s: %+v, want 320 from its items, its inline contact and no customer", id, got.Order)
		}
	}
	for _, id := range []string{globalOrder("ord-old"), "ord-none"} {
		var got answer
		h.exec(query, map[string]any{"id": id}).decode(t, &got)
		if got.Order != nil {
			t.Fatalf("order %s: %+v, want null", id, got.Order)
		}
	}
	calls := h.payments.total()
	refused(t, h.exec(query, map[string]any{"id": globalCustomer(demoCustomer)}), "NOT_FOUND", "")
	if h.payments.total() != calls {
		t.Fatal("an id of another type was looked up")
	}

	// Items and payment that cannot be read fail their own fields.
	resp := h.exec(`query($id: ID!) { order(id: $id) { upstreamId items { total } } }`, map[string]any{"id": "ord-bad"})
	if e := refused(t, resp, "INTERNAL", ""); e.Path[len(e.Path)-1] != "items" {
		t.Fatalf("unreadable items: %+v", e)
	}
	resp = h.exec(`query($id: ID!) { order(id: $id) { upstreamId payment { type } } }`, map[string]any{"id": "ord-bad"})
	if e := refused(t, resp, "INTERNAL", ""); e.Path[len(e.Path)-1] != "payment" {
		t.Fatalf("unreadable payment: %+v", e)
	}
}
