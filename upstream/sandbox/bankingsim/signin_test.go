package bankingsim_test

import (
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

func TestVersionRefusal(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		path string
		code int
		msg  string
	}{
		{"/banking/v1/persons/me", 21001, "this API version is no longer supported"},
		{"/banking/v0/staff/signin", 21001, "this API version is no longer supported"},
		{"/banking/v1", 21001, "this API version is no longer supported"},
		{"/banking/v9/persons/me", 21002, "this API version is not supported"},
		{"/banking/vX/persons", 21002, "this API version is not supported"},
		{"/banking/v4/person/signin", 21002, "this API version is not supported"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r := e.do("POST", tc.path, "", map[string]any{})
			require.Equal(t, 400, r.status)
			require.Equal(t, map[string]any{"field": "", "message": tc.msg, "code": float64(tc.code)}, r.err0())
		})
	}
	// v2 and v3 both serve the routes.
	for _, v := range []string{"v2", "v3"} {
		r := e.do("POST", "/banking/"+v+"/api/signin", "", map[string]any{"apiKey": bankingsim.DemoAPIKey})
		require.Equal(t, 200, r.status, v)
	}
	r := e.do("GET", "/banking/v2/nope", "", nil)
	require.Equal(t, 404, r.status)
}

func TestPersonSignInWithoutTwoFactor(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/banking/v2/person/signin", "", map[string]any{"email": bankingsim.AnnaEmail, "password": bankingsim.DemoPassword, "fp_client_data": fp()})
	require.Equal(t, 200, r.status)
	require.NotEmpty(t, r.body["token"])
	require.Equal(t, r.body["token"], r.header.Get("x-access-token"))
	require.Regexp(t, `^[\w-]+\.[\w-]+\.[\w-]+$`, r.body["token"], "a JWT")

	t.Run("fingerprint missing", func(t *testing.T) {
		r := e.do("POST", "/banking/v2/person/signin", "", map[string]any{"email": bankingsim.AnnaEmail, "password": bankingsim.DemoPassword})
		require.Equal(t, 400, r.status)
		require.True(t, r.hasErr("fp_client_data.identifiers.id_fingerprint", 10002), string(r.raw))
	})
	t.Run("fingerprint not a number", func(t *testing.T) {
		r := e.do("POST", "/banking/v2/person/signin", "", map[string]any{"email": bankingsim.AnnaEmail, "password": bankingsim.DemoPassword,
			"fp_client_data": map[string]any{"identifiers": map[string]any{"id_fingerprint": "abc"}}})
		require.Equal(t, 400, r.status)
		require.True(t, r.hasErr("fp_client_data.identifiers.id_fingerprint", 10001), string(r.raw))
	})
	t.Run("wrong password", func(t *testing.T) {
		r := e.do("POST", "/banking/v2/person/signin", "", map[string]any{"email": bankingsim.AnnaEmail, "password": "nope-nope", "fp_client_data": fp()})
		require.Equal(t, 401, r.status)
		require.Equal(t, "password", r.err0()["field"])
		require.Empty(t, r.header.Get("x-access-token"))
	})
	t.Run("unknown e-mail looks the same", func(t *testing.T) {
		r := e.do("POST", "/banking/v2/person/signin", "", map[string]any{"email": "who@demo.test", "password": "nope-nope", "fp_client_data": fp()})
		require.Equal(t, 401, r.status)
		require.Equal(t, "password", r.err0()["field"])
	})
	t.Run("missing password", func(t *testing.T) {
		r := e.do("POST", "/banking/v2/person/signin", "", map[string]any{"email": bankingsim.AnnaEmail, "fp_client_data": fp()})
		require.Equal(t, 400, r.status)
		require.True(t, r.hasErr("password", 10002))
	})
}

// signInCase describes one principal with two-factor.
type signInCase struct {
	name, path, phone string
	body              func() map[string]any
}

func tfaCases() []signInCase {
	return []signInCase{
		{"staff", "/staff/signin", bankingsim.StaffPhone, func() map[string]any {
			return map[string]any{"email": bankingsim.StaffEmail, "password": bankingsim.DemoPassword}
		}},
		{"person", "/person/signin", bankingsim.TFAPhone, func() map[string]any {
			return map[string]any{"email": bankingsim.TFAEmail, "password": bankingsim.DemoPassword, "fp_client_data": fp()}
		}},
		{"introducer", "/introducer/signin", bankingsim.IntroducerPhone, func() map[string]any {
			return map[string]any{"email": bankingsim.IntroducerEmail, "password": bankingsim.DemoPassword}
		}},
	}
}

func TestTwoFactorV2Shape(t *testing.T) {
	for _, tc := range tfaCases() {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			r := e.do("POST", "/banking/v2"+tc.path, "", tc.body())
			require.Equal(t, 200, r.status, string(r.raw))
			require.Equal(t, map[string]any{"truncated_phone_number": tc.phone[:5] + "*****" + tc.phone[10:], "two_fa_code": ""}, r.body)
			require.Empty(t, r.header.Get("x-access-token"))
			code := e.lastCode("sms", tc.phone)
			require.Regexp(t, `^\d{6}$`, code)

			b := tc.body()
			b["two_fa_code"] = code
			r = e.do("POST", "/banking/v2"+tc.path, "", b)
			require.Equal(t, 200, r.status, string(r.raw))
			require.NotEmpty(t, r.body["token"])
			require.Equal(t, r.body["token"], r.header.Get("x-access-token"))

			// A code works once.
			r = e.do("POST", "/banking/v2"+tc.path, "", b)
			require.Equal(t, 400, r.status)
			require.Equal(t, "code", r.err0()["field"])
		})
	}
}

func TestTwoFactorV3ChallengeShape(t *testing.T) {
	for _, tc := range tfaCases() {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			r := e.do("POST", "/banking/v3"+tc.path, "", tc.body())
			require.Equal(t, 200, r.status, string(r.raw))
			tf := r.body["challenge"].(map[string]any)["two_fa"].(map[string]any)
			require.Equal(t, tc.phone[:5]+"*****"+tc.phone[10:], tf["truncated_phone_number"])
			require.Equal(t, float64(300), tf["code_expiration_sec"])
			require.Equal(t, float64(e.clock.Now().Unix()), tf["code_issued_timestamp"])
			id, _ := tf["challenge_id"].(string)
			require.NotEmpty(t, id)
			code := e.lastCode("sms", tc.phone)

			// A wrong challenge id is refused.
			b := tc.body()
			b["challenge"] = map[string]any{"two_fa": map[string]any{"challenge_id": "other", "two_fa_code": code}}
			r = e.do("POST", "/banking/v3"+tc.path, "", b)
			require.Equal(t, 400, r.status)
			require.True(t, r.hasErr("code", 10001))

			b["challenge"] = map[string]any{"two_fa": map[string]any{"challenge_id": id, "two_fa_code": code}}
			r = e.do("POST", "/banking/v3"+tc.path, "", b)
			require.Equal(t, 200, r.status, string(r.raw))
			require.Equal(t, r.body["token"], r.header.Get("x-access-token"))
		})
	}
}

// TestAttemptRules follows Authentication rule 3 try by try.
func TestAttemptRules(t *testing.T) {
	const inv, exp = "invalid code/10001", "code expired/10003"
	for _, tc := range []struct {
		c    signInCase
		want []string // answers to wrong codes 1..n
	}{
		{tfaCases()[1], []string{inv, inv, exp, inv, inv}},
		{tfaCases()[0], []string{inv, inv, exp, inv, inv}},
		{tfaCases()[2], []string{inv, inv, inv, inv, exp, exp}},
	} {
		t.Run(tc.c.name, func(t *testing.T) {
			e := newEnv(t)
			r := e.do("POST", "/banking/v2"+tc.c.path, "", tc.c.body())
			require.Equal(t, 200, r.status)
			code := e.lastCode("sms", tc.c.phone)
			wrong := "000000"
			if code == wrong {
				wrong = "111111"
			}
			b := tc.c.body()
			b["two_fa_code"] = wrong
			for i, want := range tc.want {
				r := e.do("POST", "/banking/v2"+tc.c.path, "", b)
				require.Equal(t, 400, r.status)
				got := r.err0()
				require.Equal(t, "code", got["field"])
				require.Equal(t, want, got["message"].(string)+"/"+itoaF(got["code"]), "try %d", i+1)
			}
			// After the expired message the real code is dead too.
			b["two_fa_code"] = code
			r = e.do("POST", "/banking/v2"+tc.c.path, "", b)
			require.Equal(t, 400, r.status)

			// A new first call issues a new code and resets the count.
			r = e.do("POST", "/banking/v2"+tc.c.path, "", tc.c.body())
			require.Equal(t, 200, r.status)
			b["two_fa_code"] = wrong
			r = e.do("POST", "/banking/v2"+tc.c.path, "", b)
			require.Equal(t, "invalid code", r.err0()["message"])
			b["two_fa_code"] = e.lastCode("sms", tc.c.phone)
			r = e.do("POST", "/banking/v2"+tc.c.path, "", b)
			require.Equal(t, 200, r.status, string(r.raw))
		})
	}
}

func itoaF(v any) string {
	f, _ := v.(float64)
	return strconv.Itoa(int(f))
}

func TestCodeExpiresAfter300Seconds(t *testing.T) {
	e := newEnv(t)
	c := tfaCases()[1]
	require.Equal(t, 200, e.do("POST", "/banking/v2"+c.path, "", c.body()).status)
	b := c.body()
	b["two_fa_code"] = e.lastCode("sms", c.phone)
	e.clock.Add(301 * time.Second)
	r := e.do("POST", "/banking/v2"+c.path, "", b)
	require.Equal(t, 400, r.status)
	require.True(t, r.hasErr("code", 10003), string(r.raw))
}

func TestTokenRotationAndGrace(t *testing.T) {
	e := newEnv(t)
	t1 := e.signInPerson(bankingsim.AnnaEmail)

	r := e.do("GET", "/banking/v2/persons/me", t1, nil)
	require.Equal(t, 200, r.status)
	t2 := r.header.Get("x-access-token")
	require.NotEmpty(t, t2)
	require.NotEqual(t, t1, t2)

	// The superseded token works within the grace period.
	e.clock.Add(5 * time.Second)
	r = e.do("GET", "/banking/v2/persons/me", t1, nil)
	require.Equal(t, 200, r.status)
	require.NotEmpty(t, r.header.Get("x-access-token"))

	// After it, only the newest works.
	e.clock.Add(6 * time.Second)
	r = e.do("GET", "/banking/v2/persons/me", t1, nil)
	require.Equal(t, 401, r.status)
	require.Empty(t, r.header.Get("x-access-token"))
	r = e.do("GET", "/banking/v2/persons/me", t2, nil) // superseded 6 s ago, when t1 was used
	require.Equal(t, 200, r.status, "t2 was superseded 6 s ago, inside the grace")
	t4 := r.header.Get("x-access-token")

	// Error answers to authenticated requests carry a fresh token too.
	r = e.do("GET", "/banking/v2/persons/00000000-0000-4000-8000-000000000000", t4, nil)
	require.Equal(t, 404, r.status)
	t5 := r.header.Get("x-access-token")
	require.NotEmpty(t, t5)

	// The newest token lasts an hour.
	e.clock.Add(59 * time.Minute)
	r = e.do("GET", "/banking/v2/persons/me", t5, nil)
	require.Equal(t, 200, r.status)
	t6 := r.header.Get("x-access-token")
	e.clock.Add(61 * time.Minute)
	require.Equal(t, 401, e.do("GET", "/banking/v2/persons/me", t6, nil).status)

	for _, bad := range []string{"", "garbage", t1 + "x"} {
		r := e.do("GET", "/banking/v2/persons/me", bad, nil)
		require.Equal(t, 401, r.status)
	}
}

func TestTokenGraceRealClock(t *testing.T) {
	sim := bankingsim.New(bankingsim.Options{TokenGrace: 50 * time.Millisecond})
	sim.Seed()
	srv := httptest.NewServer(sandboxRouter(sim))
	defer srv.Close()
	e := &env{t: t, srv: srv}
	t1 := e.signInAPI(bankingsim.DemoAPIKey)
	r := e.do("GET", "/banking/v2/corporations/current", t1, nil)
	require.Equal(t, 200, r.status)
	t2 := r.header.Get("x-access-token")
	time.Sleep(80 * time.Millisecond)
	require.Equal(t, 401, e.do("GET", "/banking/v2/corporations/current", t1, nil).status)
	require.Equal(t, 200, e.do("GET", "/banking/v2/corporations/current", t2, nil).status)
}

func TestAPISignIn(t *testing.T) {
	e := newEnv(t)
	tok := e.signInAPI(bankingsim.DemoAPIKey)
	r := e.do("GET", "/banking/v2/corporations/current", tok, nil)
	require.Equal(t, 200, r.status)
	require.Equal(t, bankingsim.DemoCorporationID, r.body["id"])

	r = e.do("POST", "/banking/v2/api/signin", "", map[string]any{"apiKey": "wrong"})
	require.Equal(t, 401, r.status)
	r = e.do("POST", "/banking/v2/api/signin", "", map[string]any{})
	require.Equal(t, 400, r.status)
	require.True(t, r.hasErr("apiKey", 10002))
}

func TestForgotAndRecoverPassword(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/banking/v2/person/forgot-password", "", map[string]any{"email": "nobody@demo.test"})
	require.Equal(t, 200, r.status)
	require.Equal(t, map[string]any{}, r.body)
	require.Empty(t, e.list("/_sandbox/email"))

	r = e.do("POST", "/banking/v2/person/forgot-password", "", map[string]any{"email": bankingsim.AnnaEmail})
	require.Equal(t, 200, r.status)
	require.Equal(t, map[string]any{}, r.body)
	tok := e.lastCode("email", bankingsim.AnnaEmail)
	require.NotEmpty(t, tok)

	r = e.do("POST", "/banking/v2/person/recover-password", "", map[string]any{"password": "new-password-1", "token": "nope"})
	require.Equal(t, 400, r.status)
	require.True(t, r.hasErr("token", 10001))

	r = e.do("POST", "/banking/v2/person/recover-password", "", map[string]any{"password": "new-password-1", "token": tok})
	require.Equal(t, 200, r.status)
	require.Equal(t, map[string]any{}, r.body)
	r = e.do("POST", "/banking/v2/person/recover-password", "", map[string]any{"password": "new-password-2", "token": tok})
	require.Equal(t, 400, r.status, "single use")
	require.True(t, r.hasErr("token", 10001))

	r = e.do("POST", "/banking/v2/person/signin", "", map[string]any{"email": bankingsim.AnnaEmail, "password": bankingsim.DemoPassword, "fp_client_data": fp()})
	require.Equal(t, 401, r.status)
	r = e.do("POST", "/banking/v2/person/signin", "", map[string]any{"email": bankingsim.AnnaEmail, "password": "new-password-1", "fp_client_data": fp()})
	require.Equal(t, 200, r.status)
}

func TestMountedByRootSandbox(t *testing.T) {
	sb := sandbox.New(sandbox.Config{})
	sb.Seed()
	defer sb.Close()
	srv := httptest.NewServer(sb)
	defer srv.Close()
	e := &env{t: t, srv: srv}
	r := e.do("POST", "/banking/v3/staff/signin", "", map[string]any{"email": bankingsim.StaffEmail, "password": bankingsim.DemoPassword})
	require.Equal(t, 200, r.status)
	require.NotEmpty(t, e.lastCode("sms", bankingsim.StaffPhone))
	require.Equal(t, 400, e.do("GET", "/banking/v1/persons", "", nil).status)
}
