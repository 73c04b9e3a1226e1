package bankingsim_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// TestBulkSeeding: bulk corporations, persons and wallets behave like any
// other: a person signs in with the ordinary sign-in, sees its own wallet and
// not another bulk corporation's, and a minted token works once.
func TestBulkSeeding(t *testing.T) {
	e := newEnv(t)
	r := e.do(http.MethodPost, "/_sandbox/banking/bulk", "", map[string]any{"corporations": 3, "persons": 2, "tokens": true})
	require.Equal(t, 200, r.status, string(r.raw))
	assert.Equal(t, bankingsim.DemoPassword, r.body["password"])
	corps := r.body["corporations"].([]any)
	require.Len(t, corps, 3)
	first, second := corps[0].(map[string]any), corps[1].(map[string]any)
	persons := first["persons"].([]any)
	require.Len(t, persons, 2)
	p0 := persons[0].(map[string]any)

	tok := e.signInPerson(p0["email"].(string))
	base := "/banking/v2/corporations/"
	r = e.do(http.MethodGet, base+first["id"].(string)+"/wallets/"+first["wallet_id"].(string), tok, nil)
	require.Equal(t, 200, r.status, string(r.raw))
	assert.Equal(t, "EUR", r.body["currency"])
	r = e.do(http.MethodGet, base+second["id"].(string)+"/wallets/"+second["wallet_id"].(string), tok, nil)
	assert.Equal(t, 404, r.status, "another bulk corporation is another tenant")

	minted := persons[1].(map[string]any)["token"].(string)
	r = e.do(http.MethodGet, "/banking/v2/persons/me", minted, nil)
	require.Equal(t, 200, r.status, string(r.raw))
	assert.Equal(t, persons[1].(map[string]any)["id"], r.body["id"])

	r = e.do(http.MethodPost, "/_sandbox/banking/wallets/"+first["wallet_id"].(string)+"/credit", "", map[string]any{"amount": 500})
	require.Equal(t, 200, r.status, string(r.raw))
}

func TestBulkSeedingBounds(t *testing.T) {
	e := newEnv(t)
	for name, tc := range map[string]struct {
		body  map[string]any
		field string
		code  int
	}{
		"no corporations":   {map[string]any{"persons": 1}, "corporations", bankingsim.CodeRequired},
		"no persons":        {map[string]any{"corporations": 1}, "persons", bankingsim.CodeRequired},
		"zero":              {map[string]any{"corporations": 0, "persons": 1}, "corporations", bankingsim.CodeInvalid},
		"fraction":          {map[string]any{"corporations": 1, "persons": 1.5}, "persons", bankingsim.CodeInvalid},
		"too many corps":    {map[string]any{"corporations": bankingsim.MaxBulkCorporations + 1, "persons": 1}, "corporations", bankingsim.CodeInvalid},
		"too many per corp": {map[string]any{"corporations": 1, "persons": bankingsim.MaxBulkPersons + 1}, "persons", bankingsim.CodeInvalid},
		"too many in all":   {map[string]any{"corporations": bankingsim.MaxBulkCorporations, "persons": bankingsim.MaxBulkPersons}, "persons", bankingsim.CodeInvalid},
		"a string":          {map[string]any{"corporations": "10", "persons": 1}, "corporations", bankingsim.CodeInvalid},
		"unknown field":     {map[string]any{"corporations": 1, "persons": 1, "wallets": 2}, "wallets", bankingsim.CodeInvalid},
	} {
		r := e.do(http.MethodPost, "/_sandbox/banking/bulk", "", tc.body)
		assert.True(t, r.status == 400 && r.hasErr(tc.field, tc.code), "%s: %d %s", name, r.status, r.raw)
	}
}
