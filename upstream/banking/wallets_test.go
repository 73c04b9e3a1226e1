package banking

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWalletsListAndGet(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) {
		one := map[string]any{"id": "w1", "amount": 12345, "type": "real", "name": "Main", "currency": "EUR",
			"payment_processor_adapter": "adapter_a", "purpose": "CARD",
			"pending":           map[string]any{"id": "p1", "amount": 500, "currency": "EUR", "extra": true},
			"wallet_requisites": []any{map[string]any{"id": "r1", "number": "LV00", "code": "BIC", "type": "sepa"}},
			"created_at":        "2024-01-02T09:00:00Z"}
		if strings.HasSuffix(s.Path, "/wallets") {
			writeJSON(w, 200, []any{one})
			return
		}
		writeJSON(w, 200, one)
	})
	list, err := c.Wallets.List(t.Context(), "c/1")
	require.NoError(t, err)
	require.Len(t, list, 1)
	w := list[0]
	assert.Equal(t, int64(12345), w.Amount)
	assert.Equal(t, AdapterA, w.Adapter)
	require.NotNil(t, w.Purpose)
	assert.Equal(t, PurposeCard, *w.Purpose)
	require.NotNil(t, w.Pending)
	assert.Equal(t, "p1", w.Pending.ID)
	assert.JSONEq(t, `{"id":"p1","amount":500,"currency":"EUR","extra":true}`, string(w.Pending.Raw))
	assert.Equal(t, "LV00", w.Requisites[0].Number)
	assert.Equal(t, "GET /banking/v2/corporations/c/1/wallets", f.last(t).Method+" "+f.last(t).Path)

	got, err := c.Wallets.Get(t.Context(), "c1", "w1")
	require.NoError(t, err)
	assert.Equal(t, "w1", got.ID)
	assert.Equal(t, "/banking/v2/corporations/c1/wallets/w1", f.last(t).Path)
}
