package bankingsim

import (
	"cmp"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
)

// AcceptedCountries is the spec's accepted corporation country list.
var AcceptedCountries = []string{"AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR",
	"HU", "IS", "IE", "IT", "LV", "LI", "LT", "LU", "MT", "NL", "NO", "PL", "PT", "RO", "SK", "SI", "ES",
	"SE", "CH", "GB"}

// corporation holds a Corporation and its settings.
type corporation struct {
	ID, AccountID, IdentityID, Name, Email, Address string
	City, Region, PostCode                          *string
	Country, Currency                               string
	CreatedAt                                       time.Time
	OnboardedAt, DeletedAt                          *time.Time
	CreatedBy, UpdatedBy                            *actor
	IsKYCVerified, IsQuestionnaireFilled            bool
	IsAnotherBankAccount, IsInitialApplicationFiled bool
	IsOnboarded                                     bool
	// KYCProvider is whoever provided the KYC data (kyc_data_provided_by_id
	// and kyc_data_provider); nil until someone has.
	KYCProvider  *kycProvider
	IntroducerID string
	// Screening is the company's, UsersScreening its persons' together;
	// the sandbox keeps both as seeded (screening is refreshed weekly
	// upstream, by checks the spec does not show).
	UnderReview               bool
	Screening, UsersScreening screening

	AllowedPersonTypes                   []string
	SettingsCreatedAt, SettingsUpdatedAt time.Time
}

func strPtrJSON(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func (c *corporation) json() map[string]any {
	return map[string]any{
		"id": c.ID, "account_id": c.AccountID, "name": c.Name, "email": c.Email, "address": c.Address,
		"city": strPtrJSON(c.City), "region": strPtrJSON(c.Region), "post_code": strPtrJSON(c.PostCode),
		"country": c.Country, "currency": c.Currency, "created_at": ts(c.CreatedAt),
		"onboarded_at": tsPtr(c.OnboardedAt), "deleted_at": tsPtr(c.DeletedAt),
		"created_by": c.CreatedBy, "updated_by": c.UpdatedBy,
		"identity": map[string]any{"id": c.IdentityID, "type": "corporate", "is_kyc_verified": c.IsKYCVerified,
			"is_questionnaire_filled": c.IsQuestionnaireFilled},
		"is_another_bank_account":       c.IsAnotherBankAccount,
		"is_initial_application_filled": c.IsInitialApplicationFiled,
		"is_onboarded":                  c.IsOnboarded,
		"kyc_data_provided_by_id":       c.KYCProvider.idJSON(),
		"kyc_data_provider":             c.KYCProvider.json(),
		"questionnaire":                 map[string]any{},
		"overall_screening_info": map[string]any{"is_corporation_under_review": c.UnderReview,
			"corporation_profile": c.Screening.json(), "corporate_users_profile": c.UsersScreening.json()},
	}
}

// kycProvider is the person who provided a corporation's KYC data.
type kycProvider struct{ ID, FirstName, LastName string }

func (k *kycProvider) idJSON() any {
	if k == nil {
		return nil
	}
	return k.ID
}

func (k *kycProvider) json() any {
	if k == nil {
		return nil
	}
	return map[string]any{"id": k.ID, "first_name": k.FirstName, "last_name": k.LastName}
}

func (c *corporation) settingsJSON() map[string]any {
	return map[string]any{"id": c.ID, "allowed_person_types": c.AllowedPersonTypes,
		"created_at": ts(c.SettingsCreatedAt), "updated_at": ts(c.SettingsUpdatedAt)}
}

// corporationByAccountLocked finds a corporation by its account_id (or, as
// a convenience, its id).
func (s *Sim) corporationByAccountLocked(acc string) *corporation {
	for _, c := range s.corporations {
		if c.AccountID == acc {
			return c
		}
	}
	return s.corporations[acc]
}

// scopedCorporationLocked finds a corporation the principal may see: staff
// all, introducers those they introduced, persons and API clients their own;
// others are 404.
func (s *Sim) scopedCorporationLocked(w http.ResponseWriter, p principal, id string) *corporation {
	c := s.corporations[id]
	if c != nil && s.seesCorporation(p, c) {
		return c
	}
	notFound(w, "corporation")
	return nil
}

func (s *Sim) seesCorporation(p principal, c *corporation) bool {
	switch p.kind {
	case kindStaff:
		return true
	case kindIntroducer:
		return c.IntroducerID == p.id
	}
	return c.ID == p.corpID
}

var corporationSorts = map[string]string{
	"name": "name", "createdAt": "created_at", "created_at": "created_at", "country": "country",
}

func (s *Sim) listCorporations(w http.ResponseWriter, r *http.Request) {
	pr := principalOf(r)
	pg, e := s.parsePage(r, "name", "ASC", corporationSorts)
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var items []*corporation
	for _, c := range s.corporations {
		if s.seesCorporation(pr, c) {
			items = append(items, c)
		}
	}
	less := func(a, b *corporation) int {
		switch pg.key {
		case "created_at":
			return a.CreatedAt.Compare(b.CreatedAt)
		case "country":
			return cmp.Compare(a.Country, b.Country)
		}
		return cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	}
	writeJSON(w, http.StatusOK, paginate(pg, items, less, func(c *corporation) string { return c.ID },
		func(c *corporation) any { return c.json() }))
}

func (s *Sim) currentCorporation(w http.ResponseWriter, r *http.Request) {
	pr := principalOf(r)
	if pr.corpID == "" {
		forbidden(w, "", "only persons and API clients have a current corporation")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.scopedCorporationLocked(w, pr, pr.corpID); c != nil {
		writeJSON(w, http.StatusOK, c.json())
	}
}

func (s *Sim) getCorporation(w http.ResponseWriter, r *http.Request) {
	pr := principalOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.scopedCorporationLocked(w, pr, chi.URLParam(r, "id")); c != nil {
		writeJSON(w, http.StatusOK, c.json())
	}
}

var updateCorporationFields = []string{"name", "email", "country", "currency", "city", "region", "post_code",
	"address", "is_kyc_verified", "is_onboarded"}

// updateCorporation is staff only. is_onboarded true sets onboarded_at (the
// first time); false clears both.
func (s *Sim) updateCorporation(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	pr := principalOf(r)
	if !pr.isStaff() {
		forbidden(w, "", "corporation update is for staff only")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.scopedCorporationLocked(w, pr, chi.URLParam(r, "id"))
	if c == nil {
		return
	}
	var e errs
	b.unknown(&e, "", updateCorporationFields...)
	nc := s.readCorporationUpdateLocked(&e, b, c)
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	nc.UpdatedBy = s.actorLocked(pr)
	*c = nc
	writeJSON(w, http.StatusOK, c.json())
}

// readCorporationUpdateLocked validates PUT /corporation/{id} into a copy of
// c, so that a refused request changes nothing.
func (s *Sim) readCorporationUpdateLocked(e *errs, b body, c *corporation) corporation {
	nc := *c
	if v, ok := b.str(e, "", "name"); ok {
		if strings.TrimSpace(v) == "" {
			e.invalid("name", "name must not be empty")
		}
		maxLen(e, "name", v, 255)
		nc.Name = v
	}
	if v, ok := b.str(e, "", "email"); ok {
		checkEmail(e, "email", normEmail(v))
		nc.Email = normEmail(v)
	}
	if v, ok := b.str(e, "", "country"); ok {
		if !contains(AcceptedCountries, v) {
			e.invalid("country", "country is not accepted")
		}
		nc.Country = v
	}
	if v, ok := b.str(e, "", "currency"); ok {
		if v != "EUR" {
			e.invalid("currency", "currency must be EUR")
		}
		nc.Currency = v
	}
	if v, ok := b.str(e, "", "address"); ok {
		maxLen(e, "address", v, 64)
		nc.Address = v
	}
	for _, f := range []struct {
		name string
		max  int
		dst  **string
	}{{"city", 64, &nc.City}, {"region", 100, &nc.Region}, {"post_code", 10, &nc.PostCode}} {
		if v, ok := b.nullableStr(e, "", f.name); ok {
			if v != nil {
				maxLen(e, f.name, *v, f.max)
			}
			*f.dst = v
		}
	}
	if v, ok := b.boolean(e, "", "is_kyc_verified"); ok {
		nc.IsKYCVerified = v
	}
	if v, ok := b.boolean(e, "", "is_onboarded"); ok {
		if v && !c.IsOnboarded {
			now := s.now()
			nc.OnboardedAt = &now
		}
		if !v {
			nc.OnboardedAt = nil
		}
		nc.IsOnboarded = v
	}
	return nc
}

func (s *Sim) getSettings(w http.ResponseWriter, r *http.Request) {
	pr := principalOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.scopedCorporationLocked(w, pr, chi.URLParam(r, "id")); c != nil {
		writeJSON(w, http.StatusOK, c.settingsJSON())
	}
}

// putSettings changes allowed_person_types; employee is always kept. Staff,
// API clients and persons with persons_management.write may change it.
func (s *Sim) putSettings(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	pr := principalOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.scopedCorporationLocked(w, pr, chi.URLParam(r, "id"))
	if c == nil {
		return
	}
	if !s.canWritePersonsLocked(pr) {
		forbidden(w, "", "permission "+PermPersonsWrite+" is required")
		return
	}
	var e errs
	b.unknown(&e, "", "allowed_person_types")
	types, ok := b.strings(&e, "", "allowed_person_types")
	for _, t := range types {
		if t != TypeEmployee && t != TypeConsumer {
			e.invalid("allowed_person_types", "allowed_person_types holds employee or consumer")
			break
		}
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	if ok {
		out := []string{TypeEmployee}
		if contains(types, TypeConsumer) {
			out = append(out, TypeConsumer)
		}
		c.AllowedPersonTypes = out
		c.SettingsUpdatedAt = s.now()
	}
	writeJSON(w, http.StatusOK, c.settingsJSON())
}

var signUpFields = []string{"companyName", "email", "firstName", "lastName", "phone", "country", "recaptcha",
	"captcha", "address", "city", "region", "postCode", "post_code"}

// corporationSignUp creates a corporation (not onboarded, EUR) and its first
// person, an employee director, who is invited by e-mail to set a password.
func (s *Sim) corporationSignUp(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	var e errs
	if !checkCaptcha(&e, b) {
		badRequest(w, e...)
		return
	}
	b.unknown(&e, "", signUpFields...)
	req := map[string]string{}
	for _, f := range []string{"companyName", "email", "firstName", "lastName", "phone", "country"} {
		v, _ := b.str(&e, "", f)
		if strings.TrimSpace(v) == "" && !hasField(e, f) {
			e.required(f)
		}
		req[f] = strings.TrimSpace(v)
	}
	maxLen(&e, "companyName", req["companyName"], 255)
	maxLen(&e, "firstName", req["firstName"], 100)
	maxLen(&e, "lastName", req["lastName"], 100)
	email := normEmail(req["email"])
	if email != "" {
		checkEmail(&e, "email", email)
	}
	if req["phone"] != "" {
		checkPhone(&e, "phone", req["phone"])
	}
	if req["country"] != "" && !contains(AcceptedCountries, req["country"]) {
		e.invalid("country", "country is not accepted")
	}
	opt := map[string]*string{}
	for _, f := range []struct {
		name string
		max  int
	}{{"address", 64}, {"city", 64}, {"region", 100}, {"postCode", 10}, {"post_code", 10}} {
		if v, ok := b.str(&e, "", f.name); ok {
			maxLen(&e, f.name, v, f.max)
			opt[f.name] = &v
		}
	}
	if opt["postCode"] == nil {
		opt["postCode"] = opt["post_code"]
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.personByEmailLocked(email) != nil {
		writeErrors(w, http.StatusConflict, fieldErr("email", "e-mail is already taken", CodeInvalid))
		return
	}
	now := s.now()
	c := &corporation{ID: uuid.NewString(), AccountID: uuid.NewString(), IdentityID: uuid.NewString(),
		Name: req["companyName"], Email: email, Country: req["country"], Currency: "EUR",
		City: opt["city"], Region: opt["region"], PostCode: opt["postCode"], CreatedAt: now,
		AllowedPersonTypes: []string{TypeEmployee}, SettingsCreatedAt: now, SettingsUpdatedAt: now}
	if a := opt["address"]; a != nil {
		c.Address = *a
	}
	p := &person{ID: uuid.NewString(), CorpID: c.ID, PersonLoginID: uuid.NewString(), IdentityID: uuid.NewString(),
		FirstName: req["firstName"], LastName: req["lastName"], Email: email, Phone: req["phone"],
		Country: req["country"], Gender: "unknown", Type: TypeEmployee, IsDirector: true,
		ProfileLevel: "basic", PrimaryCurrency: "EUR", CreatedAt: now, UpdatedAt: now, emailUnique: true}
	s.corporations[c.ID] = c
	s.persons[p.ID] = p
	s.inviteLocked(p, c)
	writeJSON(w, http.StatusOK, map[string]any{"id": c.ID})
}
