package bankingsim_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

func TestWalletScopeAndCreation(t *testing.T) {
	e := newEnv(t)
	anna := e.signInPerson(bankingsim.AnnaEmail)
	staff := e.signInStaff()
	base := "/banking/v2/corporations/"

	r := e.do(http.MethodGet, base+bankingsim.SecondCorporationID+"/wallets", anna, nil)
	assert.Equal(t, 404, r.status, "a person sees only its own corporation")
	r = e.do(http.MethodGet, base+bankingsim.DemoCorporationID+"/wallets/"+bankingsim.SecondEURWalletID, anna, nil)
	assert.Equal(t, 404, r.status, "a wallet of another corporation")
	r = e.do(http.MethodGet, base+bankingsim.SecondCorporationID+"/wallets/"+bankingsim.SecondEURWalletID, staff, nil)
	assert.Equal(t, 200, r.status, "staff see all")

	r = e.do(http.MethodPost, base+bankingsim.DemoCorporationID+"/wallets", anna, map[string]any{"adapter": "adapter_c", "currencies": []string{"SEK"}})
	assert.Equal(t, 403, r.status, "staff only")
	for name, tc := range map[string]struct {
		body  map[string]any
		field string
		code  int
	}{
		"no adapter":             {map[string]any{}, "adapter", bankingsim.CodeRequired},
		"unknown adapter":        {map[string]any{"adapter": "adapter_z"}, "adapter", bankingsim.CodeInvalid},
		"purpose on adapter_c":   {map[string]any{"adapter": "adapter_c", "currencies": []string{"SEK"}, "purpose": "CARD"}, "purpose", bankingsim.CodeInvalid},
		"adapter_c no currency":  {map[string]any{"adapter": "adapter_c"}, "currencies", bankingsim.CodeRequired},
		"sepa on automatic":      {map[string]any{"adapter": "adapter_a", "sepa": map[string]any{"number": "DE89370400440532013000"}}, "sepa", bankingsim.CodeInvalid},
		"bad checksum":           {map[string]any{"adapter": "adapter_a", "manual_or_automatic": "manual", "sepa": map[string]any{"number": "DE89370400440532013001"}}, "sepa.number", bankingsim.CodeInvalid},
		"outside SEPA":           {map[string]any{"adapter": "adapter_b", "sepa": map[string]any{"number": "TR330006100519786457841326", "code": "TCZBTR2AXXX"}}, "sepa.number", bankingsim.CodeInvalid},
		"adapter_b sepa no code": {map[string]any{"adapter": "adapter_b", "sepa": map[string]any{"number": "DE89370400440532013000"}}, "sepa.code", bankingsim.CodeRequired},
		"bad sort code":          {map[string]any{"adapter": "adapter_b", "ukLocal": map[string]any{"number": "12345678", "code": "12-34"}}, "ukLocal.code", bankingsim.CodeInvalid},
	} {
		r := e.do(http.MethodPost, base+bankingsim.DemoCorporationID+"/wallets", staff, tc.body)
		assert.True(t, r.status == 400 && r.hasErr(tc.field, tc.code), "%s: %d %s", name, r.status, r.raw)
	}

	r = e.do(http.MethodPost, base+bankingsim.DemoCorporationID+"/wallets", staff, map[string]any{"adapter": "adapter_b",
		"ukLocal": map[string]any{"number": "31926819", "code": "60-16-13"}})
	require.Equal(t, 200, r.status, string(r.raw))
	assert.Equal(t, "GBP", r.body["currency"])
	reqs := r.body["wallet_requisites"].([]any)
	require.Len(t, reqs, 1)
	assert.Equal(t, "uk-local", reqs[0].(map[string]any)["type"])

	// A manual adapter_a wallet without requisites, then attach, then delete.
	r = e.do(http.MethodPost, base+bankingsim.DemoCorporationID+"/wallets", staff, map[string]any{"adapter": "adapter_a", "manual_or_automatic": "manual"})
	require.Equal(t, 200, r.status, string(r.raw))
	walletID := r.body["id"].(string)
	assert.Empty(t, r.body["wallet_requisites"])
	reqPath := base + bankingsim.DemoCorporationID + "/wallet-requisites"
	r = e.do(http.MethodPost, reqPath+"/attach", anna, map[string]any{"adapter": "adapter_a", "manual_or_automatic": "manual",
		"sepa": map[string]any{"number": "NL91 ABNA 0417 1643 00", "code": "ABNANL2A"}, "wallet_id": walletID})
	require.Equal(t, 200, r.status, string(r.raw))
	r = e.do(http.MethodPost, reqPath+"/attach", anna, map[string]any{"adapter": "adapter_a", "wallet_id": bankingsim.DemoUSDWalletID})
	assert.True(t, r.hasErr("wallet_id", bankingsim.CodeInvalid), "adapter_c wallets take no requisites: %s", r.raw)
	r = e.do(http.MethodGet, base+bankingsim.DemoCorporationID+"/wallets/"+walletID, anna, nil)
	reqs = r.body["wallet_requisites"].([]any)
	require.Len(t, reqs, 1)
	reqID := reqs[0].(map[string]any)["id"].(string)
	assert.Equal(t, "NL91ABNA0417164300", reqs[0].(map[string]any)["number"])
	r = e.do(http.MethodDelete, reqPath+"/"+reqID, anna, nil)
	assert.Equal(t, reqID, r.body["id"])
	r = e.do(http.MethodDelete, reqPath+"/"+reqID, anna, nil)
	assert.Equal(t, 404, r.status)

	// The look-up: a bad IBAN is 400 on iban, a good one from EUR is true.
	r = e.do(http.MethodGet, "/banking/v2/lookup/ibans/is-sepa-enabled?source_id="+bankingsim.DemoEURWalletID+"&iban=DE8937040044053201300", anna, nil)
	assert.True(t, r.hasErr("iban", bankingsim.CodeInvalid), string(r.raw))
	r = e.do(http.MethodGet, "/banking/v2/lookup/ibans/is-sepa-enabled?source_id="+bankingsim.DemoEURWalletID+"&iban=DE89370400440532013000", anna, nil)
	assert.Equal(t, true, r.body["is_sepa_enabled_iban"])
	r = e.do(http.MethodGet, "/banking/v2/lookup/ibans/is-sepa-enabled?iban=DE89370400440532013000", anna, nil)
	assert.True(t, r.hasErr("source_id", bankingsim.CodeRequired), string(r.raw))
}
