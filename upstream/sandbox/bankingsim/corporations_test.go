package bankingsim_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

func TestCorporationsReadAndScope(t *testing.T) {
	e := newEnv(t)
	staff := e.signInStaff()
	r := e.do("GET", "/banking/v2/corporations", staff, nil)
	require.Equal(t, 200, r.status)
	list := r.body["list"].([]any)
	require.Len(t, list, 2)
	require.Equal(t, "Demo Trading SIA", list[0].(map[string]any)["name"], "sorted by name ASC by default")
	require.Equal(t, "name", r.body["meta"].(map[string]any)["sort_by"])
	staff = r.header.Get("x-access-token")
	r = e.do("GET", "/banking/v2/corporations/current", staff, nil)
	require.Equal(t, 403, r.status, "staff have no current corporation")

	anna := e.signInPerson(bankingsim.AnnaEmail)
	r = e.do("GET", "/banking/v2/corporations", anna, nil)
	require.Len(t, r.body["list"].([]any), 1)
	anna = r.header.Get("x-access-token")
	r = e.do("GET", "/banking/v2/corporations/current", anna, nil)
	require.Equal(t, 200, r.status)
	require.Equal(t, bankingsim.DemoCorporationID, r.body["id"])
	require.Equal(t, "LV", r.body["country"])
	require.Equal(t, "EUR", r.body["currency"])
	require.Equal(t, "corporate", r.body["identity"].(map[string]any)["type"])
	anna = r.header.Get("x-access-token")
	r = e.do("GET", "/banking/v2/corporation", anna, nil)
	require.Equal(t, bankingsim.DemoCorporationID, r.body["id"], "alias of /corporations/current")
}

func TestUpdateCorporation(t *testing.T) {
	e := newEnv(t)
	path := "/banking/v2/corporation/" + bankingsim.SecondCorporationID
	ben := e.signInPerson(bankingsim.BenEmail)
	r := e.do("PUT", path, ben, map[string]any{"name": "Mine"})
	require.Equal(t, 403, r.status, "staff only")
	require.Equal(t, 403, e.do("PUT", path, e.signInAPI(bankingsim.DemoAPIKey), map[string]any{"name": "Mine"}).status)

	staff := e.signInStaff()
	put := func(b map[string]any) resp {
		r := e.do("PUT", path, staff, b)
		staff = r.header.Get("x-access-token")
		return r
	}
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"currency": "USD"}, "currency"},
		{map[string]any{"country": "US"}, "country"},
		{map[string]any{"country": "lv"}, "country"},
		{map[string]any{"address": strings.Repeat("a", 65)}, "address"},
		{map[string]any{"city": strings.Repeat("a", 65)}, "city"},
		{map[string]any{"region": strings.Repeat("a", 101)}, "region"},
		{map[string]any{"post_code": strings.Repeat("1", 11)}, "post_code"},
		{map[string]any{"email": "nope"}, "email"},
		{map[string]any{"is_onboarded": "yes"}, "is_onboarded"},
	} {
		r := put(tc.body)
		require.Equal(t, 400, r.status, tc.field)
		require.True(t, r.hasErr(tc.field, 10001), string(r.raw))
	}
	r = put(map[string]any{"is_onboarded": true, "currency": "EUR", "country": "FI", "is_kyc_verified": true, "address": strings.Repeat("a", 64)})
	require.Equal(t, 200, r.status, string(r.raw))
	require.Equal(t, true, r.body["is_onboarded"])
	require.Equal(t, "2025-03-01T12:00:00Z", r.body["onboarded_at"])
	require.Equal(t, "FI", r.body["country"])
	require.Equal(t, "Second Ventures OÜ", r.body["name"], "absent fields stay unchanged")
	require.Equal(t, true, r.body["identity"].(map[string]any)["is_kyc_verified"])
	require.Equal(t, "staff", r.body["updated_by"].(map[string]any)["type"])

	r = e.do("PUT", "/banking/v2/corporation/nope", staff, map[string]any{"name": "x"})
	require.Equal(t, 404, r.status)
}

func TestCorporationSettings(t *testing.T) {
	e := newEnv(t)
	anna := e.signInPerson(bankingsim.AnnaEmail)
	path := "/banking/v2/corporations/" + bankingsim.DemoCorporationID + "/settings"
	r := e.do("GET", path, anna, nil)
	require.Equal(t, 200, r.status)
	require.Equal(t, bankingsim.DemoCorporationID, r.body["id"])
	require.Equal(t, []any{"employee"}, r.body["allowed_person_types"])
	anna = r.header.Get("x-access-token")

	r = e.do("PUT", path, anna, map[string]any{"allowed_person_types": []string{"robot"}})
	require.Equal(t, 400, r.status)
	require.True(t, r.hasErr("allowed_person_types", 10001))
	anna = r.header.Get("x-access-token")

	r = e.do("PUT", path, anna, map[string]any{"allowed_person_types": []string{"consumer"}})
	require.Equal(t, 200, r.status)
	require.Equal(t, []any{"employee", "consumer"}, r.body["allowed_person_types"], "employee is kept automatically")
	anna = r.header.Get("x-access-token")

	r = e.do("POST", "/banking/v2/persons", anna, validPerson())
	require.Equal(t, 400, r.status)
	require.True(t, r.hasErr("type", 10002), "now several types are allowed")

	dace := e.signInPerson("dace@demo.test")
	require.Equal(t, 403, e.do("PUT", path, dace, map[string]any{"allowed_person_types": []string{}}).status)
}

func TestCorporationSignUpAndCaptcha(t *testing.T) {
	e := newEnv(t)
	good := map[string]any{"companyName": "New Co SIA", "email": "founder@new.test", "firstName": "Fia", "lastName": "Founder",
		"phone": "+37120000099", "country": "LV", "captcha": bankingsim.CaptchaTestToken}
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
		code  int
	}{
		{"no captcha", with(good, "captcha", nil), "captcha", 10001},
		{"bad captcha", with(good, "captcha", "robot"), "captcha", 10001},
		{"bad recaptcha", with(good, "captcha", nil, "recaptcha", "robot"), "recaptcha", 10001},
		{"companyName required", with(good, "companyName", nil), "companyName", 10002},
		{"companyName max 255", with(good, "companyName", strings.Repeat("n", 256)), "companyName", 10001},
		{"country accepted", with(good, "country", "US"), "country", 10001},
		{"address max 64", with(good, "address", strings.Repeat("a", 65)), "address", 10001},
		{"city max 64", with(good, "city", strings.Repeat("a", 65)), "city", 10001},
		{"region max 100", with(good, "region", strings.Repeat("a", 101)), "region", 10001},
		{"post_code max 10", with(good, "post_code", strings.Repeat("1", 11)), "post_code", 10001},
		{"email required", with(good, "email", nil), "email", 10002},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", "/banking/v2/corporation/signup", "", tc.body)
			require.Equal(t, 400, r.status)
			require.True(t, r.hasErr(tc.field, tc.code), string(r.raw))
		})
	}
	r := e.do("POST", "/banking/v2/corporation/signup", "", with(good, "captcha", nil, "recaptcha", bankingsim.CaptchaTestToken, "city", "Riga"))
	require.Equal(t, 200, r.status, string(r.raw))
	id, _ := r.body["id"].(string)
	require.NotEmpty(t, id)
	inv := e.lastCode("email", "founder@new.test")
	require.NotEmpty(t, inv)

	r = e.do("POST", "/banking/v2/corporation/signup", "", good)
	require.Equal(t, 409, r.status, "the founder's e-mail is taken")
	require.True(t, r.hasErr("email", 10001))

	// The founder sets a password and manages its new corporation.
	require.Equal(t, 200, e.do("POST", "/banking/v2/person/recover-password", "", map[string]any{"password": "founder-pw", "token": inv}).status)
	tok := e.do("POST", "/banking/v2/person/signin", "", map[string]any{"email": "founder@new.test", "password": "founder-pw", "fp_client_data": fp()})
	require.Equal(t, 200, tok.status)
	r = e.do("GET", "/banking/v2/corporations/current", tok.body["token"].(string), nil)
	require.Equal(t, id, r.body["id"])
	require.Equal(t, false, r.body["is_onboarded"])
	require.Nil(t, r.body["onboarded_at"])
	require.Equal(t, "Riga", r.body["city"])
}

func TestFeedback(t *testing.T) {
	e := newEnv(t)
	good := map[string]any{"name": "Ann", "email": "a@x.test", "subject": "Hi", "feedback": "Nice", "recaptcha": bankingsim.CaptchaTestToken}
	r := e.do("POST", "/banking/v2/feedback", "", with(good, "recaptcha", "no"))
	require.Equal(t, 400, r.status)
	require.True(t, r.hasErr("recaptcha", 10001))
	r = e.do("POST", "/banking/v2/feedback", "", with(good, "recaptcha", nil, "captcha", "no"))
	require.True(t, r.hasErr("captcha", 10001))
	r = e.do("POST", "/banking/v2/feedback", "", with(good, "subject", nil))
	require.True(t, r.hasErr("subject", 10002))
	r = e.do("POST", "/banking/v2/feedback", "", with(good, "password", "ignored"))
	require.Equal(t, 200, r.status)
	require.Equal(t, map[string]any{}, r.body)
	fb := e.list("/_sandbox/feedback")
	require.Len(t, fb, 1)
	require.Equal(t, "Nice", fb[0]["feedback"])
	require.NotContains(t, fb[0], "password")
}

func TestAPIKeys(t *testing.T) {
	e := newEnv(t)
	path := "/banking/v2/corporations/" + bankingsim.DemoCorporationID + "/api-keys"
	anna := e.signInPerson(bankingsim.AnnaEmail)
	require.Equal(t, 403, e.do("GET", path, anna, nil).status, "staff only")
	require.Equal(t, 403, e.do("POST", path, e.signInAPI(bankingsim.DemoAPIKey), map[string]any{"name": "x"}).status)

	staff := e.signInStaff()
	call := func(method, p string, b any) resp {
		r := e.do(method, p, staff, b)
		staff = r.header.Get("x-access-token")
		return r
	}
	r := call("POST", path, map[string]any{})
	require.True(t, r.hasErr("name", 10002))
	r = call("POST", path, map[string]any{"name": "integration"})
	require.Equal(t, 200, r.status)
	require.Equal(t, true, r.body["is_active"])
	require.Equal(t, "integration", r.body["name"])
	key := r.body["private_key"].(string)
	id := r.body["id"].(string)
	require.NotEmpty(t, key)

	r = call("GET", path, nil)
	require.Equal(t, 200, r.status)
	require.Equal(t, []any{
		map[string]any{"id": bankingsim.DemoAPIKeyID, "name": "demo"},
		map[string]any{"id": id, "name": "integration"},
	}, r.body["api_keys"], "the private key is never shown again")
	require.NotContains(t, string(r.raw), key)

	apiTok := e.signInAPI(key)
	r = e.do("GET", "/banking/v2/corporations/current", apiTok, nil)
	require.Equal(t, bankingsim.DemoCorporationID, r.body["id"])
	apiTok = r.header.Get("x-access-token")

	r = call("DELETE", path+"/"+id, nil)
	require.Equal(t, 200, r.status)
	require.Equal(t, map[string]any{"removed": true}, r.body)
	require.Equal(t, 404, call("DELETE", path+"/"+id, nil).status)
	require.Equal(t, 401, e.do("POST", "/banking/v2/api/signin", "", map[string]any{"apiKey": key}).status)
	require.Equal(t, 401, e.do("GET", "/banking/v2/corporations/current", apiTok, nil).status, "tokens of a deleted key stop working")

	// A key of another corporation is not found under this one.
	r = call("DELETE", "/banking/v2/corporations/"+bankingsim.SecondCorporationID+"/api-keys/"+bankingsim.DemoAPIKeyID, nil)
	require.Equal(t, 404, r.status)
}
