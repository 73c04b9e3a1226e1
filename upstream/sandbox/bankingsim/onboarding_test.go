package bankingsim_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// TestNotOnboardedWalletsAreDisabled: the second corporation is not
// onboarded, so each route operating on its wallets answers 400 10001 on
// the field naming the wallet or corporation, while reading them stays
// open; once staff onboard it, the same requests pass.
func TestNotOnboardedWalletsAreDisabled(t *testing.T) {
	e := newEnv(t)
	ben := e.signInPerson(bankingsim.BenEmail)
	staff := e.signInStaff()
	corp := "/banking/v2/corporations/" + bankingsim.SecondCorporationID
	type call struct {
		method, path string
		body         map[string]any
		field        string
	}
	calls := []call{
		{http.MethodGet, "/banking/v2/lookup/ibans/is-sepa-enabled?source_id=" + bankingsim.SecondEURWalletID + "&iban=DE89370400440532013000", nil, "source_id"},
		{http.MethodPost, corp + "/wallet-requisites", map[string]any{"adapter": "adapter_a", "manual_or_automatic": "automatic"}, "corporation_id"},
		{http.MethodPost, corp + "/wallet-requisites/attach", map[string]any{"adapter": "adapter_a", "manual_or_automatic": "automatic", "wallet_id": bankingsim.SecondEURWalletID}, "wallet_id"},
		{http.MethodGet, "/banking/v2/reports/statement/pdf?walletId=" + bankingsim.SecondEURWalletID, nil, "walletId"},
		{http.MethodGet, "/banking/v2/reports/statement/csv?wallets=" + bankingsim.SecondEURWalletID, nil, "wallets"},
		{http.MethodDelete, corp + "/wallet-requisites/" + bankingsim.SecondRequisiteID, nil, "id"},
	}
	for _, c := range calls {
		r := e.do(c.method, c.path, ben, c.body)
		require.Equal(t, 400, r.status, "%s %s: %s", c.method, c.path, r.raw)
		assert.Equal(t, c.field, r.err0()["field"], c.path)
		assert.EqualValues(t, bankingsim.CodeInvalid, r.err0()["code"], c.path)
	}
	for _, path := range []string{corp + "/wallets", corp + "/wallet-requisites", corp + "/wallets/" + bankingsim.SecondEURWalletID + "/transactions"} {
		assert.Equal(t, 200, e.do(http.MethodGet, path, ben, nil).status, "reading %s stays open", path)
	}

	r := e.do(http.MethodPut, "/banking/v2/corporation/"+bankingsim.SecondCorporationID, staff, map[string]any{"is_onboarded": true})
	require.Equal(t, 200, r.status, "%s", r.raw)
	for _, c := range calls {
		r := e.do(c.method, c.path, ben, c.body)
		assert.Equal(t, 200, r.status, "%s %s once onboarded: %s", c.method, c.path, r.raw)
	}
}
