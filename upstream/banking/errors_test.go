package banking

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckResponseParsesAndClassifies(t *testing.T) {
	type class struct{ unauth, forbidden, notFound, validation, expired, version, unavailable bool }
	for _, tc := range []struct {
		name   string
		status int
		body   string
		items  []ErrorItem
		want   class
	}{
		{"invalid value", 400, `{"errors":[{"field":"email","message":"invalid","code":10001}]}`,
			[]ErrorItem{{"email", "invalid", 10001}}, class{validation: true}},
		{"required on 422", 422, `{"errors":[{"field":"first_name","message":"required","code":10002}]}`,
			[]ErrorItem{{"first_name", "required", 10002}}, class{validation: true}},
		{"code expired", 400, `{"errors":[{"field":"code","message":"code has expired","code":10003}]}`,
			[]ErrorItem{{"code", "code has expired", 10003}}, class{validation: true, expired: true}},
		{"version", 400, `{"errors":[{"field":"","message":"no longer supported","code":21001}]}`,
			[]ErrorItem{{"", "no longer supported", 21001}}, class{version: true}},
		{"unauthorized", 401, `{"errors":[{"field":"","message":"bad token"}]}`,
			[]ErrorItem{{"", "bad token", 0}}, class{unauth: true}},
		{"forbidden", 403, `{"errors":[{"message":"staff only"}]}`,
			[]ErrorItem{{"", "staff only", 0}}, class{forbidden: true}},
		{"not found, not json", 404, `not found`, nil, class{notFound: true}},
		{"server", 503, `{"errors":[]}`, []ErrorItem{}, class{unavailable: true}},
		{"several items", 400, `{"errors":[{"field":"a","message":"m1","code":10002},{"field":"b","message":"m2","code":20002}]}`,
			[]ErrorItem{{"a", "m1", 10002}, {"b", "m2", 20002}}, class{validation: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, "http://up/banking/v2/persons?x=1", nil)
			resp := &http.Response{StatusCode: tc.status, Body: io.NopCloser(strings.NewReader(tc.body)), Header: http.Header{}, Request: req}
			err := CheckResponse(resp)
			var er *ErrorResponse
			require.ErrorAs(t, err, &er)
			assert.Equal(t, tc.status, er.StatusCode)
			assert.Equal(t, "/banking/v2/persons", er.Path)
			assert.Equal(t, tc.items, er.Errors)
			got := class{IsUnauthorized(err), IsForbidden(err), IsNotFound(err), IsValidation(err), IsCodeExpired(err), IsVersionUnsupported(err), IsUnavailable(err)}
			assert.Equal(t, tc.want, got)
			// The body stays readable for callers that want it.
			rest, _ := io.ReadAll(resp.Body)
			assert.Equal(t, tc.body, string(rest))
			// Classification sees through wrapping.
			assert.Equal(t, tc.want.validation, IsValidation(fmt.Errorf("resolver: %w", err)))
		})
	}
	ok := &http.Response{StatusCode: 204, Body: io.NopCloser(strings.NewReader(""))}
	assert.NoError(t, CheckResponse(ok))
}

func TestErrorStringNamesCallAndItems(t *testing.T) {
	e := &ErrorResponse{StatusCode: 400, Method: "PUT", Path: "/banking/v2/persons/p1",
		Errors: []ErrorItem{{"ownership", "must be 0 to 100", CodeInvalidValue}, {"", "other", 0}}}
	assert.Equal(t, "banking: PUT /banking/v2/persons/p1: 400 Bad Request: ownership: must be 0 to 100 (10001); other", e.Error())
	assert.Equal(t, "INVALID_VALUE", CodeName(e.First().Code))
	assert.True(t, e.HasCode(CodeRequired, CodeInvalidValue))
	assert.False(t, e.HasCode(CodeCodeExpired))
	assert.Equal(t, "SAME_ACCOUNT", CodeName(CodeSameAccount))
	assert.Empty(t, CodeName(1))
}

// TestErrorsNeverCarrySecrets has an upstream echo every secret it was given
// (bodies, the request token, its refreshed token) in its error messages.
func TestErrorsNeverCarrySecrets(t *testing.T) {
	const (
		password = "hunter2-pass"
		code     = "483920"
		token    = "eyJ.session.token"
		fresh    = "eyJ.fresh.token"
		apiKey   = "pk_live_secret_key"
		recovery = "recovery-token-xyz"
	)
	_, c := newFake(t, func(w http.ResponseWriter, s seen) {
		w.Header().Set(HeaderAccessToken, fresh)
		msg := fmt.Sprintf("bad request %s token=%s fresh=%s", s.Raw, s.Header.Get(HeaderAccessToken), fresh)
		writeJSON(w, 400, errBody("two_fa_code", msg, CodeInvalidValue))
	})
	ctx := WithTokenSource(t.Context(), NewTokenStore(token))
	var errs []error
	_, err := c.Auth.SignInStaff(ctx, SignInRequest{Email: "s@x", Password: password, TwoFactorCode: code})
	errs = append(errs, err)
	_, err = c.Auth.SignInPerson(ctx, SignInRequest{Email: "p@x", Password: password, TwoFactorCode: code, ChallengeID: "ch1"})
	errs = append(errs, err)
	_, err = c.Auth.SignInAPIKey(ctx, Secret(apiKey))
	errs = append(errs, err)
	err = c.Auth.RecoverPassword(ctx, Secret(recovery), password)
	errs = append(errs, err)
	_, err = c.Persons.UpdateMe(ctx, &MeUpdateRequest{CurrentPassword: ptr(password), Password: ptr(password + "2"), ConfirmPassword: ptr(password + "2")})
	errs = append(errs, err)
	_, err = c.Persons.ChangeMyPhone(ctx, PhoneChange{TwoFactorCode: code})
	errs = append(errs, err)
	_, err = c.Persons.Me(ctx)
	errs = append(errs, err)

	for i, err := range errs {
		require.Error(t, err, i)
		var er *ErrorResponse
		require.ErrorAs(t, err, &er)
		for _, s := range []string{password, code, token, fresh, apiKey, recovery} {
			assert.NotContains(t, err.Error(), s, "error %d", i)
			assert.NotContains(t, fmt.Sprintf("%+v %#v", err, er), s, "error %d", i)
			for _, it := range er.Errors {
				assert.NotContains(t, it.Message+it.Field, s, "error %d", i)
			}
		}
		assert.Contains(t, err.Error(), redacted, "error %d: the echo was scrubbed, not dropped", i)
	}
}

func TestSecretNeverPrints(t *testing.T) {
	s := Secret("tok-123")
	res := &SignInResult{Token: s}
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%s %q %v %+v %#v", s, s, res, *res, *res)} {
		assert.NotContains(t, out, "tok-123")
	}
	assert.Equal(t, "tok-123", s.Reveal())
	assert.Equal(t, redacted, s.LogValue().String())
}

func ptr[T any](v T) *T { return &v }
