package banking

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twoFactorUpstream answers sign-in like the spec: without a code it sends
// the SMS and a challenge, with the right code a token.
func twoFactorUpstream(v3 bool) func(w http.ResponseWriter, s seen) {
	return func(w http.ResponseWriter, s seen) {
		code, _ := s.Body["two_fa_code"].(string)
		challengeID := ""
		if ch, ok := s.Body["challenge"].(map[string]any); ok {
			tf := ch["two_fa"].(map[string]any)
			code, _ = tf["two_fa_code"].(string)
			challengeID, _ = tf["challenge_id"].(string)
		}
		switch {
		case code == "":
			if v3 {
				writeJSON(w, 200, map[string]any{"challenge": map[string]any{"two_fa": map[string]any{
					"challenge_id": "ch-42", "code_issued_timestamp": 1700000000, "code_expiration_sec": 300,
					"truncated_phone_number": "+45*****12"}}})
				return
			}
			writeJSON(w, 200, map[string]any{"truncated_phone_number": "+45*****12", "two_fa_code": "123456"})
		case code == "123456" && (!v3 || challengeID == "ch-42"):
			w.Header().Set(HeaderAccessToken, "jwt-final")
			writeJSON(w, 200, map[string]any{"token": "jwt-final"})
		default:
			writeJSON(w, 400, errBody("code", "invalid code", CodeInvalidValue))
		}
	}
}

func TestSignInTwoFactorV2(t *testing.T) {
	f, c := newFake(t, twoFactorUpstream(false))
	store := NewTokenStore("")
	ctx := WithTokenSource(t.Context(), store)
	in := SignInRequest{Email: "staff@demo.test", Password: "demo-password"}

	res, err := c.Auth.SignInStaff(ctx, in)
	require.NoError(t, err)
	require.NotNil(t, res.TwoFactor)
	assert.Empty(t, res.Token)
	assert.Equal(t, &TwoFactor{TruncatedPhone: "+45*****12"}, res.TwoFactor, "the echoed code is not kept")
	first := f.last(t)
	assert.Equal(t, "/banking/v2/staff/signin", first.Path)
	assert.Equal(t, map[string]any{"email": "staff@demo.test", "password": "demo-password"}, first.Body)

	in.TwoFactorCode = "123456"
	res, err = c.Auth.SignInStaff(ctx, in)
	require.NoError(t, err)
	assert.Nil(t, res.TwoFactor)
	assert.Equal(t, "jwt-final", res.Token.Reveal())
	assert.Equal(t, map[string]any{"email": "staff@demo.test", "password": "demo-password", "two_fa_code": "123456"}, f.last(t).Body)
	tok, _ := store.Token(ctx)
	assert.Equal(t, "jwt-final", tok, "sign-in fills the caller's token holder")

	in.TwoFactorCode = "000000"
	_, err = c.Auth.SignInStaff(ctx, in)
	require.True(t, IsValidation(err))
}

func TestSignInTwoFactorV3(t *testing.T) {
	f, c := newFake(t, twoFactorUpstream(true), WithVersion("v3"))
	in := SignInRequest{Email: "intro@demo.test", Password: "demo-password"}
	res, err := c.Auth.SignInIntroducer(t.Context(), in)
	require.NoError(t, err)
	require.NotNil(t, res.TwoFactor)
	assert.Equal(t, "/banking/v3/introducer/signin", f.last(t).Path)
	tf := res.TwoFactor
	assert.Equal(t, "ch-42", tf.ChallengeID)
	assert.Equal(t, "+45*****12", tf.TruncatedPhone)
	assert.Equal(t, time.Unix(1700000000, 0).UTC(), tf.IssuedAt)
	assert.Equal(t, 5*time.Minute, tf.ExpiresIn)
	assert.Equal(t, time.Unix(1700000300, 0).UTC(), tf.ExpiresAt())

	in.TwoFactorCode, in.ChallengeID = "123456", tf.ChallengeID
	res, err = c.Auth.SignInIntroducer(t.Context(), in)
	require.NoError(t, err)
	assert.Equal(t, "jwt-final", res.Token.Reveal())
	assert.Equal(t, map[string]any{
		"email": "intro@demo.test", "password": "demo-password",
		"challenge": map[string]any{"two_fa": map[string]any{"challenge_id": "ch-42", "two_fa_code": "123456"}},
	}, f.last(t).Body, "v3 repeats all fields plus challenge.two_fa, without a top-level two_fa_code")
}

func TestSignInPersonSendsFingerprint(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) { writeJSON(w, 200, map[string]any{"token": "jwt-p"}) })
	res, err := c.Auth.SignInPerson(t.Context(), SignInRequest{Email: "anna@demo.test", Password: "pw", Fingerprint: 9007199254740})
	require.NoError(t, err)
	assert.Equal(t, "jwt-p", res.Token.Reveal())
	got := f.last(t)
	assert.Equal(t, "/banking/v2/person/signin", got.Path)
	assert.JSONEq(t, `{"email":"anna@demo.test","password":"pw","fp_client_data":{"identifiers":{"id_fingerprint":9007199254740}}}`, string(got.Raw))
}

func TestSignInAPIKey(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) {
		if s.Body["apiKey"] != "demo-api-key" {
			writeJSON(w, 401, errBody("apiKey", "unknown key", CodeInvalidValue))
			return
		}
		writeJSON(w, 200, map[string]any{"token": "jwt-api"})
	})
	res, err := c.Auth.SignInAPIKey(t.Context(), "demo-api-key")
	require.NoError(t, err)
	assert.Equal(t, "jwt-api", res.Token.Reveal())
	assert.Equal(t, "/banking/v2/api/signin", f.last(t).Path)
	_, err = c.Auth.SignInAPIKey(t.Context(), "wrong")
	assert.True(t, IsUnauthorized(err))
}

func TestSignInWithoutOutcomeIsAnError(t *testing.T) {
	_, c := newFake(t, func(w http.ResponseWriter, s seen) { writeJSON(w, 200, map[string]any{"ok": true}) })
	_, err := c.Auth.SignInStaff(t.Context(), SignInRequest{Email: "a", Password: "b"})
	assert.ErrorIs(t, err, errNoSignInOutcome)
}

func TestPasswordRecovery(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) { writeJSON(w, 200, map[string]any{}) })
	err := c.Auth.ForgotPassword(t.Context(), "anna@demo.test")
	require.NoError(t, err)
	got := f.last(t)
	assert.Equal(t, "POST /banking/v2/person/forgot-password", got.Method+" "+got.Path)
	assert.Equal(t, map[string]any{"email": "anna@demo.test"}, got.Body)

	err = c.Auth.RecoverPassword(t.Context(), "link-token", "new-pass")
	require.NoError(t, err)
	got = f.last(t)
	assert.Equal(t, "POST /banking/v2/person/recover-password", got.Method+" "+got.Path)
	assert.Equal(t, map[string]any{"password": "new-pass", "token": "link-token"}, got.Body)
}
