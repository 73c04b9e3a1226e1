package banking

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCorporationSignUpIsPublicAndCamelCase(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) { writeJSON(w, 200, map[string]any{"id": "c7"}) })
	ctx := WithTokenSource(t.Context(), NewTokenStore("tok"))
	id, err := c.Corporations.SignUp(ctx, &CorporationSignUpRequest{
		CompanyName: "Acme ApS", Email: "a@acme.test", FirstName: "A", LastName: "B", Phone: "+45", Country: "DK", Captcha: "cap-ok",
	})
	require.NoError(t, err)
	assert.Equal(t, "c7", id)
	got := f.last(t)
	assert.Equal(t, "POST /banking/v2/corporation/signup", got.Method+" "+got.Path)
	assert.JSONEq(t, `{"companyName":"Acme ApS","email":"a@acme.test","firstName":"A","lastName":"B","phone":"+45","country":"DK","recaptcha":"cap-ok"}`, string(got.Raw))
	assert.Empty(t, got.Header.Get(HeaderAccessToken))
}

func TestCorporationCurrentUpdateSettings(t *testing.T) {
	var settingsPut string
	f, c := newFake(t, func(w http.ResponseWriter, s seen) {
		switch s.Method + " " + s.Path {
		case "GET /banking/v2/corporations/current":
			writeJSON(w, 200, map[string]any{"id": "c1", "name": "Demo", "city": nil, "is_onboarded": false,
				"identity":               map[string]any{"id": "i1", "type": "corporate", "is_kyc_verified": true},
				"overall_screening_info": map[string]any{"is_corporation_under_review": true, "corporate_users_profile": map[string]any{"sanctions_lists_entity": true}},
				"kyc_data_provider":      nil, "deleted_at": nil, "onboarded_at": ""})
		case "PUT /banking/v2/corporation/c1":
			writeJSON(w, 200, map[string]any{"id": "c1", "is_onboarded": s.Body["is_onboarded"], "onboarded_at": "2024-01-02T03:04:05Z"})
		case "GET /banking/v2/corporations/c1/settings":
			writeJSON(w, 200, map[string]any{"id": "c1", "allowed_person_types": []string{"employee"}})
		case "PUT /banking/v2/corporations/c1/settings":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(settingsPut))
		default:
			writeJSON(w, 404, errBody("", "no route", 0))
		}
	})
	ctx := WithTokenSource(t.Context(), NewTokenStore("tok"))
	corp, err := c.Corporations.Current(ctx)
	require.NoError(t, err)
	assert.Equal(t, "Demo", corp.Name)
	assert.Nil(t, corp.City)
	assert.True(t, corp.Identity.IsKYCVerified)
	assert.True(t, corp.OverallScreeningInfo.CorporateUsersProfile.SanctionsListsEntity)
	assert.Equal(t, "tok", f.last(t).Header.Get(HeaderAccessToken))

	corp, err = c.Corporations.Update(ctx, "c1", &CorporationUpdateRequest{IsOnboarded: ptr(true), Currency: ptr("EUR")})
	require.NoError(t, err)
	assert.True(t, corp.IsOnboarded)
	assert.Equal(t, 2024, corp.OnboardedAt.Year())
	assert.JSONEq(t, `{"is_onboarded":true,"currency":"EUR"}`, string(f.last(t).Raw))

	st, err := c.Corporations.Settings(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, []string{"employee"}, st.AllowedPersonTypes)

	settingsPut = `{}`
	st, err = c.Corporations.UpdateSettings(ctx, "c1", &CorporationSettingsUpdate{AllowedPersonTypes: []string{"employee", "consumer"}})
	require.NoError(t, err)
	assert.Nil(t, st, "an unspecified answer yields no settings")
	assert.JSONEq(t, `{"allowed_person_types":["employee","consumer"]}`, string(f.last(t).Raw))

	settingsPut = `{"id":"c1","allowed_person_types":["employee","consumer"]}`
	st, err = c.Corporations.UpdateSettings(ctx, "c1", &CorporationSettingsUpdate{AllowedPersonTypes: []string{"employee", "consumer"}})
	require.NoError(t, err)
	require.NotNil(t, st)
	assert.Equal(t, []string{"employee", "consumer"}, st.AllowedPersonTypes)
}

func TestAPIKeys(t *testing.T) {
	deleteBody := `{"removed":true}`
	f, c := newFake(t, func(w http.ResponseWriter, s seen) {
		switch s.Method + " " + s.Path {
		case "GET /banking/v2/corporations/c1/api-keys":
			writeJSON(w, 200, map[string]any{"api_keys": []map[string]any{{"id": "k1", "name": "ci"}}})
		case "POST /banking/v2/corporations/c1/api-keys":
			writeJSON(w, 200, map[string]any{"id": "k2", "name": s.Body["name"], "private_key": "pk-secret", "is_active": true})
		case "DELETE /banking/v2/corporations/c1/api-keys/k2":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(deleteBody))
		default:
			writeJSON(w, 403, errBody("", "staff only", 0))
		}
	})
	keys, err := c.APIKeys.List(t.Context(), "c1")
	require.NoError(t, err)
	require.Len(t, keys, 1)
	assert.Equal(t, "ci", keys[0].Name)
	assert.Empty(t, keys[0].PrivateKey)

	k, err := c.APIKeys.Create(t.Context(), "c1", "backend")
	require.NoError(t, err)
	assert.Equal(t, "pk-secret", k.PrivateKey.Reveal())
	assert.True(t, *k.IsActive)
	assert.JSONEq(t, `{"name":"backend"}`, string(f.last(t).Raw))

	for _, body := range []string{`{"removed":true}`, `true`} {
		deleteBody = body
		ok, err := c.APIKeys.Delete(t.Context(), "c1", "k2")
		require.NoError(t, err, body)
		assert.True(t, ok, body)
	}
	deleteBody = `{"what":1}`
	_, err = c.APIKeys.Delete(t.Context(), "c1", "k2")
	assert.Error(t, err)

	_, err = c.APIKeys.List(t.Context(), "other")
	assert.True(t, IsForbidden(err))
}
