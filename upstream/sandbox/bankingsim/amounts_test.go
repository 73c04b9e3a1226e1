package bankingsim_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// The bank refuses amounts it cannot book exactly and computes conversions
// in 128 bits. Before, 18,446,744,073,710 USD cents × the rate table's
// 1,000,000 wrapped int64 to 448,384, and with the convert limit removed
// 184 billion USD cost 2 EUR cents; 2^62 USD cost 0.
func TestConversionAmountsAreBoundedAndNeverWrap(t *testing.T) {
	e := newEnv(t)
	staff := e.signInStaff()
	anna := e.signInPerson(bankingsim.AnnaEmail)
	limit := "/banking/v2/corporations/" + bankingsim.DemoCorporationID + "/limits/" + bankingsim.DemoConvertLimitID
	require.Equal(t, 200, e.do(http.MethodDelete, limit, staff, nil).status)

	conv := func(amount any) resp {
		return e.do(http.MethodPost, "/banking/v2/transactions", anna, map[string]any{"amount": amount, "currency": "USD",
			"source": map[string]any{"id": bankingsim.DemoEURWalletID}, "type": "convert"})
	}
	eur0, _ := amountOf(t, e.do(http.MethodGet, walletPath(bankingsim.DemoEURWalletID), anna, nil))
	for _, a := range []any{int64(1) << 62, bankingsim.MaxAmount + 1, 1e30, -5} {
		r := conv(a)
		assert.Equal(t, 400, r.status, "%v: %s", a, r.raw)
		assert.True(t, r.hasErr("amount", bankingsim.CodeInvalid), "%v: %s", a, r.raw)
	}
	for _, a := range []int64{18_446_744_073_710, bankingsim.MaxAmount} {
		r := conv(a)
		assert.Equal(t, 422, r.status, "%d: %s", a, r.raw)
		assert.True(t, r.hasErr("amount", bankingsim.CodeInsufficientFunds), "%d: %s", a, r.raw)
	}
	eur, pending := amountOf(t, e.do(http.MethodGet, walletPath(bankingsim.DemoEURWalletID), anna, nil))
	assert.Equal(t, eur0, eur, "a refused conversion moved money")
	assert.Zero(t, pending)
}

func TestBalancesAndLimitsStayWithinTheBound(t *testing.T) {
	e := newEnv(t)
	staff := e.signInStaff()
	credit := func(amount any) resp {
		return e.do(http.MethodPost, "/_sandbox/banking/wallets/"+bankingsim.DemoUSDWalletID+"/credit", "", map[string]any{"amount": amount})
	}
	r := credit(int64(1) << 62)
	assert.True(t, r.hasErr("amount", bankingsim.CodeInvalid), string(r.raw))
	// A credit that would take the balance past the bound is refused whole.
	r = credit(bankingsim.MaxAmount)
	assert.Equal(t, 400, r.status, string(r.raw))
	assert.True(t, r.hasErr("amount", bankingsim.CodeInvalid), string(r.raw))

	limit := "/banking/v2/corporations/" + bankingsim.DemoCorporationID + "/limits/" + bankingsim.DemoConvertLimitID
	r = e.do(http.MethodPut, limit, staff, map[string]any{"limitSet": map[string]any{"maximumAmount": 1e30}})
	assert.True(t, r.hasErr("limitSet.maximumAmount", bankingsim.CodeInvalid), string(r.raw))
	r = e.do(http.MethodPut, limit, staff, map[string]any{"limitSet": map[string]any{"maximumAmount": bankingsim.MaxAmount}})
	assert.Equal(t, 200, r.status, string(r.raw))
}
