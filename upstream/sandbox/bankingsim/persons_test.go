package bankingsim_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

func validPerson() map[string]any {
	return map[string]any{"first_name": "Liga", "last_name": "Ozola", "email": "liga@demo.test", "gender": "female"}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		k := kv[i].(string)
		if kv[i+1] == nil {
			delete(out, k)
		} else {
			out[k] = kv[i+1]
		}
	}
	return out
}

func TestCreatePersonRules(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		field  string
		code   int
	}{
		{"valid", validPerson(), 200, "", 0},
		{"first_name required", with(validPerson(), "first_name", nil), 400, "first_name", 10002},
		{"last_name required", with(validPerson(), "last_name", ""), 400, "last_name", 10002},
		{"first_name max 100", with(validPerson(), "first_name", long(101)), 400, "first_name", 10001},
		{"first_name 100 ok", with(validPerson(), "first_name", long(100)), 200, "", 0},
		{"last_name max 100", with(validPerson(), "last_name", long(101)), 400, "last_name", 10001},
		{"email required", with(validPerson(), "email", nil), 400, "email", 10002},
		{"email format", with(validPerson(), "email", "not-an-email"), 400, "email", 10001},
		{"email optional for UBO only", with(validPerson(), "email", nil, "is_ubo", true), 200, "", 0},
		{"UBO director needs email", with(validPerson(), "email", nil, "is_ubo", true, "is_director", true), 400, "email", 10002},
		{"UBO with roles needs email", with(validPerson(), "email", nil, "is_ubo", true, "roles", []string{"r1"}), 400, "email", 10002},
		{"duplicate email", with(validPerson(), "email", "DACE@demo.test"), 409, "email", 10001},
		{"UBO-only duplicate email not checked", with(validPerson(), "email", "dace@demo.test", "is_ubo", true), 200, "", 0},
		{"gender required", with(validPerson(), "gender", nil), 400, "gender", 10002},
		{"gender enum", with(validPerson(), "gender", "other"), 400, "gender", 10001},
		{"date_of_birth format", with(validPerson(), "date_of_birth", "01.02.1990"), 400, "date_of_birth", 10001},
		{"date_of_birth ok", with(validPerson(), "date_of_birth", "1990-02-01"), 200, "", 0},
		{"country two letters", with(validPerson(), "country", "LVA"), 400, "country", 10001},
		{"nationality two letters", with(validPerson(), "nationality", "l"), 400, "nationality", 10001},
		{"street max 64", with(validPerson(), "street", long(65)), 400, "street", 10001},
		{"city max 64", with(validPerson(), "city", long(65)), 400, "city", 10001},
		{"city 64 ok", with(validPerson(), "city", long(64)), 200, "", 0},
		{"region max 100", with(validPerson(), "region", long(101)), 400, "region", 10001},
		{"post_code max 10", with(validPerson(), "post_code", long(11)), 400, "post_code", 10001},
		{"ssn max 100", with(validPerson(), "social_security_number", long(101)), 400, "social_security_number", 10001},
		{"type not allowed here", with(validPerson(), "type", "consumer"), 400, "type", 10001},
		{"type unknown", with(validPerson(), "type", "robot"), 400, "type", 10001},
		{"first_name wrong type", with(validPerson(), "first_name", 7), 400, "first_name", 10001},
		{"unknown field", with(validPerson(), "favourite_colour", "red"), 400, "favourite_colour", 10001},
		{"account_id ignored for persons", with(validPerson(), "account_id", bankingsim.SecondAccountID), 200, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tok := e.signInPerson(bankingsim.AnnaEmail)
			r := e.do("POST", "/banking/v2/persons", tok, tc.body)
			require.Equal(t, tc.status, r.status, string(r.raw))
			if tc.status != 200 {
				require.True(t, r.hasErr(tc.field, tc.code), string(r.raw))
				return
			}
			require.NotEmpty(t, r.body["id"])
			require.Equal(t, "employee", r.body["type"])
			require.Equal(t, bankingsim.DemoAccountID, r.body["account"].(map[string]any)["id"], "created in anna's corporation")
			require.NotContains(t, r.body, "is_2_fa_enabled", "staff-only field hidden from persons")
		})
	}
}

func TestCreatePersonTypesAndInvitations(t *testing.T) {
	e := newEnv(t)
	ben := e.signInPerson(bankingsim.BenEmail) // Second Ventures allows employee and consumer

	r := e.do("POST", "/banking/v2/persons", ben, with(validPerson(), "email", "c1@second.test"))
	require.Equal(t, 400, r.status)
	require.True(t, r.hasErr("type", 10002), "type required when several types are allowed")

	r = e.do("POST", "/banking/v2/persons", ben, with(validPerson(), "email", "c1@second.test", "type", "consumer", "is_director", true, "is_ubo", true, "roles", []string{"x"}))
	require.Equal(t, 200, r.status, string(r.raw))
	require.Equal(t, "consumer", r.body["type"])
	require.Equal(t, false, r.body["is_director"], "ignored for consumers")
	require.Equal(t, false, r.body["is_ubo"])
	require.Equal(t, []any{}, r.body["roles"])
	for _, m := range e.list("/_sandbox/email") {
		require.NotEqual(t, "c1@second.test", m["to"], "consumers get no invitation")
	}

	r = e.do("POST", "/banking/v2/persons", ben, with(validPerson(), "email", "e1@second.test", "type", "employee"))
	require.Equal(t, 200, r.status)
	inv := e.lastCode("email", "e1@second.test")
	require.NotEmpty(t, inv, "employees are invited")
	require.Equal(t, false, r.body["is_invitation_accepted"])

	// The invitation code sets the first password.
	r = e.do("POST", "/banking/v2/person/recover-password", "", map[string]any{"password": "first-password", "token": inv})
	require.Equal(t, 200, r.status)
	tok := e.do("POST", "/banking/v2/person/signin", "", map[string]any{"email": "e1@second.test", "password": "first-password", "fp_client_data": fp()})
	require.Equal(t, 200, tok.status)
}

func TestCreatePersonPrincipals(t *testing.T) {
	e := newEnv(t)
	staff := e.signInStaff()

	r := e.do("POST", "/banking/v2/persons", staff, validPerson())
	require.Equal(t, 400, r.status)
	require.True(t, r.hasErr("account_id", 10002), "account_id required for staff")

	r = e.do("POST", "/banking/v2/persons", staff, with(validPerson(), "account_id", "nope"))
	require.Equal(t, 400, r.status)
	require.True(t, r.hasErr("account_id", 10001))

	r = e.do("POST", "/banking/v2/persons", staff, with(validPerson(), "account_id", bankingsim.SecondAccountID, "type", "employee"))
	require.Equal(t, 200, r.status, string(r.raw))
	require.Equal(t, bankingsim.SecondCorporationID, r.body["account"].(map[string]any)["corporation_id"])
	require.Equal(t, "staff", r.body["created_by"].(map[string]any)["type"])
	require.Equal(t, false, r.body["is_2_fa_enabled"], "staff see the staff-only field")

	// A person without persons_management.write cannot create.
	dace := e.signInPerson("dace@demo.test")
	r = e.do("POST", "/banking/v2/persons", dace, with(validPerson(), "email", "x@demo.test"))
	require.Equal(t, 403, r.status)

	// API clients act within their corporation.
	api := e.signInAPI(bankingsim.DemoAPIKey)
	r = e.do("POST", "/banking/v2/persons", api, with(validPerson(), "email", "y@demo.test"))
	require.Equal(t, 200, r.status)
	require.Equal(t, bankingsim.DemoCorporationID, r.body["account"].(map[string]any)["corporation_id"])
}

func TestUpdatePersonStaffOnlyFields(t *testing.T) {
	e := newEnv(t)
	anna := e.signInPerson(bankingsim.AnnaEmail)
	path := "/banking/v2/persons/" + bankingsim.DaceID
	for _, f := range []struct {
		field string
		value any
	}{{"is_2_fa_enabled", true}, {"email", "new@demo.test"}, {"phone", "+37129999999"}} {
		r := e.do("PUT", path, anna, map[string]any{f.field: f.value})
		require.Equal(t, 403, r.status, f.field)
		require.Equal(t, f.field, r.err0()["field"])
		require.NotEmpty(t, r.header.Get("x-access-token"))
		anna = r.header.Get("x-access-token")
	}
	r := e.do("PUT", path, anna, map[string]any{"current_password": "x"})
	require.Equal(t, 403, r.status, "a person cannot change someone else's password")

	r = e.do("PUT", path, anna, map[string]any{"city": "Jelgava", "ownership": 40, "position": "CFO"})
	require.Equal(t, 200, r.status, string(r.raw))
	require.Equal(t, "Jelgava", r.body["city"])
	require.Equal(t, float64(40), r.body["ownership"])
	require.Equal(t, "Dace", r.body["first_name"], "absent fields stay unchanged")

	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"ownership": 101}, "ownership"},
		{map[string]any{"city": strings.Repeat("c", 65)}, "city"},
		{map[string]any{"gender": "x"}, "gender"},
		{map[string]any{"first_name": ""}, "first_name"},
	} {
		r := e.do("PUT", path, anna, tc.body)
		require.Equal(t, 400, r.status)
		require.True(t, r.hasErr(tc.field, 10001), string(r.raw))
	}

	staff := e.signInStaff()
	r = e.do("PUT", path, staff, map[string]any{"email": "dace.new@demo.test", "phone": "+37129999999", "is_2_fa_enabled": true})
	require.Equal(t, 200, r.status, string(r.raw))
	require.Equal(t, "dace.new@demo.test", r.body["email"])
	require.Equal(t, true, r.body["is_2_fa_enabled"])
	r = e.do("PUT", path, staff, map[string]any{"email": bankingsim.AnnaEmail})
	require.Equal(t, 409, r.status)
	require.True(t, r.hasErr("email", 10001))
	r = e.do("PUT", path, staff, map[string]any{"current_password": "x"})
	require.Equal(t, 403, r.status, "current_password is for persons only")

	// Dace now signs in with two-factor on the new phone.
	r = e.do("POST", "/banking/v2/person/signin", "", map[string]any{"email": "dace.new@demo.test", "password": bankingsim.DemoPassword, "fp_client_data": fp()})
	require.Equal(t, 200, r.status)
	require.Equal(t, "+3712*****99", r.body["truncated_phone_number"])
}

func TestBlockAndRestore(t *testing.T) {
	e := newEnv(t)
	anna := e.signInPerson(bankingsim.AnnaEmail)
	dace := e.signInPerson("dace@demo.test")

	r := e.do("DELETE", "/banking/v2/persons/"+bankingsim.DaceID, dace, nil)
	require.Equal(t, 403, r.status, "dace cannot manage persons")

	r = e.do("DELETE", "/banking/v2/persons/"+bankingsim.DaceID, anna, nil)
	require.Equal(t, 200, r.status)
	require.Equal(t, map[string]any{"id": bankingsim.DaceID}, r.body)
	anna = r.header.Get("x-access-token")

	r = e.do("GET", "/banking/v2/persons/"+bankingsim.DaceID, anna, nil)
	require.Equal(t, true, r.body["is_blocked"])
	require.NotNil(t, r.body["deleted_at"])
	anna = r.header.Get("x-access-token")

	require.Equal(t, 401, e.do("GET", "/banking/v2/persons/me", dace, nil).status, "a blocked person's token stops working")
	r = e.do("POST", "/banking/v2/person/signin", "", map[string]any{"email": "dace@demo.test", "password": bankingsim.DemoPassword, "fp_client_data": fp()})
	require.Equal(t, 403, r.status)

	r = e.do("PUT", "/banking/v2/persons/"+bankingsim.DaceID+"/restore", anna, nil)
	require.Equal(t, 200, r.status)
	require.Equal(t, map[string]any{"id": bankingsim.DaceID}, r.body)
	anna = r.header.Get("x-access-token")
	r = e.do("GET", "/banking/v2/persons/"+bankingsim.DaceID, anna, nil)
	require.Equal(t, false, r.body["is_blocked"])
	require.Nil(t, r.body["deleted_at"])
	e.signInPerson("dace@demo.test")

	r = e.do("DELETE", "/banking/v2/persons/"+bankingsim.AnnaID, r.header.Get("x-access-token"), nil)
	require.Equal(t, 403, r.status, "no blocking oneself")
}

func TestListPersonsPagination(t *testing.T) {
	e := newEnv(t)
	staff := e.signInStaff()
	get := func(q string) resp {
		r := e.do("GET", "/banking/v2/persons"+q, staff, nil)
		staff = r.header.Get("x-access-token")
		return r
	}
	names := func(r resp) []string {
		var out []string
		for _, it := range r.body["list"].([]any) {
			out = append(out, it.(map[string]any)["first_name"].(string))
		}
		return out
	}
	r := get("?meta[sort_by]=first_name&meta[sort_type]=ASC&meta[limit]=3")
	require.Equal(t, 200, r.status, string(r.raw))
	require.Equal(t, []string{"Anna", "Ben", "Dace"}, names(r))
	require.Equal(t, map[string]any{"number_of_records": float64(7), "limit": float64(3), "has_more": true, "sort_by": "first_name", "sort_type": "ASC"}, r.body["meta"])

	r = get("?meta[sort_by]=first_name&meta[sort_type]=ASC&meta[limit]=3&meta[offset]=6")
	require.Equal(t, []string{"Toms"}, names(r))
	require.Equal(t, false, r.body["meta"].(map[string]any)["has_more"])

	r = get("?meta[sort_by]=first_name&meta[sort_type]=DESC&meta[limit]=2")
	require.Equal(t, []string{"Toms", "Mart"}, names(r))

	r = get("") // defaults: createdAt DESC, limit 20
	require.Equal(t, map[string]any{"number_of_records": float64(7), "limit": float64(20), "has_more": false, "sort_by": "createdAt", "sort_type": "DESC"}, r.body["meta"])
	require.Equal(t, "Mart", names(r)[0])
	item := r.body["list"].([]any)[0].(map[string]any)
	require.Contains(t, item, "screening_info")
	require.NotContains(t, item, "date_of_birth", "list items carry the subset")

	r = get("?corporation_id=" + bankingsim.SecondCorporationID)
	require.Equal(t, float64(3), r.body["meta"].(map[string]any)["number_of_records"])

	for _, q := range []string{"?meta[limit]=0", "?meta[limit]=101", "?meta[sort_type]=UP", "?meta[sort_by]=password", "?meta[offset]=-1"} {
		r := get(q)
		require.Equal(t, 400, r.status, q)
	}

	// A person sees only its corporation.
	ben := e.signInPerson(bankingsim.BenEmail)
	r = e.do("GET", "/banking/v2/persons?meta[sort_by]=first_name&meta[sort_type]=ASC", ben, nil)
	require.Equal(t, []string{"Ben", "Kati", "Mart"}, names(r))
}

func TestMeAndPermissions(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		email string
		write bool
	}{{bankingsim.AnnaEmail, true}, {"dace@demo.test", false}} {
		tok := e.signInPerson(tc.email)
		r := e.do("GET", "/banking/v2/persons/me", tok, nil)
		require.Equal(t, 200, r.status)
		require.Equal(t, tc.email, r.body["email"])
		require.Equal(t, map[string]any{"persons_management.read": true, "persons_management.write": tc.write}, r.body["permissions"])
		require.Equal(t, bankingsim.DemoCorporationID, r.body["account"].(map[string]any)["corporation_id"])
	}
	require.Equal(t, 403, e.do("GET", "/banking/v2/persons/me", e.signInStaff(), nil).status)
	require.Equal(t, 403, e.do("GET", "/banking/v2/persons/me", e.signInAPI(bankingsim.DemoAPIKey), nil).status)

	dace := e.signInPerson("dace@demo.test")
	r := e.do("PUT", "/banking/v2/persons/me", dace, map[string]any{"gender": "female", "other_phone": "+37121111111", "political_institution": "Saeima"})
	require.Equal(t, 200, r.status, string(r.raw))
	require.Equal(t, "female", r.body["gender"])
	dace = r.header.Get("x-access-token")

	r = e.do("PUT", "/banking/v2/persons/me", dace, map[string]any{"first_name": "Nope"})
	require.Equal(t, 400, r.status)
	require.True(t, r.hasErr("first_name", 10001), "not a field of the me table")
	dace = r.header.Get("x-access-token")

	r = e.do("PUT", "/banking/v2/persons/me", dace, map[string]any{"password": "brand-new-pw", "confirm_password": "brand-new-pw"})
	require.Equal(t, 400, r.status)
	require.True(t, r.hasErr("current_password", 10002))
	dace = r.header.Get("x-access-token")
	r = e.do("PUT", "/banking/v2/persons/me", dace, map[string]any{"password": "brand-new-pw", "confirm_password": "other-pw-x", "current_password": bankingsim.DemoPassword})
	require.True(t, r.hasErr("confirm_password", 10001))
	dace = r.header.Get("x-access-token")
	r = e.do("PUT", "/banking/v2/persons/me", dace, map[string]any{"password": "brand-new-pw", "confirm_password": "brand-new-pw", "current_password": bankingsim.DemoPassword})
	require.Equal(t, 200, r.status)
	r = e.do("POST", "/banking/v2/person/signin", "", map[string]any{"email": "dace@demo.test", "password": "brand-new-pw", "fp_client_data": fp()})
	require.Equal(t, 200, r.status)
}

func TestPhoneChange(t *testing.T) {
	for _, v := range []string{"v2", "v3"} {
		t.Run(v, func(t *testing.T) {
			e := newEnv(t)
			tok := e.signInPerson(bankingsim.AnnaEmail)
			put := func(b map[string]any) resp {
				r := e.do("PUT", "/banking/"+v+"/persons/me", tok, b)
				tok = r.header.Get("x-access-token")
				return r
			}
			const newPhone = "+37129876543"
			r := put(map[string]any{"phone": newPhone})
			require.True(t, r.hasErr("current_password", 10002))
			r = put(map[string]any{"phone": newPhone, "current_password": "wrong-pw-1"})
			require.True(t, r.hasErr("current_password", 10001))
			r = put(map[string]any{"phone": newPhone, "current_password": bankingsim.DemoPassword, "gender": "male"})
			require.Equal(t, 400, r.status, "a phone change goes alone")

			r = put(map[string]any{"phone": newPhone, "current_password": bankingsim.DemoPassword})
			require.Equal(t, 200, r.status, string(r.raw))
			var challengeID string
			if v == "v2" {
				require.Equal(t, map[string]any{"two_fa_code": "", "truncated_phone_number": "+3712*****43"}, r.body)
			} else {
				tf := r.body["challenge"].(map[string]any)["two_fa"].(map[string]any)
				require.Equal(t, "+3712*****43", tf["truncated_phone_number"])
				challengeID = tf["challenge_id"].(string)
			}
			code := e.lastCode("sms", newPhone)
			step2 := func(c string) map[string]any {
				if v == "v2" {
					return map[string]any{"two_fa_code": c}
				}
				return map[string]any{"challenge": map[string]any{"two_fa": map[string]any{"challenge_id": challengeID, "two_fa_code": c}}}
			}
			wrong := "000000"
			if code == wrong {
				wrong = "111111"
			}
			r = put(step2(wrong))
			require.Equal(t, 400, r.status)
			require.True(t, r.hasErr("code", 10001))
			r = put(step2(code))
			require.Equal(t, 200, r.status, string(r.raw))
			require.Equal(t, newPhone, r.body["phone"])
			r = put(step2(code))
			require.Equal(t, 400, r.status, "the code works once")
		})
	}
}

func TestIsolationBetweenCorporations(t *testing.T) {
	e := newEnv(t)
	ben := e.signInPerson(bankingsim.BenEmail)
	for _, req := range []struct{ method, path string }{
		{"GET", "/banking/v2/persons/" + bankingsim.AnnaID},
		{"PUT", "/banking/v2/persons/" + bankingsim.AnnaID},
		{"DELETE", "/banking/v2/persons/" + bankingsim.AnnaID},
		{"PUT", "/banking/v2/persons/" + bankingsim.AnnaID + "/restore"},
		{"GET", "/banking/v2/corporations/" + bankingsim.DemoCorporationID + "/settings"},
		{"GET", "/banking/v2/corporations/" + bankingsim.DemoCorporationID},
	} {
		r := e.do(req.method, req.path, ben, map[string]any{"city": "X"})
		require.Equal(t, 404, r.status, req.method+" "+req.path)
		ben = r.header.Get("x-access-token")
	}
	api := e.signInAPI(bankingsim.DemoAPIKey)
	r := e.do("GET", "/banking/v2/persons/"+bankingsim.BenID, api, nil)
	require.Equal(t, 404, r.status)
	r = e.do("GET", "/banking/v2/persons", r.header.Get("x-access-token"), nil)
	require.Equal(t, float64(4), r.body["meta"].(map[string]any)["number_of_records"])

	// Staff see both.
	staff := e.signInStaff()
	require.Equal(t, 200, e.do("GET", "/banking/v2/persons/"+bankingsim.BenID, staff, nil).status)
}
