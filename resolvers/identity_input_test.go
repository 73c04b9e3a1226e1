package resolvers

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/session"
)

func TestPersonCreateRequestChecks(t *testing.T) {
	valid := func() model.CreatePersonInput {
		return model.CreatePersonInput{FirstName: "Anna", LastName: "Berzina", Email: ptr("anna@demo.test"), Gender: model.GenderFemale}
	}
	tests := []struct {
		name  string
		staff bool
		edit  func(in *model.CreatePersonInput)
		field string
	}{
		{"valid", false, func(*model.CreatePersonInput) {}, ""},
		{"no first name", false, func(in *model.CreatePersonInput) { in.FirstName = "" }, "input.firstName"},
		{"blank last name", false, func(in *model.CreatePersonInput) { in.LastName = "  " }, "input.lastName"},
		{"first name too long", false, func(in *model.CreatePersonInput) { in.FirstName = strings.Repeat("a", 101) }, "input.firstName"},
		{"no e-mail", false, func(in *model.CreatePersonInput) { in.Email = nil }, "input.email"},
		{"bad e-mail", false, func(in *model.CreatePersonInput) { in.Email = ptr("anna@") }, "input.email"},
		{"UBO only needs no e-mail", false, func(in *model.CreatePersonInput) { in.Email, in.IsUbo = nil, ptr(true) }, ""},
		{"UBO director needs an e-mail", false, func(in *model.CreatePersonInput) {
			in.Email, in.IsUbo, in.IsDirector = nil, ptr(true), ptr(true)
		}, "input.email"},
		{"UBO with roles needs an e-mail", false, func(in *model.CreatePersonInput) {
			in.Email, in.IsUbo, in.Roles = nil, ptr(true), []string{"r1"}
		}, "input.email"},
		{"consumer UBO needs an e-mail", false, func(in *model.CreatePersonInput) {
			in.Email, in.IsUbo, in.Type = nil, ptr(true), ptr(model.PersonTypeConsumer)
		}, "input.email"},
		{"date of birth", false, func(in *model.CreatePersonInput) { in.DateOfBirth = ptr("31.12.1990") }, "input.dateOfBirth"},
		{"country", false, func(in *model.CreatePersonInput) { in.Country = ptr("Latvia") }, "input.country"},
		{"nationality", false, func(in *model.CreatePersonInput) { in.Nationality = ptr("lv") }, "input.nationality"},
		{"street", false, func(in *model.CreatePersonInput) { in.Street = ptr(strings.Repeat("s", 65)) }, "input.street"},
		{"city", false, func(in *model.CreatePersonInput) { in.City = ptr(strings.Repeat("c", 65)) }, "input.city"},
		{"region", false, func(in *model.CreatePersonInput) { in.Region = ptr(strings.Repeat("r", 101)) }, "input.region"},
		{"post code", false, func(in *model.CreatePersonInput) { in.PostCode = ptr("LV-1010-123") }, "input.postCode"},
		{"social security number", false, func(in *model.CreatePersonInput) { in.SocialSecurityNumber = ptr(strings.Repeat("1", 101)) }, "input.socialSecurityNumber"},
		{"phone too long", false, func(in *model.CreatePersonInput) { in.Phone = ptr("+" + strings.Repeat("1", 32)) }, "input.phone"},
		{"blank phone", false, func(in *model.CreatePersonInput) { in.Phone = ptr(" ") }, "input.phone"},
		{"other phone too long", false, func(in *model.CreatePersonInput) { in.OtherPhone = ptr(strings.Repeat("1", 33)) }, "input.otherPhone"},
		{"blank role", false, func(in *model.CreatePersonInput) { in.Roles = []string{"r1", ""} }, "input.roles"},
		{"staff must name the corporation", true, func(*model.CreatePersonInput) {}, "input.corporationId"},
		{"staff with corporation", true, func(in *model.CreatePersonInput) { in.CorporationID = ptr("acc-1") }, ""},
		{"persons cannot name a corporation", false, func(in *model.CreatePersonInput) { in.CorporationID = ptr("acc-1") }, "input.corporationId"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := valid()
			tc.edit(&in)
			_, err := personCreateRequest(in, tc.staff)
			wantBadInput(t, err, tc.field)
		})
	}
}

func TestPersonCreateRequestMapping(t *testing.T) {
	in := model.CreatePersonInput{FirstName: "Ivo", LastName: "Ozols", Email: ptr("ivo@demo.test"), Gender: model.GenderMale,
		IsUbo: ptr(true), IsDirector: ptr(true), Roles: []string{"r1"}, Type: ptr(model.PersonTypeConsumer),
		Country: ptr("LV"), CorporationID: ptr("acc-1")}
	req, err := personCreateRequest(in, true)
	require.NoError(t, err)
	assert.Equal(t, "male", req.Gender)
	assert.Equal(t, "consumer", req.Type)
	assert.Equal(t, "acc-1", req.AccountID)
	assert.False(t, req.IsUBO, "a consumer is sent without UBO, director and roles, which the spec ignores for them")
	assert.False(t, req.IsDirector)
	assert.Empty(t, req.Roles)

	in.Type = ptr(model.PersonTypeEmployee)
	req, err = personCreateRequest(in, true)
	require.NoError(t, err)
	assert.True(t, req.IsUBO)
	assert.True(t, req.IsDirector)
	assert.Equal(t, []string{"r1"}, req.Roles)
}

func TestPersonUpdateRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   model.UpdatePersonInput
	}{
		{"e-mail", model.UpdatePersonInput{ID: "p1", Email: ptr("x@demo.test")}},
		{"phone", model.UpdatePersonInput{ID: "p1", Phone: ptr("+37120000009")}},
		{"two-factor", model.UpdatePersonInput{ID: "p1", IsTwoFactorEnabled: ptr(false)}},
	} {
		t.Run("staff only: "+tc.name, func(t *testing.T) {
			_, err := personUpdateRequest(tc.in, session.Person)
			e, ok := gqlerr.As(err)
			require.True(t, ok, "got %v", err)
			assert.Equal(t, gqlerr.Forbidden, e.Code)
			_, err = personUpdateRequest(tc.in, session.Staff)
			assert.NoError(t, err)
		})
	}
	tests := []struct {
		name  string
		in    model.UpdatePersonInput
		field string
	}{
		{"no id", model.UpdatePersonInput{}, "input.id"},
		{"blank first name", model.UpdatePersonInput{ID: "p1", FirstName: ptr("")}, "input.firstName"},
		{"country", model.UpdatePersonInput{ID: "p1", Country: ptr("LVA")}, "input.country"},
		{"date", model.UpdatePersonInput{ID: "p1", DateOfBirth: ptr("1990-13-01")}, "input.dateOfBirth"},
		{"negative ownership", model.UpdatePersonInput{ID: "p1", Ownership: ptr(-0.5)}, "input.ownership"},
		{"ownership over 100", model.UpdatePersonInput{ID: "p1", Ownership: ptr(100.5)}, "input.ownership"},
		{"ownership 100", model.UpdatePersonInput{ID: "p1", Ownership: ptr(100.0)}, ""},
		{"post code", model.UpdatePersonInput{ID: "p1", PostCode: ptr(strings.Repeat("9", 11))}, "input.postCode"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := personUpdateRequest(tc.in, session.Staff)
			wantBadInput(t, err, tc.field)
		})
	}
}

func TestMeUpdateRequest(t *testing.T) {
	tests := []struct {
		name  string
		in    model.UpdateMeInput
		field string
	}{
		{"nothing", model.UpdateMeInput{}, ""},
		{"password change", model.UpdateMeInput{CurrentPassword: ptr("old-password"), Password: ptr("new-password"), ConfirmPassword: ptr("new-password")}, ""},
		{"no current password", model.UpdateMeInput{Password: ptr("new-password"), ConfirmPassword: ptr("new-password")}, "input.currentPassword"},
		{"confirmation differs", model.UpdateMeInput{CurrentPassword: ptr("old"), Password: ptr("new-password"), ConfirmPassword: ptr("new-passw0rd")}, "input.confirmPassword"},
		{"no confirmation", model.UpdateMeInput{CurrentPassword: ptr("old"), Password: ptr("new-password")}, "input.confirmPassword"},
		{"password too short", model.UpdateMeInput{CurrentPassword: ptr("old"), Password: ptr("short"), ConfirmPassword: ptr("short")}, "input.password"},
		{"password too long", model.UpdateMeInput{CurrentPassword: ptr("old"), Password: ptr(strings.Repeat("p", 73)), ConfirmPassword: ptr(strings.Repeat("p", 73))}, "input.password"},
		{"other phone too long", model.UpdateMeInput{OtherPhone: ptr(strings.Repeat("1", 33))}, "input.otherPhone"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := meUpdateRequest(tc.in)
			wantBadInput(t, err, tc.field)
			if err != nil {
				assert.NotContains(t, err.Error(), "new-pass", "an error must not echo a password")
			}
		})
	}
}

func TestCorporationUpdateRequest(t *testing.T) {
	tests := []struct {
		name  string
		in    model.UpdateCorporationInput
		field string
	}{
		{"valid", model.UpdateCorporationInput{ID: "c1", Name: ptr("Demo SIA"), Country: ptr("LV"), Currency: ptr("EUR")}, ""},
		{"no id", model.UpdateCorporationInput{}, "input.id"},
		{"blank name", model.UpdateCorporationInput{ID: "c1", Name: ptr(" ")}, "input.name"},
		{"name too long", model.UpdateCorporationInput{ID: "c1", Name: ptr(strings.Repeat("n", 256))}, "input.name"},
		{"e-mail", model.UpdateCorporationInput{ID: "c1", Email: ptr("billing")}, "input.email"},
		{"country outside the list", model.UpdateCorporationInput{ID: "c1", Country: ptr("US")}, "input.country"},
		{"currency", model.UpdateCorporationInput{ID: "c1", Currency: ptr("USD")}, "input.currency"},
		{"address", model.UpdateCorporationInput{ID: "c1", Address: ptr(strings.Repeat("a", 65))}, "input.address"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := corporationUpdateRequest(tc.in)
			wantBadInput(t, err, tc.field)
		})
	}
}

func TestSignUpAndFeedbackRequests(t *testing.T) {
	signUp := func() model.SignUpCorporationInput {
		return model.SignUpCorporationInput{CompanyName: "New SIA", Email: "founder@new.test", FirstName: "Eva",
			LastName: "Liepa", Phone: "+37120000077", Country: "LV", Captcha: "token"}
	}
	for name, tc := range map[string]struct {
		edit  func(in *model.SignUpCorporationInput)
		field string
	}{
		"valid":                {func(*model.SignUpCorporationInput) {}, ""},
		"no company":           {func(in *model.SignUpCorporationInput) { in.CompanyName = "" }, "input.companyName"},
		"company too long":     {func(in *model.SignUpCorporationInput) { in.CompanyName = strings.Repeat("c", 256) }, "input.companyName"},
		"no e-mail":            {func(in *model.SignUpCorporationInput) { in.Email = "" }, "input.email"},
		"bad e-mail":           {func(in *model.SignUpCorporationInput) { in.Email = "founder" }, "input.email"},
		"no phone":             {func(in *model.SignUpCorporationInput) { in.Phone = "" }, "input.phone"},
		"phone too long":       {func(in *model.SignUpCorporationInput) { in.Phone = strings.Repeat("1", 33) }, "input.phone"},
		"country not accepted": {func(in *model.SignUpCorporationInput) { in.Country = "US" }, "input.country"},
		"no captcha":           {func(in *model.SignUpCorporationInput) { in.Captcha = "" }, "input.captcha"},
	} {
		t.Run("sign-up "+name, func(t *testing.T) {
			in := signUp()
			tc.edit(&in)
			_, err := signUpRequest(in)
			wantBadInput(t, err, tc.field)
		})
	}

	feedback := func() model.SendFeedbackInput {
		return model.SendFeedbackInput{Name: "Eva", Email: "eva@new.test", Subject: "Hello", Feedback: "Works.", Captcha: "token"}
	}
	for name, tc := range map[string]struct {
		edit  func(in *model.SendFeedbackInput)
		field string
	}{
		"valid":             {func(*model.SendFeedbackInput) {}, ""},
		"no name":           {func(in *model.SendFeedbackInput) { in.Name = "" }, "input.name"},
		"bad e-mail":        {func(in *model.SendFeedbackInput) { in.Email = "eva at new.test" }, "input.email"},
		"no subject":        {func(in *model.SendFeedbackInput) { in.Subject = " " }, "input.subject"},
		"feedback too long": {func(in *model.SendFeedbackInput) { in.Feedback = strings.Repeat("f", 10001) }, "input.feedback"},
		"no captcha":        {func(in *model.SendFeedbackInput) { in.Captcha = "" }, "input.captcha"},
	} {
		t.Run("feedback "+name, func(t *testing.T) {
			in := feedback()
			tc.edit(&in)
			_, err := feedbackRequest(in)
			wantBadInput(t, err, tc.field)
		})
	}
}
