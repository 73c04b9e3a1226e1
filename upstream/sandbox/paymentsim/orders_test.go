package paymentsim_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

func TestKeyKinds(t *testing.T) {
	e := newEnv(t, true)
	var first customerJSON
	{
		var list []customerJSON
		e.call("GET", "/payments/v1/customer", paymentsim.PrivateKey, nil).json(t, &list)
		require.Len(t, list, 6)
		first = list[0]
	}
	pk, sk, ck, at := paymentsim.PublicKey, paymentsim.PrivateKey, paymentsim.DemoCustomerKey, paymentsim.AccessToken
	newCust := func(n string) map[string]any {
		return map[string]any{"number": n, "contact": map[string]any{"name": "K", "email": "k@example.com"}, "method": []any{}}
	}
	cases := []struct {
		name, method, path, key string
		body                    any
		want                    int
	}{
		{"no key", "GET", "/payments/v1/customer", "", nil, 401},
		{"unknown key", "GET", "/payments/v1/customer", "sk_nope", nil, 401},
		{"create customer public", "POST", "/payments/v1/customer", pk, newCust("K-1"), 201},
		{"create customer private", "POST", "/payments/v1/customer", sk, newCust("K-2"), 201},
		{"create customer customer key", "POST", "/payments/v1/customer", ck, newCust("K-3"), 403},
		{"create customer access token", "POST", "/payments/v1/customer", at, newCust("K-4"), 403},
		{"list customers private", "GET", "/payments/v1/customer", sk, nil, 200},
		{"list customers public", "GET", "/payments/v1/customer", pk, nil, 403},
		{"list customers customer", "GET", "/payments/v1/customer", ck, nil, 403},
		{"read customer private", "GET", "/payments/v1/customer/" + first.ID, sk, nil, 200},
		{"read customer public", "GET", "/payments/v1/customer/" + first.ID, pk, nil, 403},
		{"read me customer", "GET", "/payments/v1/customer/me", ck, nil, 200},
		{"customer key by id", "GET", "/payments/v1/customer/" + first.ID, ck, nil, 403},
		{"private key me", "GET", "/payments/v1/customer/me", sk, nil, 404},
		{"contact customer me", "PUT", "/payments/v1/customer/me/contact", ck, map[string]any{"name": "A", "email": "a@example.com"}, 200},
		{"contact public", "PUT", "/payments/v1/customer/" + first.ID + "/contact", pk, map[string]any{"name": "A", "email": "a@example.com"}, 403},
		{"method public", "POST", "/payments/v1/customer/" + first.ID + "/method", pk, methodCreatable("tok_ok_kk1"), 201},
		{"method customer key", "POST", "/payments/v1/customer/" + first.ID + "/method", ck, methodCreatable("tok_ok_kk2"), 403},
		{"order public", "POST", "/payments/v1/order", pk, map[string]any{"items": 100, "currency": "EUR", "payment": cardPayment("tok_ok_kk3")}, 403},
		{"order customer key", "POST", "/payments/v1/order", ck, map[string]any{"items": 100, "currency": "EUR", "payment": cardPayment("tok_ok_kk4")}, 201},
		{"patch order customer key", "PATCH", "/payments/v1/order", ck, []any{}, 403},
		{"patch order private", "PATCH", "/payments/v1/order", sk, []any{}, 200},
		{"list orders customer", "GET", "/payments/v1/order", ck, nil, 200},
		{"list orders public", "GET", "/payments/v1/order", pk, nil, 403},
		{"webhooks private", "GET", "/payments/v1/webhooks", sk, nil, 403},
		{"webhooks access", "GET", "/payments/v1/webhooks", at, nil, 200},
		{"events private", "GET", "/payments/v1/events", sk, nil, 403},
		{"events access", "GET", "/payments/v1/events", at, nil, 200},
		{"pending actions private", "GET", "/payments/v3/pending_actions?individual_id=x", sk, nil, 403},
		{"individuals customer", "GET", "/payments/v3/individuals", ck, nil, 403},
		{"onboard public", "POST", "/payments/individuals/x/onboard", pk, nil, 403},
		{"onboard private unknown", "POST", "/payments/individuals/x/onboard", sk, nil, 404},
		{"jwks without key", "GET", "/payments/.well-known/jwks.json", "", nil, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.call(c.method, c.path, c.key, c.body)
			require.Equal(t, c.want, r.status, "%s", r.body)
			if c.want == 401 {
				assert.Equal(t, "unauthorized", r.err(t).Error.Code)
			}
			if c.want == 403 {
				assert.Equal(t, "forbidden_key", r.err(t).Error.Code)
			}
		})
	}

	t.Run("Authentication header spelling", func(t *testing.T) {
		r := e.callH("GET", "/payments/v1/customer", "", nil, map[string]string{"Authentication": "Bearer " + sk})
		assert.Equal(t, 200, r.status)
	})
	t.Run("control hands out customer keys", func(t *testing.T) {
		var list []customerJSON
		e.call("GET", "/payments/v1/customer", sk, nil).json(t, &list)
		var k struct{ Key string }
		r := e.call("POST", "/_sandbox/customers/"+list[1].ID+"/key", "", nil)
		require.Equal(t, 200, r.status)
		r.json(t, &k)
		require.True(t, strings.HasPrefix(k.Key, "ck_"))
		var me customerJSON
		e.call("GET", "/payments/v1/customer/me", k.Key, nil).json(t, &me)
		assert.Equal(t, list[1].ID, me.ID)
		r = e.call("POST", "/_sandbox/customers/"+list[0].ID+"/key", "", nil)
		r.json(t, &k)
		assert.Equal(t, paymentsim.DemoCustomerKey, k.Key)
	})
}

func TestCreateCustomer(t *testing.T) {
	e := newEnv(t, false)
	contact := map[string]any{"type": "person", "name": "Eva Berg", "email": "eva@example.com",
		"address": map[string]any{"street": "Storgatan 1", "zip_code": "11122", "city": "Stockholm", "country_code": "SE"}}
	r := e.call("POST", "/payments/v1/customer", paymentsim.PublicKey, map[string]any{
		"number": "N-1", "contact": contact,
		"method": []any{methodCreatable("tok_ok_a"), methodCreatable("tok_ok_b")},
		"order":  map[string]any{"items": map[string]any{"name": "Mug", "amount": 1200, "quantity": 2}, "currency": "SEK"},
	})
	require.Equal(t, 201, r.status, "%s", r.body)
	var c customerJSON
	r.json(t, &c)
	assert.Equal(t, "N-1", c.Number)
	assert.Equal(t, "active", c.Status)
	assert.Equal(t, int64(0), c.Total)
	assert.Empty(t, c.Balance)
	assert.Equal(t, "SEK", c.Currency)
	assert.JSONEq(t, mustJSON(t, contact), string(c.Contact))
	require.Len(t, c.Method, 2)
	for _, m := range c.Method {
		assert.Equal(t, methodJSON{Type: "card", Scheme: "visa", IIN: "424242", Last4: "4242", Expires: [2]int{12, 30},
			Acquirer: "sandbox-acquirer", Created: m.Created, Token: m.Token}, m)
		assert.True(t, strings.HasPrefix(m.Token, "pm_"))
		_, err := time.Parse(time.RFC3339, m.Created)
		assert.NoError(t, err)
		assert.Regexp(t, `\.\d{3}Z$`, m.Created)
	}
	var tok string
	require.NoError(t, json.Unmarshal(c.Order, &tok), "a single order gives one token string: %s", c.Order)
	assert.Equal(t, 3, len(strings.Split(tok, ".")))

	// An array of orders gives an array of tokens; no methods means EUR.
	r = e.call("POST", "/payments/v1/customer", paymentsim.PrivateKey, map[string]any{
		"number": "N-2", "contact": map[string]any{"name": "X", "email": "x@example.com"},
		"method": []any{methodCreatable("tok_ok_c")},
		"order":  []any{map[string]any{"items": 500, "currency": "EUR"}, map[string]any{"items": []any{map[string]any{"name": "a", "amount": 1}}, "currency": "EUR", "charge": "auto"}},
	})
	require.Equal(t, 201, r.status, "%s", r.body)
	r.json(t, &c)
	var toks []string
	require.NoError(t, json.Unmarshal(c.Order, &toks))
	assert.Len(t, toks, 2)
	var orders []orderJSON
	e.call("GET", "/payments/v1/order", paymentsim.PrivateKey, nil).json(t, &orders)
	require.Len(t, orders, 3)
	assert.Equal(t, c.ID, strings.Trim(string(orders[2].Customer), `"`))
	assert.Equal(t, "captured", orders[2].Status)
	assert.Equal(t, c.Method[0].Token, orders[2].Payment["token"], "embedded orders are charged to the first new method")

	c = e.newCustomer("N-3", "")
	assert.Equal(t, "EUR", c.Currency)
	assert.Empty(t, c.Method)

	bad := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"malformed", `{"number":`, 400, "invalid_request", ""},
		{"missing number", map[string]any{"contact": contact, "method": []any{}}, 400, "invalid_request", "number"},
		{"number taken", map[string]any{"number": "N-1", "contact": contact, "method": []any{}}, 409, "customer_number_taken", "number"},
		{"missing contact", map[string]any{"number": "Z", "method": []any{}}, 400, "invalid_request", "contact"},
		{"bad email", map[string]any{"number": "Z", "contact": map[string]any{"name": "a", "email": "nope"}, "method": []any{}}, 400, "invalid_request", "contact.email"},
		{"email type", map[string]any{"number": "Z", "contact": map[string]any{"name": "a", "email": 5}, "method": []any{}}, 400, "invalid_request", "contact.email"},
		{"no name", map[string]any{"number": "Z", "contact": map[string]any{"email": "a@b.c"}, "method": []any{}}, 400, "invalid_request", "contact.name"},
		{"bad country", map[string]any{"number": "Z", "contact": map[string]any{"name": "a", "email": "a@b.c", "address": map[string]any{"country_code": "swe"}}, "method": []any{}}, 400, "invalid_request", "contact.address.country_code"},
		{"missing method", map[string]any{"number": "Z", "contact": contact}, 400, "invalid_request", "method"},
		{"bad card token", map[string]any{"number": "Z", "contact": contact, "method": []any{methodCreatable("4242424242424242")}}, 400, "invalid_request", "method[0].card"},
		{"method type", map[string]any{"number": "Z", "contact": contact, "method": []any{map[string]any{"type": "card", "card": "tok_ok_z", "client": browser}}}, 400, "invalid_request", "method[0].type"},
		{"used token", map[string]any{"number": "Z", "contact": contact, "method": []any{methodCreatable("tok_ok_a")}}, 409, "card_token_used", "method[0].card"},
		{"declined method", map[string]any{"number": "Z", "contact": contact, "method": []any{methodCreatable("tok_fail_z")}}, 402, "card_declined", "method[0].card"},
		{"order with payment", map[string]any{"number": "Z", "contact": contact, "method": []any{methodCreatable("tok_ok_z")}, "order": map[string]any{"items": 1, "currency": "EUR", "payment": cardPayment("tok_ok_y")}}, 400, "invalid_request", "order.payment"},
		{"order with customer", map[string]any{"number": "Z", "contact": contact, "method": []any{methodCreatable("tok_ok_z")}, "order": []any{map[string]any{"items": 1, "currency": "EUR", "customer": "x"}}}, 400, "invalid_request", "order[0].customer"},
		{"order without method", map[string]any{"number": "Z", "contact": contact, "method": []any{}, "order": map[string]any{"items": 1, "currency": "EUR"}}, 400, "invalid_request", "method"},
		{"order bad currency", map[string]any{"number": "Z", "contact": contact, "method": []any{methodCreatable("tok_ok_z")}, "order": map[string]any{"items": 1, "currency": "eur"}}, 400, "invalid_request", "order.currency"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			r := e.call("POST", "/payments/v1/customer", paymentsim.PublicKey, b.body)
			require.Equal(t, b.status, r.status, "%s", r.body)
			eb := r.err(t)
			assert.Equal(t, b.code, eb.Error.Code)
			assert.Equal(t, b.field, eb.Error.Field)
		})
	}
	// Nothing of the refused requests was stored, and tok_ok_z is still fresh.
	var list []customerJSON
	e.call("GET", "/payments/v1/customer", paymentsim.PrivateKey, nil).json(t, &list)
	assert.Len(t, list, 3)
	e.newCustomer("N-4", "tok_ok_z")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestPaymentShapes(t *testing.T) {
	e := newEnv(t, false)
	c := e.newCustomer("P-1", "tok_ok_p1")
	empty := e.newCustomer("P-2", "")
	other := e.newCustomer("P-3", "tok_ok_p3")
	pm := c.Method[0].Token

	t.Run("one-time card with contact", func(t *testing.T) {
		contact := map[string]any{"name": "Walk In", "email": "walk@example.com"}
		r, o := e.order(map[string]any{"number": "O-1", "items": []any{map[string]any{"name": "Tea", "amount": 300, "quantity": 3}, map[string]any{"name": "Cake", "amount": 450}},
			"currency": "EUR", "customer": contact, "payment": cardPayment("tok_ok_one")})
		require.Equal(t, 201, r.status, "%s", r.body)
		assert.Equal(t, int64(1350), o.Amount)
		assert.Equal(t, "authorized", o.Status)
		assert.JSONEq(t, mustJSON(t, contact), string(o.Customer))
		assert.JSONEq(t, `[{"name":"Tea","amount":300,"quantity":3},{"name":"Cake","amount":450}]`, string(o.Items))
		assert.Equal(t, map[string]any{"type": "card", "scheme": "visa", "iin": "424242", "last4": "4242", "expires": []any{12.0, 30.0}, "acquirer": "sandbox-acquirer"}, o.Payment)
		assert.NotContains(t, string(r.body), "tok_ok_one")
	})
	t.Run("one-time card for a customer, charge auto", func(t *testing.T) {
		r, o := e.order(map[string]any{"items": 999, "currency": "EUR", "charge": "auto", "customer": c.ID, "payment": cardPayment("tok_ok_two")})
		require.Equal(t, 201, r.status, "%s", r.body)
		assert.Equal(t, `"`+c.ID+`"`, string(o.Customer))
		assert.Equal(t, "captured", o.Status)
		assert.Equal(t, int64(999), o.CapturedAmount)
	})
	t.Run("saved card", func(t *testing.T) {
		for _, init := range []string{"cardholder", "merchant"} {
			r, o := e.order(map[string]any{"items": 100, "currency": "EUR", "customer": c.ID,
				"payment": map[string]any{"type": "card", "card": pm, "subsequent": map[string]any{"reference": "sub-1", "initiator": init}}})
			require.Equal(t, 201, r.status, "%s", r.body)
			assert.Equal(t, pm, o.Payment["token"])
		}
	})
	t.Run("customer payment", func(t *testing.T) {
		r, o := e.order(map[string]any{"items": map[string]any{"name": "Box", "amount": 700}, "currency": "EUR", "customer": c.ID,
			"payment": map[string]any{"type": "customer", "initiator": "cardholder"}})
		require.Equal(t, 201, r.status, "%s", r.body)
		assert.Equal(t, pm, o.Payment["token"])
		assert.JSONEq(t, `{"name":"Box","amount":700}`, string(o.Items))
	})
	t.Run("customer payment without methods declines with an order id", func(t *testing.T) {
		r, _ := e.order(map[string]any{"items": 100, "currency": "EUR", "customer": empty.ID, "payment": map[string]any{"type": "customer", "initiator": "merchant"}})
		require.Equal(t, 402, r.status)
		eb := r.err(t)
		assert.Equal(t, "card_declined", eb.Error.Code)
		assert.NotEmpty(t, eb.Error.OrderID)
	})
	t.Run("customer key orders for itself", func(t *testing.T) {
		var k struct{ Key string }
		e.call("POST", "/_sandbox/customers/"+c.ID+"/key", "", nil).json(t, &k)
		r := e.call("POST", "/payments/v1/order", k.Key, map[string]any{"items": 10, "currency": "EUR", "payment": map[string]any{"type": "customer", "initiator": "cardholder"}})
		require.Equal(t, 201, r.status, "%s", r.body)
		var o orderJSON
		r.json(t, &o)
		assert.Equal(t, `"`+c.ID+`"`, string(o.Customer))
		r = e.call("POST", "/payments/v1/order", k.Key, map[string]any{"items": 10, "currency": "EUR", "customer": other.ID, "payment": map[string]any{"type": "customer", "initiator": "cardholder"}})
		assert.Equal(t, 403, r.status)
		var mine []orderJSON
		e.call("GET", "/payments/v1/order", k.Key, nil).json(t, &mine)
		for _, o := range mine {
			assert.Equal(t, `"`+c.ID+`"`, string(o.Customer))
		}
		assert.NotEmpty(t, mine)
	})

	bad := []struct {
		name   string
		body   map[string]any
		status int
		code   string
		field  string
	}{
		{"no payment", map[string]any{"items": 1, "currency": "EUR"}, 400, "invalid_request", "payment"},
		{"no items", map[string]any{"currency": "EUR", "payment": cardPayment("tok_ok_q")}, 400, "invalid_request", "items"},
		{"zero items", map[string]any{"items": 0, "currency": "EUR", "payment": cardPayment("tok_ok_q")}, 400, "invalid_request", "items"},
		{"fraction items", map[string]any{"items": 1.5, "currency": "EUR", "payment": cardPayment("tok_ok_q")}, 400, "invalid_request", "items"},
		{"empty items", map[string]any{"items": []any{}, "currency": "EUR", "payment": cardPayment("tok_ok_q")}, 400, "invalid_request", "items"},
		{"item amount", map[string]any{"items": []any{map[string]any{"name": "a", "amount": -1}}, "currency": "EUR", "payment": cardPayment("tok_ok_q")}, 400, "invalid_request", "items[0].amount"},
		{"item quantity", map[string]any{"items": map[string]any{"name": "a", "amount": 1, "quantity": 0}, "currency": "EUR", "payment": cardPayment("tok_ok_q")}, 400, "invalid_request", "items.quantity"},
		{"no currency", map[string]any{"items": 1, "payment": cardPayment("tok_ok_q")}, 400, "invalid_request", "currency"},
		{"charge manual", map[string]any{"items": 1, "currency": "EUR", "charge": "manual", "payment": cardPayment("tok_ok_q")}, 400, "invalid_request", "charge"},
		{"payment type", map[string]any{"items": 1, "currency": "EUR", "payment": map[string]any{"type": "iban"}}, 400, "invalid_request", "payment.type"},
		{"not a token", map[string]any{"items": 1, "currency": "EUR", "payment": cardPayment("4111111111111111")}, 400, "invalid_request", "payment.card"},
		{"no client", map[string]any{"items": 1, "currency": "EUR", "payment": map[string]any{"type": "card", "card": "tok_ok_q"}}, 400, "invalid_request", "payment.client"},
		{"saved without subsequent", map[string]any{"items": 1, "currency": "EUR", "customer": c.ID, "payment": map[string]any{"type": "card", "card": pm}}, 400, "invalid_request", "payment.subsequent"},
		{"saved bad initiator", map[string]any{"items": 1, "currency": "EUR", "customer": c.ID, "payment": map[string]any{"type": "card", "card": pm, "subsequent": map[string]any{"reference": "r", "initiator": "bank"}}}, 400, "invalid_request", "payment.subsequent.initiator"},
		{"saved without customer", map[string]any{"items": 1, "currency": "EUR", "payment": map[string]any{"type": "card", "card": pm, "subsequent": map[string]any{"reference": "r", "initiator": "merchant"}}}, 400, "invalid_request", "customer"},
		{"saved of another customer", map[string]any{"items": 1, "currency": "EUR", "customer": other.ID, "payment": map[string]any{"type": "card", "card": pm, "subsequent": map[string]any{"reference": "r", "initiator": "merchant"}}}, 400, "unknown_method", "payment.card"},
		{"customer payment without customer", map[string]any{"items": 1, "currency": "EUR", "payment": map[string]any{"type": "customer", "initiator": "cardholder"}}, 400, "invalid_request", "customer"},
		{"customer payment with card", map[string]any{"items": 1, "currency": "EUR", "customer": c.ID, "payment": map[string]any{"type": "customer", "initiator": "cardholder", "card": pm}}, 400, "invalid_request", "payment"},
		{"unknown customer", map[string]any{"items": 1, "currency": "EUR", "customer": "nobody", "payment": cardPayment("tok_ok_q")}, 400, "invalid_request", "customer"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			r, _ := e.order(b.body)
			require.Equal(t, b.status, r.status, "%s", r.body)
			eb := r.err(t)
			assert.Equal(t, b.code, eb.Error.Code)
			assert.Equal(t, b.field, eb.Error.Field)
			assert.Empty(t, eb.Error.OrderID)
		})
	}
}

func TestSingleUseTokens(t *testing.T) {
	e := newEnv(t, false)
	r, _ := e.order(map[string]any{"items": 1, "currency": "EUR", "payment": cardPayment("tok_ok_once")})
	require.Equal(t, 201, r.status)
	r, _ = e.order(map[string]any{"items": 1, "currency": "EUR", "payment": cardPayment("tok_ok_once")})
	require.Equal(t, 409, r.status)
	assert.Equal(t, "card_token_used", r.err(t).Error.Code)

	// A method creation consumes the token too.
	c := e.newCustomer("S-1", "tok_ok_m")
	r = e.call("POST", "/payments/v1/customer/"+c.ID+"/method", paymentsim.PublicKey, methodCreatable("tok_ok_m"))
	assert.Equal(t, 409, r.status)
	r, _ = e.order(map[string]any{"items": 1, "currency": "EUR", "payment": cardPayment("tok_ok_m")})
	assert.Equal(t, 409, r.status)

	// A declined token is not consumed: it declines again rather than 409.
	for range 2 {
		r, _ = e.order(map[string]any{"items": 1, "currency": "EUR", "payment": cardPayment("tok_fail_again")})
		require.Equal(t, 402, r.status)
		assert.Equal(t, "card_declined", r.err(t).Error.Code)
	}
}

func TestThreeDSecureFlow(t *testing.T) {
	e := newEnv(t, false)
	body := map[string]any{"items": 2500, "currency": "EUR", "payment": cardPayment("tok_3ds_x")}
	r, _ := e.order(body)
	require.Equal(t, 402, r.status)
	eb := r.err(t)
	assert.Equal(t, "verification_required", eb.Error.Code)
	assert.Equal(t, "verification required", eb.Error.Message)
	id := eb.Error.OrderID
	require.NotEmpty(t, id)
	assert.Equal(t, e.srv.URL+"/_sandbox/3ds/"+id, eb.Error.VerificationURL)

	// The id is mandatory from now on, but retrying before 3-D Secure gives
	// the same answer with the same id.
	body["id"] = id
	r, _ = e.order(body)
	require.Equal(t, 402, r.status)
	assert.Equal(t, id, r.err(t).Error.OrderID)

	page := e.call("GET", "/_sandbox/3ds/"+id, "", nil)
	assert.Contains(t, string(page.body), "/_sandbox/3ds/"+id+"/complete")
	require.Equal(t, 200, e.call("POST", "/_sandbox/3ds/"+id+"/complete", "", nil).status)
	assert.Equal(t, 404, e.call("POST", "/_sandbox/3ds/unknown/complete", "", nil).status)

	r, o := e.order(body)
	require.Equal(t, 201, r.status, "%s", r.body)
	assert.Equal(t, id, o.ID)

	// The id of an order that succeeded, and an id from elsewhere, are refused.
	r, _ = e.order(map[string]any{"id": id, "items": 1, "currency": "EUR", "payment": cardPayment("tok_ok_n")})
	require.Equal(t, 400, r.status)
	assert.Equal(t, "invalid_order_id", r.err(t).Error.Code)
	r, _ = e.order(map[string]any{"id": "3f1e2a7c-0000-4000-8000-000000000000", "items": 1, "currency": "EUR", "payment": cardPayment("tok_ok_n")})
	require.Equal(t, 400, r.status)
	eb = r.err(t)
	assert.Equal(t, "invalid_order_id", eb.Error.Code)
	assert.Equal(t, "id", eb.Error.Field)
	// The token was consumed by the success.
	r, _ = e.order(map[string]any{"items": 1, "currency": "EUR", "payment": cardPayment("tok_3ds_x")})
	assert.Equal(t, 409, r.status)
}

func TestDeclineFlow(t *testing.T) {
	e := newEnv(t, false)
	r, _ := e.order(map[string]any{"items": 800, "currency": "EUR", "payment": cardPayment("tok_fail_1")})
	require.Equal(t, 402, r.status)
	eb := r.err(t)
	assert.Equal(t, "card_declined", eb.Error.Code)
	id := eb.Error.OrderID
	require.NotEmpty(t, id)

	r, _ = e.order(map[string]any{"id": id, "items": 800, "currency": "EUR", "payment": cardPayment("tok_fail_2")})
	require.Equal(t, 402, r.status)
	assert.Equal(t, id, r.err(t).Error.OrderID)

	// 3-D Secure of a declined order is refused: it was never asked for.
	assert.Equal(t, 409, e.call("POST", "/_sandbox/3ds/"+id+"/complete", "", nil).status)

	r, o := e.order(map[string]any{"id": id, "items": 800, "currency": "EUR", "payment": cardPayment("tok_ok_after")})
	require.Equal(t, 201, r.status, "%s", r.body)
	assert.Equal(t, id, o.ID)
	var all []orderJSON
	e.call("GET", "/payments/v1/order", paymentsim.PrivateKey, nil).json(t, &all)
	assert.Len(t, all, 1, "failed attempts leave no order behind")
}

func TestOrderAsSignedToken(t *testing.T) {
	e := newEnv(t, false)
	r := e.callH("POST", "/payments/v1/order", paymentsim.PrivateKey,
		map[string]any{"items": 100, "currency": "EUR", "payment": cardPayment("tok_ok_jwt")}, map[string]string{"Accept": "*/*"})
	require.Equal(t, 201, r.status)
	assert.Equal(t, "application/jwt", r.header.Get("Content-Type"))
	claims := verifyToken(t, e, string(r.body))
	order := claims["order"].(map[string]any)
	assert.Equal(t, float64(100), order["amount"])
	assert.Equal(t, "authorized", order["status"])
	assert.Equal(t, paymentsim.Issuer, claims["iss"])
	assert.NotContains(t, string(r.body), "tok_ok_jwt")
}
