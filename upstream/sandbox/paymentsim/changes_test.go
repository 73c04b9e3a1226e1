package paymentsim_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

func (e *env) getOrder(id string) orderJSON {
	e.t.Helper()
	var list []orderJSON
	e.call("GET", "/payments/v1/order", paymentsim.PrivateKey, nil).json(e.t, &list)
	for _, o := range list {
		if o.ID == id {
			return o
		}
	}
	e.t.Fatalf("order %s not listed", id)
	return orderJSON{}
}

func (e *env) patch(body any) resp {
	e.t.Helper()
	return e.call("PATCH", "/payments/v1/order", paymentsim.PrivateKey, body)
}

func ev(typ string, amount ...int) map[string]any {
	m := map[string]any{"type": typ}
	if len(amount) > 0 {
		m["amount"] = amount[0]
	}
	return m
}

func TestOrderEvents(t *testing.T) {
	e := newEnv(t, false)
	newOrder := func(tok string) string {
		r, o := e.order(map[string]any{"items": 1000, "currency": "EUR", "payment": cardPayment(tok)})
		require.Equal(t, 201, r.status, "%s", r.body)
		return o.ID
	}
	a, b := newOrder("tok_ok_a"), newOrder("tok_ok_b")

	body := []any{
		map[string]any{"id": a, "event": []any{ev("capture", 600), ev("refund", 200)}},
		map[string]any{"id": b, "event": []any{ev("cancel")}},
	}
	r := e.patch(body)
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.JSONEq(t, mustJSON(t, body), string(r.body), "the same array as sent")
	oa := e.getOrder(a)
	assert.Equal(t, "partially_refunded", oa.Status)
	assert.Equal(t, int64(600), oa.CapturedAmount)
	assert.Equal(t, int64(200), oa.RefundedAmount)
	assert.Equal(t, "cancelled", e.getOrder(b).Status)

	// Refund without amount takes what is left.
	require.Equal(t, 200, e.patch([]any{map[string]any{"id": a, "event": []any{ev("refund")}}}).status)
	oa = e.getOrder(a)
	assert.Equal(t, "refunded", oa.Status)
	assert.Equal(t, int64(600), oa.RefundedAmount)

	var names []string
	for _, x := range e.events() {
		names = append(names, x.Name)
		if x.Name == "OrderRefunded" {
			assert.Equal(t, a, x.Payload["order_id"])
		}
	}
	assert.Equal(t, []string{"OrderCreated", "OrderCreated", "OrderCaptured", "OrderRefunded", "OrderCancelled", "OrderRefunded"}, names)

	c, d := newOrder("tok_ok_c"), newOrder("tok_ok_d")
	require.Equal(t, 200, e.patch([]any{map[string]any{"id": d, "event": []any{ev("capture")}}}).status)
	invalid := []struct {
		name  string
		body  []any
		field string
	}{
		{"refund authorized", []any{map[string]any{"id": c, "event": []any{ev("refund")}}}, "[0].event[0]"},
		{"capture too much", []any{map[string]any{"id": c, "event": []any{ev("capture", 1001)}}}, "[0].event[0]"},
		{"capture zero", []any{map[string]any{"id": c, "event": []any{ev("capture", 0)}}}, "[0].event[0]"},
		{"cancel after capture", []any{map[string]any{"id": d, "event": []any{ev("cancel")}}}, "[0].event[0]"},
		{"capture twice", []any{map[string]any{"id": d, "event": []any{ev("capture")}}}, "[0].event[0]"},
		{"anything on cancelled", []any{map[string]any{"id": b, "event": []any{ev("capture")}}}, "[0].event[0]"},
		{"anything on refunded", []any{map[string]any{"id": a, "event": []any{ev("refund", 1)}}}, "[0].event[0]"},
		{"refund above captured", []any{map[string]any{"id": d, "event": []any{ev("refund", 1001)}}}, "[0].event[0]"},
		// All or nothing: the valid first element is not applied either.
		{"second element fails", []any{
			map[string]any{"id": c, "event": []any{ev("capture")}},
			map[string]any{"id": d, "event": []any{ev("refund", 500), ev("cancel")}},
		}, "[1].event[1]"},
		{"same order twice", []any{
			map[string]any{"id": c, "event": []any{ev("cancel")}},
			map[string]any{"id": c, "event": []any{ev("capture")}},
		}, "[1].event[0]"},
	}
	before := len(e.events())
	for _, x := range invalid {
		t.Run(x.name, func(t *testing.T) {
			r := e.patch(x.body)
			require.Equal(t, 409, r.status, "%s", r.body)
			eb := r.err(t)
			assert.Equal(t, "invalid_transition", eb.Error.Code)
			assert.Equal(t, x.field, eb.Error.Field)
		})
	}
	assert.Equal(t, "authorized", e.getOrder(c).Status)
	od := e.getOrder(d)
	assert.Equal(t, "captured", od.Status)
	assert.Equal(t, int64(0), od.RefundedAmount)
	assert.Len(t, e.events(), before, "refused changes create no events")

	r = e.patch([]any{map[string]any{"id": c, "event": []any{ev("capture")}}, map[string]any{"id": "nope", "event": []any{ev("cancel")}}})
	require.Equal(t, 404, r.status)
	assert.Equal(t, "[1].id", r.err(t).Error.Field)
	assert.Equal(t, "authorized", e.getOrder(c).Status)

	r = e.patch([]any{map[string]any{"id": c, "event": []any{ev("void")}}})
	require.Equal(t, 400, r.status)
	assert.Equal(t, "[0].event[0].type", r.err(t).Error.Field)
	r = e.patch(map[string]any{"id": c})
	assert.Equal(t, 400, r.status)
}

func TestOrderDateFilter(t *testing.T) {
	e := newEnv(t, true)
	today := time.Now().UTC()
	day := func(d int) string { return today.AddDate(0, 0, d).Format(time.DateOnly) }
	count := func(key, q string) int {
		r := e.call("GET", "/payments/v1/order"+q, key, nil)
		require.Equal(t, 200, r.status, "%s", r.body)
		var list []orderJSON
		r.json(t, &list)
		for i := 1; i < len(list); i++ {
			assert.LessOrEqual(t, list[i-1].Created, list[i].Created, "oldest first")
		}
		return len(list)
	}
	all := count(paymentsim.PrivateKey, "")
	assert.Equal(t, 13, all)
	assert.Equal(t, all, count(paymentsim.PrivateKey, "?start="+day(-30)+"&end="+day(0)))
	assert.Equal(t, 0, count(paymentsim.PrivateKey, "?start="+day(1)))
	assert.Equal(t, 0, count(paymentsim.PrivateKey, "?end="+day(-21)))
	recent := count(paymentsim.PrivateKey, "?start="+day(-7))
	assert.Greater(t, recent, 0)
	assert.Less(t, recent, all)
	assert.Equal(t, all, recent+count(paymentsim.PrivateKey, "?end="+day(-8)), "inclusive bounds split the list")
	assert.Equal(t, 3, count(paymentsim.DemoCustomerKey, "?start="+day(-30)), "a customer key sees only its orders")

	for _, q := range []struct{ q, field string }{
		{"?start=2024-13-01", "start"}, {"?end=yesterday", "end"}, {"?start=" + day(0) + "&end=" + day(-1), "end"},
	} {
		r := e.call("GET", "/payments/v1/order"+q.q, paymentsim.PrivateKey, nil)
		require.Equal(t, 400, r.status, q.q)
		assert.Equal(t, q.field, r.err(t).Error.Field)
	}
}

func TestCustomerMeAndContact(t *testing.T) {
	e := newEnv(t, true)
	var me customerJSON
	r := e.call("GET", "/payments/v1/customer/me", paymentsim.DemoCustomerKey, nil)
	require.Equal(t, 200, r.status)
	r.json(t, &me)
	assert.Equal(t, "C-1001", me.Number)

	contact := `{"type":"person","name":"Anna L.","email":"anna@example.com","phone":"+46700000000"}`
	r = e.call("PUT", "/payments/v1/customer/me/contact", paymentsim.DemoCustomerKey, contact)
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.JSONEq(t, contact, string(r.body))
	var again customerJSON
	e.call("GET", "/payments/v1/customer/"+me.ID, paymentsim.PrivateKey, nil).json(t, &again)
	assert.JSONEq(t, contact, string(again.Contact))

	r = e.call("PUT", "/payments/v1/customer/"+me.ID+"/contact", paymentsim.PrivateKey, `{"name":"x","email":"bad"}`)
	require.Equal(t, 400, r.status)
	assert.Equal(t, "email", r.err(t).Error.Field)
	r = e.call("PUT", "/payments/v1/customer/nobody/contact", paymentsim.PrivateKey, contact)
	assert.Equal(t, 404, r.status)
}

func TestAddMethod(t *testing.T) {
	e := newEnv(t, false)
	c := e.newCustomer("M-1", "")
	r := e.call("POST", "/payments/v1/customer/"+c.ID+"/method", paymentsim.PublicKey, methodCreatable("tok_ok_1"))
	require.Equal(t, 201, r.status, "%s", r.body)
	var m methodJSON
	r.json(t, &m)
	assert.Equal(t, "card", m.Type)
	assert.Regexp(t, `^pm_[0-9a-f-]{36}$`, m.Token)

	r = e.call("POST", "/payments/v1/customer/"+c.ID+"/method", paymentsim.PrivateKey, map[string]any{
		"method": methodCreatable("tok_ok_2"),
		"order":  map[string]any{"items": 300, "currency": "EUR", "charge": "auto"},
	})
	require.Equal(t, 201, r.status, "%s", r.body)
	var both struct {
		Method methodJSON `json:"method"`
		Order  string     `json:"order"`
	}
	r.json(t, &both)
	o := verifyToken(t, e, both.Order)["order"].(map[string]any)
	assert.Equal(t, both.Method.Token, o["payment"].(map[string]any)["token"])
	assert.Equal(t, "captured", o["status"])

	var got customerJSON
	e.call("GET", "/payments/v1/customer/"+c.ID, paymentsim.PrivateKey, nil).json(t, &got)
	assert.Equal(t, []methodJSON{m, both.Method}, got.Method)

	r = e.call("POST", "/payments/v1/customer/"+c.ID+"/method", paymentsim.PublicKey, map[string]any{
		"method": methodCreatable("tok_ok_3"), "order": map[string]any{"items": 1, "currency": "EUR", "payment": cardPayment("tok_ok_4")}})
	require.Equal(t, 400, r.status)
	assert.Equal(t, "order.payment", r.err(t).Error.Field)
	assert.Equal(t, 404, e.call("POST", "/payments/v1/customer/nobody/method", paymentsim.PublicKey, methodCreatable("tok_ok_5")).status)
}

func TestReorderMethods(t *testing.T) {
	e := newEnv(t, false)
	r := e.call("POST", "/payments/v1/customer", paymentsim.PublicKey, map[string]any{
		"number": "R-1", "contact": map[string]any{"name": "R", "email": "r@example.com"},
		"method": []any{methodCreatable("tok_ok_1"), methodCreatable("tok_ok_2"), methodCreatable("tok_ok_3")},
	})
	require.Equal(t, 201, r.status)
	var c customerJSON
	r.json(t, &c)
	m := c.Method
	put := func(key, id string, body any) resp {
		return e.call("PUT", "/payments/v1/customer/"+id+"/methods", key, body)
	}

	r = put(paymentsim.PrivateKey, c.ID, []methodJSON{m[2], m[0]})
	require.Equal(t, 200, r.status, "%s", r.body)
	var got customerJSON
	r.json(t, &got)
	assert.Equal(t, []methodJSON{m[2], m[0]}, got.Method)

	// The customer payment now charges the new first method; the dropped one is gone.
	_, o := e.order(map[string]any{"items": 1, "currency": "EUR", "customer": c.ID, "payment": map[string]any{"type": "customer", "initiator": "merchant"}})
	assert.Equal(t, m[2].Token, o.Payment["token"])
	rr, _ := e.order(map[string]any{"items": 1, "currency": "EUR", "customer": c.ID, "payment": map[string]any{"type": "card", "card": m[1].Token, "subsequent": map[string]any{"reference": "x", "initiator": "merchant"}}})
	assert.Equal(t, "unknown_method", rr.err(t).Error.Code)

	changed := m[0]
	changed.Last4 = "0000"
	withExtra := map[string]any{"type": m[0].Type, "scheme": m[0].Scheme, "iin": m[0].IIN, "last4": m[0].Last4, "expires": m[0].Expires,
		"acquirer": m[0].Acquirer, "created": m[0].Created, "token": m[0].Token, "nickname": "mine"}
	var k struct{ Key string }
	e.call("POST", "/_sandbox/customers/"+c.ID+"/key", "", nil).json(t, &k)
	bad := []struct {
		name  string
		body  any
		code  string
		field string
	}{
		{"changed", []any{m[2], changed}, "method_changed", "[1]"},
		{"extra field", []any{withExtra}, "method_changed", "[0]"},
		{"missing field", []any{map[string]any{"token": m[0].Token, "type": "card"}}, "method_changed", "[0]"},
		{"left-out method again", []any{m[1]}, "unknown_method", "[0].token"},
		{"duplicate", []any{m[0], m[0]}, "invalid_request", "[1]"},
		{"not an array", map[string]any{"method": []any{}}, "invalid_request", ""},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			r := put(k.Key, "me", b.body)
			require.Equal(t, 400, r.status, "%s", r.body)
			eb := r.err(t)
			assert.Equal(t, b.code, eb.Error.Code)
			assert.Equal(t, b.field, eb.Error.Field)
		})
	}
	r = put(k.Key, "me", []any{m[0]})
	require.Equal(t, 200, r.status, "%s", r.body)
	r.json(t, &got)
	assert.Equal(t, []methodJSON{m[0]}, got.Method)
	assert.Equal(t, 403, put(k.Key, c.ID, []any{}).status)
	assert.Equal(t, 403, put(paymentsim.PublicKey, c.ID, []any{}).status)
}

func TestSeedIsDeterministic(t *testing.T) {
	list := func() ([]customerJSON, []orderJSON) {
		e := newEnv(t, true)
		e.sim.Seed() // a second Seed changes nothing
		var cs []customerJSON
		var os []orderJSON
		e.call("GET", "/payments/v1/customer", paymentsim.PrivateKey, nil).json(t, &cs)
		e.call("GET", "/payments/v1/order", paymentsim.PrivateKey, nil).json(t, &os)
		return cs, os
	}
	c1, o1 := list()
	c2, o2 := list()
	require.Len(t, c1, 6)
	statuses := map[string]int{}
	for i := range c1 {
		assert.Equal(t, c1[i].ID, c2[i].ID)
		assert.Equal(t, "C-100"+string(rune('1'+i)), c1[i].Number)
		assert.GreaterOrEqual(t, len(c1[i].Method), 1)
		assert.LessOrEqual(t, len(c1[i].Method), 2)
		assert.Equal(t, c1[i].Method[0].Token, c2[i].Method[0].Token)
		var contact struct{ Name, Email string }
		require.NoError(t, json.Unmarshal(c1[i].Contact, &contact))
		assert.NotEmpty(t, contact.Name)
		assert.Contains(t, contact.Email, "@")
	}
	perCustomer := map[string]int{}
	for i := range o1 {
		assert.Equal(t, o1[i].ID, o2[i].ID)
		statuses[o1[i].Status]++
		var cid string
		require.NoError(t, json.Unmarshal(o1[i].Customer, &cid))
		perCustomer[cid]++
		created, err := time.Parse(time.RFC3339, o1[i].Created)
		require.NoError(t, err)
		assert.WithinDuration(t, time.Now(), created, 20*24*time.Hour)
	}
	for _, c := range c1 {
		assert.GreaterOrEqual(t, perCustomer[c.ID], 1)
		assert.LessOrEqual(t, perCustomer[c.ID], 3)
	}
	for _, s := range []string{"authorized", "captured", "refunded", "cancelled"} {
		assert.Positive(t, statuses[s], s)
	}
}
