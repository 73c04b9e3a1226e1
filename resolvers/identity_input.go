package resolvers

import (
	"strings"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/passwords"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// Validation of identity inputs before any upstream call, following the
// banking spec's create and update tables, so bad input costs no upstream
// call and the error names the GraphQL field (input.firstName), not the
// upstream's (first_name).

// lower is the banking wire value of a gender enum ("" when not given).
func lower(g *model.Gender) string {
	if g == nil {
		return ""
	}
	return strings.ToLower(string(*g))
}

// lowerPtr is lower for an optional field of an update.
func lowerPtr(g *model.Gender) *string {
	if g == nil {
		return nil
	}
	s := lower(g)
	return &s
}

// personCreateRequest validates a CreatePersonInput. staff says whether the
// caller is staff, for whom the corporation is required.
func personCreateRequest(in model.CreatePersonInput, staff bool) (*banking.PersonCreateRequest, error) {
	var v validator
	v.required("input.firstName", in.FirstName, 100)
	v.required("input.lastName", in.LastName, 100)
	isUBO, isDirector := in.IsUbo != nil && *in.IsUbo, in.IsDirector != nil && *in.IsDirector
	consumer := in.Type != nil && *in.Type == model.PersonTypeConsumer
	emailOptional := !consumer && isUBO && !isDirector && len(in.Roles) == 0
	if in.Email == nil || strings.TrimSpace(*in.Email) == "" {
		if !emailOptional {
			v.fail("input.email", "input.email is required unless the person is a UBO who is no director and has no roles")
		}
	} else {
		v.email("input.email", in.Email)
	}
	v.date("input.dateOfBirth", in.DateOfBirth)
	v.twoLetter("input.country", in.Country)
	v.twoLetter("input.nationality", in.Nationality)
	v.optional("input.street", in.Street, 64)
	v.optional("input.city", in.City, 64)
	v.optional("input.region", in.Region, 100)
	v.optional("input.postCode", in.PostCode, 10)
	v.optional("input.socialSecurityNumber", in.SocialSecurityNumber, 100)
	v.optional("input.phone", in.Phone, 32)
	v.optional("input.otherPhone", in.OtherPhone, 32)
	for _, r := range in.Roles {
		v.required("input.roles", r, 100)
	}
	if staff {
		if in.CorporationID == nil || *in.CorporationID == "" {
			v.fail("input.corporationId", "input.corporationId is required for staff")
		}
	} else if in.CorporationID != nil {
		v.fail("input.corporationId", "input.corporationId is for staff only; persons are created in your own corporation")
	}
	if v.err != nil {
		return nil, v.err
	}
	req := &banking.PersonCreateRequest{
		FirstName: in.FirstName, LastName: in.LastName, Email: deref(in.Email), Gender: lower(&in.Gender),
		PersonContact: banking.PersonContact{
			DateOfBirth: deref(in.DateOfBirth), Phone: deref(in.Phone), OtherPhone: deref(in.OtherPhone),
			Country: deref(in.Country), Nationality: deref(in.Nationality), Street: deref(in.Street),
			City: deref(in.City), Region: deref(in.Region), PostCode: deref(in.PostCode),
		},
		SocialSecurityNumber: deref(in.SocialSecurityNumber), AccountID: deref(in.CorporationID),
	}
	// The spec ignores these for consumers; not sending them keeps that visible.
	if !consumer {
		req.IsUBO, req.IsDirector, req.Roles = isUBO, isDirector, in.Roles
	}
	if in.Type != nil {
		req.Type = strings.ToLower(string(*in.Type))
	}
	return req, nil
}

// personUpdateRequest validates an UpdatePersonInput. Staff-only fields are
// FORBIDDEN for everyone else, and currentPassword for everyone but persons,
// before any upstream call. Whether a person may change this person's
// password (only their own) is the upstream's call: it knows who is who.
func personUpdateRequest(in model.UpdatePersonInput, kind session.Kind) (*banking.PersonUpdateRequest, error) {
	staff := kind == session.Staff
	if in.CurrentPassword != nil && kind != session.Person {
		return nil, &gqlerr.Error{Code: gqlerr.Forbidden, Field: "input.currentPassword", Message: "input.currentPassword is for persons changing their own password"}
	}
	if !staff {
		for field, set := range map[string]bool{"input.isTwoFactorEnabled": in.IsTwoFactorEnabled != nil, "input.email": in.Email != nil, "input.phone": in.Phone != nil} {
			if set {
				return nil, &gqlerr.Error{Code: gqlerr.Forbidden, Field: field, Message: field + " may be changed by staff only"}
			}
		}
	}
	var v validator
	v.required("input.id", in.ID, 100)
	v.optional("input.firstName", in.FirstName, 100)
	v.optional("input.lastName", in.LastName, 100)
	v.twoLetter("input.country", in.Country)
	v.twoLetter("input.nationality", in.Nationality)
	v.optional("input.city", in.City, 64)
	v.optional("input.region", in.Region, 100)
	v.optional("input.postCode", in.PostCode, 10)
	v.optional("input.street", in.Street, 64)
	v.date("input.dateOfBirth", in.DateOfBirth)
	v.optional("input.socialSecurityNumber", in.SocialSecurityNumber, 100)
	if in.Ownership != nil && (*in.Ownership < 0 || *in.Ownership > 100) {
		v.fail("input.ownership", "input.ownership must be between 0 and 100")
	}
	v.email("input.email", in.Email)
	for _, r := range in.Roles {
		v.required("input.roles", r, 100)
	}
	v.newPassword(in.Password, in.ConfirmPassword, in.CurrentPassword, kind == session.Person)
	if v.err != nil {
		return nil, v.err
	}
	req := &banking.PersonUpdateRequest{
		FirstName: in.FirstName, LastName: in.LastName, Country: in.Country, Nationality: in.Nationality,
		City: in.City, Region: in.Region, PostCode: in.PostCode, Street: in.Street, DateOfBirth: in.DateOfBirth,
		SocialSecurityNumber: in.SocialSecurityNumber, Position: in.Position, Ownership: in.Ownership,
		IsPoliticallyExposed: in.IsPoliticallyExposed, IsTaxResident: in.IsTaxResident, IsUBO: in.IsUbo,
		IsDirector: in.IsDirector, Gender: lowerPtr(in.Gender), OtherPhone: in.OtherPhone,
		PoliticalInstitution: in.PoliticalInstitution, PositionInPoliticalInstitution: in.PositionInPoliticalInstitution,
		Is2FAEnabled: in.IsTwoFactorEnabled, Email: in.Email, Phone: in.Phone,
		IsQuestionnaireFilled: in.IsQuestionnaireFilled,
		Password:              in.Password, ConfirmPassword: in.ConfirmPassword, CurrentPassword: in.CurrentPassword,
	}
	if in.Roles != nil {
		roles := in.Roles
		req.Roles = &roles
	}
	return req, nil
}

func meUpdateRequest(in model.UpdateMeInput) (*banking.MeUpdateRequest, error) {
	var v validator
	v.optional("input.otherPhone", in.OtherPhone, 32)
	for _, r := range in.Roles {
		v.required("input.roles", r, 100)
	}
	v.newPassword(in.Password, in.ConfirmPassword, in.CurrentPassword, true)
	if v.err != nil {
		return nil, v.err
	}
	req := &banking.MeUpdateRequest{
		IsUBO: in.IsUbo, IsDirector: in.IsDirector, Gender: lowerPtr(in.Gender), OtherPhone: in.OtherPhone,
		PoliticalInstitution: in.PoliticalInstitution, PositionInPoliticalInstitution: in.PositionInPoliticalInstitution,
		IsQuestionnaireFilled: in.IsQuestionnaireFilled,
		CurrentPassword:       in.CurrentPassword, Password: in.Password, ConfirmPassword: in.ConfirmPassword,
	}
	if in.Roles != nil {
		roles := in.Roles
		req.Roles = &roles
	}
	return req, nil
}

// newPassword checks a password change: the new password twice, the
// current one when a person changes their own (needCurrent), and the rules
// of passwords.Check that need no upstream read (the e-mail is checked by
// Resolver.checkNewPassword). Whether the current one is right is the
// upstream's to say (code 10001). No message repeats a password.
func (v *validator) newPassword(pw, confirm, current *string, needCurrent bool) {
	if pw == nil {
		if confirm != nil {
			v.fail("input.password", "input.password is required with input.confirmPassword")
		}
		if current != nil && needCurrent {
			v.fail("input.password", "input.password is required with input.currentPassword")
		}
		return
	}
	if needCurrent && deref(current) == "" {
		v.fail("input.currentPassword", "input.currentPassword is required to change the password")
	}
	if confirm == nil || *confirm != *pw {
		v.fail("input.confirmPassword", "input.confirmPassword must equal input.password")
	}
	if rule := passwords.Check(*pw, passwords.Account{Current: deref(current)}); rule != "" {
		v.fail("input.password", "input.password %s", rule)
	}
}

func corporationUpdateRequest(in model.UpdateCorporationInput) (*banking.CorporationUpdateRequest, error) {
	var v validator
	v.required("input.id", in.ID, 100)
	v.optional("input.name", in.Name, 255)
	v.email("input.email", in.Email)
	v.acceptedCountry("input.country", in.Country)
	if in.Currency != nil && *in.Currency != "EUR" {
		v.fail("input.currency", "input.currency can only be EUR")
	}
	v.optional("input.city", in.City, 64)
	v.optional("input.region", in.Region, 100)
	v.optional("input.postCode", in.PostCode, 10)
	v.optional("input.address", in.Address, 64)
	if v.err != nil {
		return nil, v.err
	}
	return &banking.CorporationUpdateRequest{
		Name: in.Name, Email: in.Email, Country: in.Country, Currency: in.Currency, City: in.City,
		Region: in.Region, PostCode: in.PostCode, Address: in.Address, IsKYCVerified: in.IsKycVerified,
		IsOnboarded: in.IsOnboarded,
	}, nil
}

func signUpRequest(in model.SignUpCorporationInput) (*banking.CorporationSignUpRequest, error) {
	var v validator
	v.required("input.companyName", in.CompanyName, 255)
	v.required("input.email", in.Email, 0)
	v.email("input.email", &in.Email)
	v.required("input.firstName", in.FirstName, 100)
	v.required("input.lastName", in.LastName, 100)
	v.required("input.phone", in.Phone, 32)
	v.acceptedCountry("input.country", &in.Country)
	v.required("input.captcha", in.Captcha, 0)
	if v.err != nil {
		return nil, v.err
	}
	return &banking.CorporationSignUpRequest{CompanyName: in.CompanyName, Email: in.Email, FirstName: in.FirstName,
		LastName: in.LastName, Phone: in.Phone, Country: in.Country, Captcha: in.Captcha}, nil
}

func feedbackRequest(in model.SendFeedbackInput) (*banking.FeedbackRequest, error) {
	var v validator
	v.required("input.name", in.Name, 255)
	v.required("input.email", in.Email, 0)
	v.email("input.email", &in.Email)
	v.required("input.subject", in.Subject, 255)
	v.required("input.feedback", in.Feedback, 10000)
	v.required("input.captcha", in.Captcha, 0)
	if v.err != nil {
		return nil, v.err
	}
	return &banking.FeedbackRequest{Name: in.Name, Email: in.Email, Subject: in.Subject, Feedback: in.Feedback, Captcha: in.Captcha}, nil
}

// signUpApplicant names who signs a corporation up, for the scope of its
// idempotency key: nobody is signed in yet.
func signUpApplicant(req *banking.CorporationSignUpRequest) string {
	return tokenDigest(strings.ToLower(strings.TrimSpace(req.Email)))
}
