package bankingsim_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

func walletPath(id string) string {
	return "/banking/v2/corporations/" + bankingsim.DemoCorporationID + "/wallets/" + id
}

func amountOf(t *testing.T, r resp) (amount, pending float64) {
	t.Helper()
	require.Equal(t, 200, r.status, string(r.raw))
	amount, _ = r.body["amount"].(float64)
	if p, ok := r.body["pending"].(map[string]any); ok {
		pending, _ = p["amount"].(float64)
	}
	return amount, pending
}

func TestConversionRules(t *testing.T) {
	e := newEnv(t)
	anna := e.signInPerson(bankingsim.AnnaEmail)
	conv := func(body map[string]any) resp { return e.do(http.MethodPost, "/banking/v2/transactions", anna, body) }

	r := conv(map[string]any{"amount": 1000, "currency": "EUR", "source": map[string]any{"id": bankingsim.DemoUSDWalletID}, "type": "transfer-outgoing"})
	assert.Equal(t, 422, r.status)
	assert.True(t, r.hasErr("type", bankingsim.CodeUnknownTransactionType), string(r.raw))

	r = conv(map[string]any{"currency": "EUR", "type": "convert"})
	assert.Equal(t, 400, r.status)
	assert.True(t, r.hasErr("amount", bankingsim.CodeRequired), string(r.raw))
	assert.True(t, r.hasErr("source.id", bankingsim.CodeRequired), string(r.raw))

	r = conv(map[string]any{"amount": 10.5, "currency": "EUR", "source": map[string]any{"id": bankingsim.DemoUSDWalletID}, "type": "convert"})
	assert.True(t, r.hasErr("amount", bankingsim.CodeInvalid), "cents are whole numbers: %s", r.raw)

	r = conv(map[string]any{"amount": 1000, "currency": "XYZ", "source": map[string]any{"id": bankingsim.DemoUSDWalletID}, "type": "convert"})
	assert.True(t, r.hasErr("currency", bankingsim.CodeCurrencyNotAllowed), string(r.raw))

	staff := e.signInStaff()
	r = e.do(http.MethodPost, "/banking/v2/transactions", staff, map[string]any{"amount": 1000, "currency": "EUR",
		"source": map[string]any{"id": bankingsim.DemoUSDWalletID}, "type": "convert"})
	assert.Equal(t, 403, r.status, "creating transfers is for persons")

	// Reserved while PENDING; settled lazily once SettleAfter has passed.
	usd0, _ := amountOf(t, e.do(http.MethodGet, walletPath(bankingsim.DemoUSDWalletID), anna, nil))
	eur0, _ := amountOf(t, e.do(http.MethodGet, walletPath(bankingsim.DemoEURWalletID), anna, nil))
	r = conv(map[string]any{"amount": 10000, "currency": "EUR", "source": map[string]any{"id": bankingsim.DemoUSDWalletID}, "type": "convert"})
	require.Equal(t, 200, r.status, string(r.raw))
	assert.Equal(t, map[string]any{"code": float64(40), "name": "PENDING"}, r.body["status"])
	assert.Equal(t, float64(10854), r.body["source_amount"])
	assert.Equal(t, float64(10000), r.body["amount_eur"])
	assert.Equal(t, float64(54), r.body["charge_usd"])
	usd, pending := amountOf(t, e.do(http.MethodGet, walletPath(bankingsim.DemoUSDWalletID), anna, nil))
	assert.Equal(t, usd0-10854, usd)
	assert.Equal(t, float64(10854), pending)

	e.clock.Add(bankingsim.DefaultSettleAfter + time.Second)
	anna = e.signInPerson(bankingsim.AnnaEmail) // the old token's grace has passed
	usd, pending = amountOf(t, e.do(http.MethodGet, walletPath(bankingsim.DemoUSDWalletID), anna, nil))
	eur, _ := amountOf(t, e.do(http.MethodGet, walletPath(bankingsim.DemoEURWalletID), anna, nil))
	assert.Equal(t, usd0-10854, usd)
	assert.Zero(t, pending)
	assert.Equal(t, eur0+10000, eur)
}

func TestLimitsAcceptCamelAndSnakeCase(t *testing.T) {
	e := newEnv(t)
	staff := e.signInStaff()
	path := "/banking/v2/corporations/" + bankingsim.DemoCorporationID + "/limits/" + bankingsim.DemoConvertLimitID
	r := e.do(http.MethodPut, path, staff, map[string]any{"limitSet": map[string]any{"minimumAmount": 500}})
	require.Equal(t, 200, r.status, string(r.raw))
	r = e.do(http.MethodPut, path, staff, map[string]any{"limit_set": map[string]any{"maximum_amount": 900}, "payment_method": "internal"})
	require.Equal(t, 200, r.status, string(r.raw))
	set := r.body["limitSet"].(map[string]any)
	assert.Equal(t, float64(500), set["minimumAmount"])
	assert.Equal(t, float64(900), set["maximumAmount"])
	r = e.do(http.MethodPut, path, staff, map[string]any{"limitSet": map[string]any{"maximumAmount": -1}})
	assert.True(t, r.hasErr("limitSet.maximumAmount", bankingsim.CodeInvalid), string(r.raw))
	r = e.do(http.MethodPut, path, staff, map[string]any{"id": "other"})
	assert.True(t, r.hasErr("id", bankingsim.CodeInvalid), string(r.raw))
	r = e.do(http.MethodPut, path, e.signInPerson(bankingsim.AnnaEmail), map[string]any{})
	assert.Equal(t, 403, r.status)
	r = e.do(http.MethodDelete, path, staff, nil)
	require.Equal(t, 200, r.status)
	assert.Equal(t, bankingsim.DemoConvertLimitID, r.body["id"])
	assert.Equal(t, 404, e.do(http.MethodGet, path, staff, nil).status)
}

func TestStatementCSVIncludesTheToDayInItsTimeZone(t *testing.T) {
	e := newEnv(t)
	anna := e.signInPerson(bankingsim.AnnaEmail)
	// The EUR wallet's first movement is at 2024-01-05 10:00 UTC, which is
	// 2024-01-06 00:00 in Pacific/Kiritimati (UTC+14).
	rows := func(q string) int {
		r := e.do(http.MethodGet, "/banking/v2/reports/statement/csv?wallets[]="+bankingsim.DemoEURWalletID+"&"+q, anna, nil)
		require.Equal(t, 200, r.status, string(r.raw))
		res, err := http.Get(r.body["report_path"].(string))
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		require.Equal(t, 200, res.StatusCode)
		return len(strings.Split(strings.TrimSpace(string(b)), "\n")) - 1
	}
	assert.Equal(t, 2, rows("from=2024-01-05&to=2024-01-05"), "the to day is included")
	assert.Equal(t, 0, rows("from=2024-01-04&to=2024-01-04"))
	assert.Equal(t, 0, rows("from=2024-01-05&to=2024-01-05&timezone=Pacific/Kiritimati"))
	assert.Equal(t, 2, rows("from=2024-01-06&to=2024-01-06&timezone=Pacific/Kiritimati"))

	r := e.do(http.MethodGet, "/banking/v2/reports/statement/csv?wallets[]="+bankingsim.DemoEURWalletID, e.signInStaff(), nil)
	assert.True(t, r.hasErr("corporationId", bankingsim.CodeRequired), "staff name the corporation: %s", r.raw)
	r = e.do(http.MethodGet, "/banking/v2/reports/statement/pdf?walletId=a&walletId=b", anna, nil)
	assert.True(t, r.hasErr("walletId", bankingsim.CodeInvalid), string(r.raw))
	r = e.do(http.MethodGet, "/banking/v2/reports/statement/csv?wallets[]="+bankingsim.DemoEURWalletID+"&timezone=Mars/Olympus", anna, nil)
	assert.True(t, r.hasErr("timezone", bankingsim.CodeInvalid), string(r.raw))
}
