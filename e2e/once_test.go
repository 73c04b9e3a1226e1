package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fingraph/fingraph/app"
)

// Every money movement at most once, for every mutation and every
// principal: a retry after a lost answer never answers another principal's
// record (nor one made without a key), never moves money twice, and tells
// the truth of an order whose change was lost instead of "try again".

const routeOrderChange = "PATCH /payments/v1/order"

// dropper closes the connection of the next n requests of a route before
// the upstream sees them.
type dropper struct {
	route string
	n     atomic.Int32
}

func (d *dropper) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method+" "+r.URL.Path == d.route && d.n.Add(-1) >= 0 {
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					_ = conn.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		}
		next.ServeHTTP(w, r)
	})
}

// retryWhile sends call until it answers anything but the codes (the
// attempt settles within the test's short settle window).
func retryWhile(t *testing.T, codes []string, call func() gqlResponse) gqlResponse {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; {
		r := call()
		if !slices.Contains(codes, r.code()) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("still OUTCOME_UNKNOWN: %+v", r.Errors)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestARetryNeverAnswersAnotherPrincipalsConversion: Anna's conversion is
// dropped before the bank (OUTCOME_UNKNOWN). The same conversion, from the
// same wallet, is then made by Dace with her own key, or without a key in
// Anna's other session. Anna's retry must never answer that conversion as
// hers: two intents, two conversions, each answered its own.
func TestARetryNeverAnswersAnotherPrincipalsConversion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		other func(g *testGateway) *testGateway
		key   bool
	}{
		{"Dace with her own key", func(g *testGateway) *testGateway { return g.as(g.signInPerson(t, "dace@demo.test")) }, true},
		{"Anna's other session without a key", func(g *testGateway) *testGateway { return g.as(g.signInPerson(t, "anna@demo.test")) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := &dropper{route: routeConvert}
			g := startGatewayWith(t, func(c *app.Config) {
				sandboxBehind(d.wrap)(c)
				c.OutcomeSettle = 100 * time.Millisecond
			})
			anna := g.as(g.signInPerson(t, "anna@demo.test"))
			other := tc.other(g)
			usd0, _ := anna.balance(t, demoCorpID, demoUSDWalletID)
			annaIn := map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 2000, "currency": "GBP", "idempotencyKey": uniq("anna-")}

			d.n.Store(1)
			if _, r := anna.convert(t, annaIn); r.code() != "OUTCOME_UNKNOWN" {
				t.Fatalf("Anna's dropped conversion: %s %+v", r.Data, r.Errors)
			}
			otherIn := map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 2000, "currency": "GBP"}
			if tc.key {
				otherIn["idempotencyKey"] = uniq("dace-")
			}
			var theirs conversionResult
			// Anna's attempt of unknown outcome holds same-shaped conversions
			// of the wallet until it has settled: RATE_LIMITED, nothing sent.
			r := retryWhile(t, []string{"RATE_LIMITED"}, func() gqlResponse {
				var r gqlResponse
				theirs, r = other.convert(t, otherIn)
				return r
			})
			if len(r.Errors) > 0 || theirs.ID == "" {
				t.Fatalf("the other conversion: %s %+v", r.Data, r.Errors)
			}
			var mine conversionResult
			r = retryWhile(t, []string{"OUTCOME_UNKNOWN"}, func() gqlResponse {
				var r gqlResponse
				mine, r = anna.convert(t, annaIn)
				return r
			})
			if len(r.Errors) > 0 || mine.ID == "" {
				t.Fatalf("Anna's retry: %s %+v", r.Data, r.Errors)
			}
			if mine.ID == theirs.ID {
				t.Fatalf("Anna's retry answered the other conversion %s as hers: two intents, one conversion", theirs.ID)
			}
			if usd, _ := anna.balance(t, demoCorpID, demoUSDWalletID); usd0-usd != 2*cost20GBP {
				t.Errorf("USD moved %d for two intents, want %d (two conversions)", usd0-usd, 2*cost20GBP)
			}
			if again, _ := anna.convert(t, annaIn); again.ID != mine.ID {
				t.Errorf("Anna's key answered %s, then %s", mine.ID, again.ID)
			}
		})
	}
}

// capturedOrder places an order of amount on a fresh customer's card,
// captured when capture is set, as the demo API client, and returns its id
// and the customer's.
func capturedOrder(t *testing.T, api *testGateway, amount int, capture bool) (id, customerID string) {
	t.Helper()
	customerID, methods := createCustomer(t, api, uniq("tok_ok_"))
	o := createOrder(t, api, map[string]any{"currency": "EUR", "customerId": customerID, "autoCharge": capture,
		"items": map[string]any{"amount": amount}, "payment": map[string]any{"savedCard": map[string]any{"methodToken": methods[0]}}})
	if o.ID == "" {
		t.Fatalf("order: %+v", o)
	}
	return o.ID, customerID
}

const changeWithKey = `mutation($input: %s!) { %sOrder(input: $input) ` + changeFields + ` }`

type orderChange struct {
	OrderID string `json:"orderId"`
	Applied string `json:"applied"`
	Order   *struct {
		Status         string `json:"status"`
		CapturedAmount struct {
			Amount any `json:"amount"`
		} `json:"capturedAmount"`
		RefundedAmount struct {
			Amount any `json:"amount"`
		} `json:"refundedAmount"`
	} `json:"order"`
}

func changeKeyed(t *testing.T, g *testGateway, op string, input map[string]any) (orderChange, gqlResponse) {
	t.Helper()
	typ := map[string]string{"capture": "CaptureOrderInput", "refund": "RefundOrderInput", "cancel": "CancelOrderInput"}[op]
	r := g.query(t, fmt.Sprintf(changeWithKey, typ, op), map[string]any{"input": input})
	var d map[string]orderChange
	if len(r.Data) > 0 && string(r.Data) != "null" {
		r.decode(t, &d)
	}
	return d[op+"Order"], r
}

// TestLostRefundRetriedTwiceRefundsOnce: a refund of 1,000 whose answer is
// lost after the upstream refunded is OUTCOME_UNKNOWN, never "unavailable,
// try again"; two retries under its key answer the refund, and the order
// is refunded 1,000, once.
func TestLostRefundRetriedTwiceRefundsOnce(t *testing.T) {
	t.Parallel()
	l := newLossy()
	g := startGatewayWith(t, sandboxBehind(l.wrap))
	api := g.as(g.signInAPI(t))
	id, customerID := capturedOrder(t, api, 5000, true)
	in := map[string]any{"orderId": id, "amount": 1000, "idempotencyKey": uniq("refund-")}

	l.lose(routeOrderChange, 1)
	if _, r := changeKeyed(t, api, "refund", in); r.code() != "OUTCOME_UNKNOWN" {
		t.Fatalf("the refund's answer was lost: want OUTCOME_UNKNOWN, got %s %+v", r.Data, r.Errors)
	}
	for i := range 2 {
		c, r := changeKeyed(t, api, "refund", in)
		if len(r.Errors) > 0 || c.Applied != "refund" {
			t.Fatalf("retry %d: %s %+v", i, r.Data, r.Errors)
		}
		if c.Order == nil || num(c.Order.RefundedAmount.Amount) != 1000 {
			t.Errorf("retry %d answered the order %+v, want refunded 1000", i, c.Order)
		}
	}
	if n := g.stats(t).Routes[routeOrderChange]; n != 1 {
		t.Errorf("%d order changes sent upstream for one refund key, want 1", n)
	}
	up := upstreamOrders(t, g.SandboxURL, rawID(customerID))
	if len(up) != 1 || num(up[0]["refunded_amount"]) != 1000 {
		t.Errorf("upstream orders %v, want one refunded 1000", up)
	}
}

// TestLostCaptureAnswersTheCapturedOrder: a capture whose answer is lost
// after the upstream captured is OUTCOME_UNKNOWN, not UPSTREAM_UNAVAILABLE;
// its retry under the key answers the captured order (the upstream would
// refuse a second capture, and the client would never learn the truth).
func TestLostCaptureAnswersTheCapturedOrder(t *testing.T) {
	t.Parallel()
	l := newLossy()
	g := startGatewayWith(t, sandboxBehind(l.wrap))
	api := g.as(g.signInAPI(t))
	id, _ := capturedOrder(t, api, 3000, false)
	in := map[string]any{"orderId": id, "idempotencyKey": uniq("capture-")}

	l.lose(routeOrderChange, 1)
	if _, r := changeKeyed(t, api, "capture", in); r.code() != "OUTCOME_UNKNOWN" {
		t.Fatalf("the capture's answer was lost: want OUTCOME_UNKNOWN, got %s %+v", r.Data, r.Errors)
	}
	c, r := changeKeyed(t, api, "capture", in)
	if len(r.Errors) > 0 || c.Applied != "capture" {
		t.Fatalf("the retry: %s %+v", r.Data, r.Errors)
	}
	if c.Order == nil || c.Order.Status != "CAPTURED" || num(c.Order.CapturedAmount.Amount) != 3000 {
		t.Errorf("the retry answered %+v, want the order captured 3000", c.Order)
	}
	if n := g.stats(t).Routes[routeOrderChange]; n != 1 {
		t.Errorf("%d order changes sent upstream for one capture key, want 1", n)
	}

	// Without a key the gateway cannot find out, but it still never says
	// "unavailable, try again" of a capture that may have happened.
	other, _ := capturedOrder(t, api, 3000, false)
	l.lose(routeOrderChange, 1)
	r = changeOrder(api, t, "capture", other, nil)
	if r.code() != "OUTCOME_UNKNOWN" || len(r.Errors) == 0 || r.Errors[0].Extensions["retryable"] != false {
		t.Errorf("a lost capture without a key: want OUTCOME_UNKNOWN, not retryable; got %+v", r.Errors)
	}
}

// TestAnotherCorporationsAPIKeyDoesNotOperatePayments: payments belong to
// the merchant. An API key staff created for Second Ventures lists none of
// the merchant's customers and refunds none of its orders by default.
func TestAnotherCorporationsAPIKeyDoesNotOperatePayments(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	api := g.as(g.signInAPI(t))
	id, _ := capturedOrder(t, api, 2000, true)
	staff := g.signInStaff(t)
	var k struct {
		CreateAPIKey struct {
			PrivateKey string `json:"privateKey"`
		} `json:"createApiKey"`
	}
	g.queryAs(t, staff, `mutation { createApiKey(input: {corporationId: "`+secondCorpID+`", name: "second"}) { privateKey } }`, nil).decode(t, &k)
	var s struct {
		SignIn signInResult `json:"signIn"`
	}
	g.queryAs(t, "", signInMutation, map[string]any{"input": map[string]any{"kind": "API_KEY", "apiKey": k.CreateAPIKey.PrivateKey}}).decode(t, &s)
	if s.SignIn.SessionToken == "" {
		t.Fatalf("sign-in with Second Ventures' key: %+v", s)
	}
	second := g.as(s.SignIn.SessionToken)
	r := second.query(t, `{ customers { id contact { email } } }`, nil)
	if r.code() != "FORBIDDEN" {
		t.Errorf("another corporation's API key listed customers: %s %+v", r.Data, r.Errors)
	}
	if r := changeOrder(second, t, "refund", id, nil); r.code() != "FORBIDDEN" {
		t.Errorf("another corporation's API key refunded the merchant's order: %s %+v", r.Data, r.Errors)
	}
}

// posts counts the upstream's POST requests so far.
func posts(t *testing.T, g *testGateway) int {
	t.Helper()
	n := 0
	for route, c := range g.stats(t).Routes {
		if strings.HasPrefix(route, "POST ") {
			n += c
		}
	}
	return n
}

// firstID finds the first "id" (or a payment method's "token") in a
// GraphQL answer.
func firstID(v any) string {
	switch x := v.(type) {
	case map[string]any:
		if id, ok := x["id"].(string); ok {
			return id
		}
		if tok, ok := x["token"].(string); ok {
			return tok
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if id := firstID(x[k]); id != "" {
				return id
			}
		}
	case []any:
		for _, e := range x {
			if id := firstID(e); id != "" {
				return id
			}
		}
	}
	return ""
}

// TestEveryRecordMutationReplaysItsKey: each mutation that creates an
// upstream record takes an idempotencyKey; the same key and input a second
// time answers the same record and sends nothing upstream.
func TestEveryRecordMutationReplaysItsKey(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	api := g.as(g.signInAPI(t))
	staff := g.as(g.signInStaff(t))
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	customerID, _ := createCustomer(t, api, uniq("tok_ok_"))
	cases := []struct {
		name  string
		as    *testGateway
		query string
		input map[string]any
	}{
		{"createCustomer", api, `mutation($input: CreateCustomerInput!) { createCustomer(input: $input) { customer { id paymentMethods { token } } } }`,
			map[string]any{"number": uniq("c-"), "contact": map[string]any{"name": "Keyed Customer", "email": "x@example.com"}, "cardTokens": []string{uniq("tok_ok_")}}},
		{"addPaymentMethod", api, `mutation($input: AddPaymentMethodInput!) { addPaymentMethod(input: $input) { paymentMethod { token } orders { token } } }`,
			map[string]any{"customerId": customerID, "cardToken": uniq("tok_ok_")}},
		{"createWallet", staff, `mutation($input: CreateWalletInput!) { createWallet(input: $input) { wallets { id } } }`,
			map[string]any{"corporationId": demoCorpID, "adapter": "ADAPTER_B", "name": "Keyed B"}},
		{"createWalletRequisites", api, `mutation($input: CreateWalletRequisitesInput!) { createWalletRequisites(input: $input) { id } }`,
			map[string]any{"corporationId": demoCorpID, "adapter": "ADAPTER_A"}},
		{"issueCard", anna, issueCardMutation, issueInput()},
		{"createPerson", anna, `mutation($input: CreatePersonInput!) { createPerson(input: $input) { id } }`,
			map[string]any{"firstName": "Keyed", "lastName": "Person", "gender": "MALE", "isUbo": true}},
		{"signUpCorporation", g, `mutation($input: SignUpCorporationInput!) { signUpCorporation(input: $input) { id } }`,
			map[string]any{"companyName": "Keyed SIA", "email": uniq("keyed") + "@keyed.test", "firstName": "Liga", "lastName": "Egle",
				"phone": "+37120001111", "country": "LV", "captcha": "sandbox-captcha-ok"}},
	}
	for _, tc := range cases {
		tc.input["idempotencyKey"] = uniq("rec-")
		var ids []string
		for i := range 2 {
			before := posts(t, g)
			r := tc.as.query(t, tc.query, map[string]any{"input": tc.input})
			var d any
			_ = json.Unmarshal(r.Data, &d)
			if len(r.Errors) > 0 || firstID(d) == "" {
				t.Errorf("%s call %d: %s %+v", tc.name, i, r.Data, r.Errors)
				continue
			}
			ids = append(ids, firstID(d))
			if sent := posts(t, g) - before; i == 1 && sent != 0 {
				t.Errorf("%s: the retry with the same key sent %d requests upstream", tc.name, sent)
			}
		}
		if len(ids) == 2 && ids[0] != ids[1] {
			t.Errorf("%s: one key answered %s, then %s", tc.name, ids[0], ids[1])
		}
	}

	// uploadKycDocument: the same upload under one key is one document.
	kycIn := map[string]any{"input": map[string]any{"file": nil, "idempotencyKey": uniq("kyc-")}}
	pdf := []byte("%PDF-1.7\n%%EOF\n")
	n0, _ := g.kycStore(t)
	var docs []string
	for i := range 2 {
		r, _ := anna.upload(t, nil, uploadMutation, kycIn, "variables.input.file", "keyed.pdf", pdf)
		var d any
		_ = json.Unmarshal(r.Data, &d)
		if len(r.Errors) > 0 || firstID(d) == "" {
			t.Fatalf("uploadKycDocument call %d: %s %+v", i, r.Data, r.Errors)
		}
		docs = append(docs, firstID(d))
	}
	if n, _ := g.kycStore(t); docs[0] != docs[1] || n != n0+1 {
		t.Errorf("uploadKycDocument under one key: answered %v, %d documents stored, want one", docs, n-n0)
	}

	// createApiKey shows its secret once: a replay names the key instead.
	in := map[string]any{"corporationId": demoCorpID, "name": "keyed", "idempotencyKey": uniq("rec-")}
	const q = `mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { id privateKey } }`
	if r := staff.query(t, q, map[string]any{"input": in}); len(r.Errors) > 0 {
		t.Fatalf("createApiKey: %+v", r.Errors)
	}
	before := posts(t, g)
	if r := staff.query(t, q, map[string]any{"input": in}); r.code() != "BAD_USER_INPUT" {
		t.Errorf("createApiKey replayed: %s %+v", r.Data, r.Errors)
	}
	if posts(t, g) != before {
		t.Error("a replayed createApiKey made another key")
	}
}

// TestLostRecordAnswerNeverMakesASecond: a wallet whose answer is lost
// under a key is OUTCOME_UNKNOWN, and so is every retry with the key (the
// upstream keeps no reference to find it by): never a second wallet.
func TestLostRecordAnswerNeverMakesASecond(t *testing.T) {
	t.Parallel()
	l := newLossy()
	g := startGatewayWith(t, sandboxBehind(l.wrap))
	staff := g.as(g.signInStaff(t))
	const route = "POST /banking/v2/corporations/" + demoCorpID + "/wallets"
	in := map[string]any{"corporationId": demoCorpID, "adapter": "ADAPTER_B", "name": "Lost B", "idempotencyKey": uniq("wallet-")}
	l.lose(route, 1)
	for i := range 3 {
		r := staff.query(t, `mutation($input: CreateWalletInput!) { createWallet(input: $input) { wallets { id } } }`, map[string]any{"input": in})
		if r.code() != "OUTCOME_UNKNOWN" {
			t.Errorf("call %d: want OUTCOME_UNKNOWN, got %s %+v", i, r.Data, r.Errors)
		}
	}
	if n := g.stats(t).Routes["POST /banking/v2/corporations/{id}/wallets"]; n != 1 {
		t.Errorf("%d wallet creations upstream for one key, want 1", n)
	}
}
