package paymentsim_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// The sandbox refuses what a bank would: an amount, a product or a total
// it cannot book exactly. Before, 4 × 2^62 wrapped to an order of 0 and
// int64-max + 2 to -9.2e18, and both were authorised.
func TestOrderAmountsBeyondTheBoundAreRefused(t *testing.T) {
	e := newEnv(t, false)
	const max = paymentsim.MaxAmount
	item := func(amount any, quantity any) map[string]any {
		return map[string]any{"name": "x", "amount": amount, "quantity": quantity}
	}
	cases := []struct {
		name  string
		items any
		field string
	}{
		{"4 × 2^62", item(int64(1)<<62, 4), "items.amount"},
		{"int64 max + 2", []any{item(json.Number("9223372036854775807"), 1), item(2, 1)}, "items[0].amount"},
		{"a number above the bound", int64(max) + 1, "items"},
		{"a product above the bound", item(int64(max)/2+1, 2), "items"},
		{"a quantity above the bound", item(1, paymentsim.MaxQuantity+1), "items.quantity"},
		{"a total above the bound", []any{item(int64(max), 1), item(1, 1)}, "items"},
		{"a quantity beyond int64", item(1, json.Number("1e30")), "items.quantity"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.call("POST", "/payments/v1/order", paymentsim.PrivateKey, map[string]any{"items": tc.items, "currency": "EUR",
				"payment": cardPayment("tok_ok_bound" + string(rune('a'+i)))})
			require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
			eb := r.err(t)
			assert.Equal(t, "invalid_request", eb.Error.Code)
			assert.Equal(t, tc.field, eb.Error.Field)
		})
	}
	var list []map[string]any
	e.call("GET", "/payments/v1/order", paymentsim.PrivateKey, nil).json(t, &list)
	assert.Empty(t, list, "a refused order was booked")

	// The bound itself is booked, to the cent.
	o := e.call("POST", "/payments/v1/order", paymentsim.PrivateKey, map[string]any{"currency": "EUR",
		"items": []any{item(int64(max)-2, 1), item(1, 2)}, "payment": cardPayment("tok_ok_boundmax")})
	require.Equal(t, http.StatusCreated, o.status, string(o.body))
	var got struct {
		Amount json.Number `json:"amount"`
	}
	o.json(t, &got)
	assert.Equal(t, "9007199254740991", got.Amount.String())
}
