package bankingsim_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// issueBody is a valid issue request for Dace of the demo corporation.
func issueBody() map[string]any {
	return map[string]any{
		"card": map[string]any{
			"expiry":            map[string]any{"month": "12", "year": "2031"},
			"display_name":      "test",
			"funding_source_id": bankingsim.DemoCardWalletID,
			"type":              "VIRTUAL", "brand": "MASTERCARD", "region": "EUROPE", "currency": "EUR",
		},
		"company": map[string]any{
			"external_id": bankingsim.DemoAccountID, "name": "Demo Trading SIA", "email": "office@demo.test",
			"address": map[string]any{"street": "Brivibas iela 1", "country": "LV", "post_code": "LV-1010", "city": "Riga"},
		},
		"cardholder": map[string]any{
			"external_id": bankingsim.DaceID, "first_name": "Dace", "last_name": "Kalnina", "type": "PRIMARY",
			"phone": "+37120000005", "email": "dace@demo.test",
		},
	}
}

// set changes one dotted path of a JSON-like map; a nil value deletes it.
func set(m map[string]any, path string, v any) map[string]any {
	parts := strings.Split(path, ".")
	cur := m
	for _, p := range parts[:len(parts)-1] {
		cur = cur[p].(map[string]any)
	}
	if v == nil {
		delete(cur, parts[len(parts)-1])
	} else {
		cur[parts[len(parts)-1]] = v
	}
	return m
}

func luhnOK(pan string) bool {
	sum := 0
	for i := len(pan) - 1; i >= 0; i-- {
		d := int(pan[i] - '0')
		if (len(pan)-1-i)%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

func TestCardIssueRules(t *testing.T) {
	e := newEnv(t)
	tok := e.signInPerson(bankingsim.AnnaEmail)
	long := strings.Repeat("x", 256)
	cases := []struct {
		path  string
		value any
		field string
		code  int
	}{
		{"card.type", "PHYSICAL", "card.type", 10001},
		{"card.brand", "VISA", "card.brand", 10001},
		{"card.region", "ASIA", "card.region", 10001},
		{"card.currency", "USD", "card.currency", 10001},
		{"card.expiry.month", "13", "card.expiry.month", 10001},
		{"card.expiry.month", "0", "card.expiry.month", 10001},
		{"card.expiry.year", "2018", "card.expiry.year", 10001},
		{"card.expiry.year", nil, "card.expiry.year", 10002},
		{"card.funding_source_id", bankingsim.DemoEURWalletID, "card.funding_source_id", 10001},
		{"card.funding_source_id", bankingsim.SecondEURWalletID, "card.funding_source_id", 10001},
		{"card.funding_source_id", nil, "card.funding_source_id", 10002},
		{"company.external_id", bankingsim.SecondAccountID, "company.external_id", 10001},
		{"company.name", long, "company.name", 10001},
		{"company.email", nil, "company.email", 10002},
		{"company.address.city", nil, "company.address.city", 10002},
		{"company.address", nil, "company.address", 10002},
		{"cardholder.external_id", bankingsim.BenID, "cardholder.external_id", 10001},
		{"cardholder.external_id", bankingsim.EdgarsID, "cardholder.external_id", 10001},
		{"cardholder.first_name", long, "cardholder.first_name", 10001},
		{"cardholder.last_name", long, "cardholder.last_name", 10001},
		{"cardholder.type", "OWNER", "cardholder.type", 10001},
		{"cardholder.phone", nil, "cardholder.phone", 10002},
		{"cardholder.email", "not-an-email", "cardholder.email", 10001},
	}
	for i, c := range cases {
		t.Run(c.path+"#"+strconv.Itoa(i), func(t *testing.T) {
			r := e.do("POST", "/banking/v2/cards/issue", tok, set(issueBody(), c.path, c.value))
			require.Equal(t, 400, r.status, string(r.raw))
			require.True(t, r.hasErr(c.field, c.code), string(r.raw))
		})
	}
	r := e.do("POST", "/banking/v2/cards/issue", tok, set(issueBody(), "template_id", "other"))
	require.True(t, r.hasErr("template_id", 10001), string(r.raw))
	require.Equal(t, 0, len(e.cards(tok))-2, "a refused issue created a card")
}

func (e *env) cards(tok string) []map[string]any {
	e.t.Helper()
	r := e.do("GET", "/banking/v2/cards", tok, nil)
	require.Equal(e.t, 200, r.status, string(r.raw))
	var out []map[string]any
	require.NoError(e.t, json.Unmarshal(r.raw, &out))
	return out
}

func TestCardIssueReadCredentialsAndSimulate(t *testing.T) {
	e := newEnv(t)
	anna := e.signInPerson(bankingsim.AnnaEmail)
	r := e.do("POST", "/banking/v2/cards/issue", anna, set(issueBody(), "template_id", bankingsim.CardTemplateID))
	require.Equal(t, 200, r.status, string(r.raw))
	id := r.body["id"].(string)

	r = e.do("GET", "/banking/v2/cards/"+id, anna, nil)
	require.Equal(t, 200, r.status)
	require.Equal(t, "ACTIVE", r.body["status"])
	require.Equal(t, float64(bankingsim.DefaultCardLimit), r.body["available_balance"])
	pan := r.body["pan"].(map[string]any)
	require.Equal(t, bankingsim.CardTestBIN, pan["bin"])

	r = e.do("GET", "/banking/v2/cards/"+id+"/credentials", anna, nil)
	require.Equal(t, 200, r.status)
	require.Equal(t, "no-store", r.header.Get("Cache-Control"))
	full := r.body["pan"].(string)
	require.Len(t, full, 16)
	require.True(t, luhnOK(full), full)
	require.True(t, strings.HasSuffix(full, pan["last_four"].(string)))
	require.Len(t, r.body["cvc2"], 3)

	require.Equal(t, 403, e.do("GET", "/banking/v2/cards/"+id+"/credentials", e.signInStaff(), nil).status)
	ben := e.signInPerson(bankingsim.BenEmail)
	require.Equal(t, 404, e.do("GET", "/banking/v2/cards/"+id+"/credentials", ben, nil).status)
	require.Equal(t, 404, e.do("GET", "/banking/v2/cards/"+id, ben, nil).status)
	require.Empty(t, e.cards(ben))

	sim := func(body map[string]any) (bool, string) {
		t.Helper()
		r := e.do("POST", "/banking/v2/card/simulation", anna, body)
		require.Equal(t, 200, r.status, string(r.raw))
		return r.body["authorised"].(bool), r.body["code"].(string)
	}
	ok, code := sim(map[string]any{"card_id": id, "amount": 2500, "currency": "EUR"})
	require.True(t, ok)
	require.Equal(t, "00", code)
	ok, code = sim(map[string]any{"cardId": id, "amount": 1000, "currency": "EUR"})
	require.True(t, ok, code)
	_, code = sim(map[string]any{"card_id": id, "amount": 0, "currency": "EUR"})
	require.Equal(t, bankingsim.AuthInvalidAmount, code)
	_, code = sim(map[string]any{"card_id": id, "amount": bankingsim.DefaultCardLimit, "currency": "EUR"})
	require.Equal(t, bankingsim.AuthExceedsLimit, code)

	r = e.do("POST", "/banking/v2/card/simulation", anna, map[string]any{"card_id": id, "amount": 100, "currency": "USD"})
	require.True(t, r.hasErr("currency", 10001), string(r.raw))

	r = e.do("GET", "/banking/v2/cards/"+id+"/transactions?meta[limit]=1&meta[sort_by]=amount&meta[sort_type]=DESC", anna, nil)
	require.Equal(t, 200, r.status, string(r.raw))
	meta := r.body["meta"].(map[string]any)
	require.Equal(t, float64(2), meta["number_of_records"])
	require.Equal(t, true, meta["has_more"])
	list := r.body["list"].([]any)
	require.Equal(t, float64(2500), list[0].(map[string]any)["amount_eur"])
	r = e.do("GET", "/banking/v2/cards/"+id, anna, nil)
	require.Equal(t, float64(bankingsim.DefaultCardLimit-3500), r.body["available_balance"])

	// Funds: a limit above the wallet's balance lets the balance decide.
	c := e.doControl("/_sandbox/cards/"+id+"/limit", map[string]any{"limit": 1e12})
	require.Equal(t, 200, c.status)
	_, code = sim(map[string]any{"card_id": id, "amount": 1e11, "currency": "EUR"})
	require.Equal(t, bankingsim.AuthInsufficientFunds, code)

	for st, want := range map[string]string{"LOST": "41", "STOLEN": "43", "CANCELED": "04", "INACTIVE": "62"} {
		require.Equal(t, 200, e.doControl("/_sandbox/cards/"+id+"/status", map[string]any{"status": st}).status)
		_, code = sim(map[string]any{"card_id": id, "amount": 100, "currency": "EUR"})
		require.Equal(t, want, code, st)
	}
}

func TestCardSimulationDeclinesExpiredAndBlockedCardholder(t *testing.T) {
	e := newEnv(t)
	anna := e.signInPerson(bankingsim.AnnaEmail)
	r := e.do("POST", "/banking/v2/cards/issue", anna, set(issueBody(), "card.expiry.year", "2019"))
	require.Equal(t, 200, r.status, string(r.raw))
	r = e.do("POST", "/banking/v2/card/simulation", anna, map[string]any{"card_id": r.body["id"], "amount": 100, "currency": "EUR"})
	require.Equal(t, bankingsim.AuthExpiredCard, r.body["code"])

	r = e.do("POST", "/banking/v2/cards/issue", anna, issueBody())
	id := r.body["id"]
	require.Equal(t, 200, e.do("DELETE", "/banking/v2/persons/"+bankingsim.DaceID, anna, nil).status)
	r = e.do("POST", "/banking/v2/card/simulation", anna, map[string]any{"card_id": id, "amount": 100, "currency": "EUR"})
	require.Equal(t, false, r.body["authorised"])
	require.Equal(t, bankingsim.AuthNotForCardholder, r.body["code"])
}

func (e *env) doControl(path string, body any) resp { return e.do("POST", path, "", body) }
