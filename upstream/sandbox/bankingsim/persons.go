package bankingsim

import (
	"cmp"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
)

// Person types.
const (
	TypeEmployee = "employee"
	TypeConsumer = "consumer"
)

// Permission names of GET /persons/me.
const (
	PermPersonsRead  = "persons_management.read"
	PermPersonsWrite = "persons_management.write"
)

var genders = []string{"unknown", "male", "female", "transgender"}

// person is a person of a corporation.
type person struct {
	ID, CorpID                                          string
	FirstName, LastName, DateOfBirth, Phone, OtherPhone string
	Country, Nationality, Street, City, Region          string
	PostCode, Gender, Email, SSN, PersonLoginID         string
	IdentityID, ProfileLevel, Position, PrimaryCurrency string
	PoliticalInstitution, PositionInPolitical           string
	Type                                                string
	Ownership                                           float64
	IsUBO, IsDirector, IsTaxResident, IsPEP             bool
	IsInvitationAccepted, Is2FA, IsQuestionnaireFilled  bool
	IsPersonLimitsDisabled                              bool
	Roles                                               []string
	UnderReview                                         bool
	Screening                                           screening
	Fingerprints                                        []float64
	CreatedAt, UpdatedAt                                time.Time
	DeletedAt                                           *time.Time
	CreatedBy, UpdatedBy                                *actor
	// emailUnique is false for the UBO-only person whose e-mail is not
	// checked for duplicates; such an e-mail cannot sign in.
	emailUnique bool
	hash        []byte
}

func (p *person) fullName() string { return strings.TrimSpace(p.FirstName + " " + p.LastName) }

func (p *person) addFingerprint(fp float64) {
	for _, x := range p.Fingerprints {
		if x == fp {
			return
		}
	}
	p.Fingerprints = append(p.Fingerprints, fp)
}

// permissions maps a person to the permission keys of GET /persons/me:
// directors among employees manage persons, everyone else reads.
func (p *person) permissions() map[string]bool {
	write := p.Type == TypeEmployee && p.IsDirector
	return map[string]bool{PermPersonsRead: true, PermPersonsWrite: write}
}

func (s *Sim) personByEmailLocked(email string) *person {
	for _, p := range s.persons {
		if p.emailUnique && p.Email != "" && p.Email == email {
			return p
		}
	}
	return nil
}

// actorLocked is the CreatedBy / UpdatedBy of a principal; API clients have
// none (the spec's type is staff or person only).
func (s *Sim) actorLocked(p principal) *actor {
	switch p.kind {
	case kindStaff:
		if st := s.staff[p.id]; st != nil {
			return &actor{ID: st.ID, Type: "staff", FullName: st.FirstName + " " + st.LastName}
		}
	case kindPerson:
		if pp := s.persons[p.id]; pp != nil {
			return &actor{ID: pp.ID, Type: "person", FullName: pp.fullName()}
		}
	}
	return nil
}

func emptyIfNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

func nilIfEmpty(v string) any {
	if v == "" {
		return nil
	}
	return v
}

func (s *Sim) personPartials(p *person) map[string]any {
	corp := s.corporations[p.CorpID]
	account := map[string]any{"id": nil, "corporation_id": p.CorpID}
	if corp != nil {
		account["id"] = corp.AccountID
	}
	fps := make([]any, 0, len(p.Fingerprints))
	for _, f := range p.Fingerprints {
		fps = append(fps, map[string]any{"id_fingerprint": f})
	}
	emails := []any{}
	if p.Email != "" {
		emails = append(emails, map[string]any{"email": p.Email, "is_primary": true})
	}
	return map[string]any{
		"account":      account,
		"identity":     map[string]any{"id": p.IdentityID, "type": "individual"},
		"login":        map[string]any{"id": p.PersonLoginID, "email": nilIfEmpty(p.Email)},
		"emails":       emails,
		"fingerprints": fps,
		"ips":          []any{},
		"roles":        emptyIfNil(p.Roles),
	}
}

// screening is a screening profile: what the weekly checks found.
type screening struct {
	PoliticallyExposed, SanctionsListsEntity, RelativeOrCloseAssociate, BoardMember bool
}

func (sc screening) json() map[string]any {
	return map[string]any{"politically_exposed": sc.PoliticallyExposed, "sanctions_lists_entity": sc.SanctionsListsEntity,
		"relative_or_close_associate": sc.RelativeOrCloseAssociate, "board_member": sc.BoardMember}
}

// screeningStatus is a listing's status of a person's screening (the spec
// does not show its values): under_review while staff review it, hit when
// a check found something, clear otherwise.
func (p *person) screeningStatus() string {
	switch {
	case p.UnderReview:
		return "under_review"
	case p.Screening != screening{}:
		return "hit"
	}
	return "clear"
}

// personJSON is the full Person; is_2_fa_enabled only for staff viewers.
func (s *Sim) personJSONLocked(p *person, viewer principal) map[string]any {
	m := map[string]any{
		"id": p.ID, "first_name": p.FirstName, "last_name": p.LastName,
		"date_of_birth": nilIfEmpty(p.DateOfBirth), "phone": p.Phone, "other_phone": p.OtherPhone,
		"country": p.Country, "nationality": p.Nationality, "street": p.Street, "city": p.City,
		"region": p.Region, "post_code": p.PostCode, "gender": p.Gender, "email": p.Email,
		"is_person_limits_disabled": p.IsPersonLimitsDisabled, "longitude": nil, "latitude": nil,
		"social_security_number": p.SSN, "score_adjustment": nil, "email_domain_creation_date": nil,
		"person_login_id": p.PersonLoginID, "created_at": ts(p.CreatedAt), "updated_at": ts(p.UpdatedAt),
		"deleted_at": tsPtr(p.DeletedAt), "is_blocked": p.DeletedAt != nil, "profile_level": p.ProfileLevel,
		"is_invitation_accepted": p.IsInvitationAccepted, "is_politically_exposed": p.IsPEP,
		"political_institution": p.PoliticalInstitution, "position_in_political_institution": p.PositionInPolitical,
		"ownership": p.Ownership, "position": p.Position, "is_ubo": p.IsUBO, "is_director": p.IsDirector,
		"is_tax_resident": p.IsTaxResident, "primary_currency": p.PrimaryCurrency,
		"is_questionnaire_filled": p.IsQuestionnaireFilled,
		"created_by":              p.CreatedBy, "updated_by": p.UpdatedBy, "type": p.Type,
		"screening_info": map[string]any{"is_person_under_review": p.UnderReview, "person_profile": p.Screening.json()},
	}
	for k, v := range s.personPartials(p) {
		m[k] = v
	}
	if viewer.isStaff() {
		m["is_2_fa_enabled"] = p.Is2FA
	}
	return m
}

// personItemJSON is the subset GET /persons lists.
func (s *Sim) personItemJSONLocked(p *person) map[string]any {
	m := map[string]any{
		"id": p.ID, "first_name": p.FirstName, "last_name": p.LastName, "country": p.Country,
		"nationality": p.Nationality, "email": p.Email, "phone": p.Phone, "created_at": ts(p.CreatedAt),
		"deleted_at": tsPtr(p.DeletedAt), "is_invitation_accepted": p.IsInvitationAccepted,
		"is_ubo": p.IsUBO, "is_director": p.IsDirector, "type": p.Type,
		"screening_info": map[string]any{"status": p.screeningStatus(), "profile": p.Screening.json()},
	}
	for k, v := range s.personPartials(p) {
		m[k] = v
	}
	return m
}

// canWritePersonsLocked: staff, API clients and persons holding
// persons_management.write.
func (s *Sim) canWritePersonsLocked(p principal) bool {
	switch p.kind {
	case kindStaff, kindAPI:
		return true
	case kindPerson:
		pp := s.persons[p.id]
		return pp != nil && pp.permissions()[PermPersonsWrite]
	}
	return false
}

// scopedPersonLocked finds a person the principal may see: staff see all,
// persons and API clients their own corporation (others are 404), and
// introducers no persons (403). It answers the error itself.
func (s *Sim) scopedPersonLocked(w http.ResponseWriter, p principal, id string) *person {
	if p.kind == kindIntroducer {
		forbidden(w, "", "introducers cannot manage persons")
		return nil
	}
	pp := s.persons[id]
	if pp == nil || (!p.isStaff() && pp.CorpID != p.corpID) {
		notFound(w, "person")
		return nil
	}
	return pp
}

var phoneRe = regexp.MustCompile(`^\+?[0-9]{6,15}$`)

func checkPhone(e *errs, field, v string) {
	if !phoneRe.MatchString(v) {
		e.invalid(field, field+" must be a phone number in international format")
	}
}

// addressFields are the optional strings shared by create and update with
// their rules.
func readAddress(e *errs, b body, set func(field, v string)) {
	for _, f := range []struct {
		name string
		max  int
	}{{"street", 64}, {"city", 64}, {"region", 100}, {"post_code", 10}, {"social_security_number", 100}} {
		if v, ok := b.str(e, "", f.name); ok {
			maxLen(e, f.name, v, f.max)
			set(f.name, v)
		}
	}
	for _, f := range []string{"country", "nationality"} {
		if v, ok := b.str(e, "", f); ok {
			checkCountry(e, f, v)
			set(f, v)
		}
	}
	if v, ok := b.str(e, "", "date_of_birth"); ok {
		checkDate(e, "date_of_birth", v)
		set("date_of_birth", v)
	}
}

func (p *person) setString(field, v string) {
	switch field {
	case "street":
		p.Street = v
	case "city":
		p.City = v
	case "region":
		p.Region = v
	case "post_code":
		p.PostCode = v
	case "social_security_number":
		p.SSN = v
	case "country":
		p.Country = v
	case "nationality":
		p.Nationality = v
	case "date_of_birth":
		p.DateOfBirth = v
	case "other_phone":
		p.OtherPhone = v
	case "position":
		p.Position = v
	case "political_institution":
		p.PoliticalInstitution = v
	case "position_in_political_institution":
		p.PositionInPolitical = v
	}
}

var createPersonFields = []string{"first_name", "last_name", "is_ubo", "is_director", "email", "gender",
	"date_of_birth", "phone", "other_phone", "country", "nationality", "street", "city", "region",
	"post_code", "social_security_number", "roles", "type", "account_id"}

func (s *Sim) createPerson(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	pr := principalOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if pr.kind == kindIntroducer {
		forbidden(w, "", "introducers cannot manage persons")
		return
	}
	if !s.canWritePersonsLocked(pr) {
		forbidden(w, "", "permission "+PermPersonsWrite+" is required")
		return
	}
	var e errs
	b.unknown(&e, "", createPersonFields...)
	corp := s.newPersonCorporationLocked(&e, b, pr)
	np := readNewPerson(&e, b, corp)
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	if np.emailUnique && s.personByEmailLocked(np.Email) != nil {
		writeErrors(w, http.StatusConflict, fieldErr("email", "e-mail is already taken", CodeInvalid))
		return
	}
	now := s.now()
	np.CorpID = corp.ID
	np.CreatedAt, np.UpdatedAt = now, now
	np.CreatedBy = s.actorLocked(pr)
	np.UpdatedBy = np.CreatedBy
	s.persons[np.ID] = np
	if np.Type == TypeEmployee && np.Email != "" {
		s.inviteLocked(np, corp)
	}
	writeJSON(w, http.StatusOK, s.personJSONLocked(np, pr))
}

// newPersonCorporationLocked is the corporation a new person joins: staff
// name it by account_id, everyone else acts in their own.
func (s *Sim) newPersonCorporationLocked(e *errs, b body, pr principal) *corporation {
	if !pr.isStaff() {
		return s.corporations[pr.corpID]
	}
	acc, _ := b.str(e, "", "account_id")
	if acc == "" && !hasField(*e, "account_id") {
		e.required("account_id")
		return nil
	}
	if acc == "" {
		return nil
	}
	corp := s.corporationByAccountLocked(acc)
	if corp == nil {
		e.invalid("account_id", "unknown account")
	}
	return corp
}

// readNewPerson validates the body of POST /persons into a new person of
// corp (nil when the corporation is in error already).
func readNewPerson(e *errs, b body, corp *corporation) *person {
	np := &person{ID: uuid.NewString(), PersonLoginID: uuid.NewString(), IdentityID: uuid.NewString(),
		ProfileLevel: "basic", PrimaryCurrency: "EUR", Gender: "unknown", Type: TypeEmployee}
	readNames(e, b, np, true)
	readNewPersonRoles(e, b, np, corp)

	// E-mail is optional, and not checked for duplicates, only for a UBO that
	// is not a director and has no roles.
	uboOnly := np.IsUBO && !np.IsDirector && len(np.Roles) == 0
	email, emailOK := b.str(e, "", "email")
	email = normEmail(email)
	switch {
	case email == "" && !uboOnly && !hasField(*e, "email"):
		e.required("email")
	case email != "":
		checkEmail(e, "email", email)
	}
	np.Email = email
	np.emailUnique = !uboOnly && emailOK

	gender, _ := b.str(e, "", "gender")
	if gender == "" && !hasField(*e, "gender") {
		e.required("gender")
	} else if gender != "" {
		oneOf(e, "gender", gender, genders...)
		np.Gender = gender
	}
	if v, ok := b.str(e, "", "phone"); ok && v != "" {
		checkPhone(e, "phone", v)
		np.Phone = v
	}
	if v, ok := b.str(e, "", "other_phone"); ok {
		np.OtherPhone = v
	}
	readAddress(e, b, np.setString)
	return np
}

// readNames reads first_name and last_name: required on create, not
// emptied on update.
func readNames(e *errs, b body, p *person, create bool) {
	for _, f := range []string{"first_name", "last_name"} {
		v, ok := b.str(e, "", f)
		switch {
		case !ok && !create:
			continue
		case strings.TrimSpace(v) == "" && create:
			if !hasField(*e, f) {
				e.required(f)
			}
		case strings.TrimSpace(v) == "":
			e.invalid(f, f+" must not be empty")
			maxLen(e, f, v, 100)
		default:
			maxLen(e, f, v, 100)
		}
		if f == "first_name" {
			p.FirstName = v
		} else {
			p.LastName = v
		}
	}
}

// readNewPersonRoles reads type first, since it decides whether is_ubo,
// is_director and roles count: a consumer has none of them.
func readNewPersonRoles(e *errs, b body, np *person, corp *corporation) {
	typ, typOK := b.str(e, "", "type")
	if corp != nil {
		allowed := corp.AllowedPersonTypes
		switch {
		case !typOK && len(allowed) > 1 && !hasField(*e, "type"):
			e.required("type")
		case typOK && typ != TypeEmployee && typ != TypeConsumer:
			e.invalid("type", "type must be employee or consumer")
		case typOK && !contains(allowed, typ):
			e.invalid("type", "person type "+typ+" is not allowed for this corporation")
		case typOK:
			np.Type = typ
		}
	}
	isUBO, _ := b.boolean(e, "", "is_ubo")
	isDirector, _ := b.boolean(e, "", "is_director")
	roles, _ := b.strings(e, "", "roles")
	if np.Type == TypeConsumer {
		isUBO, isDirector, roles = false, false, nil
	}
	np.IsUBO, np.IsDirector, np.Roles = isUBO, isDirector, roles
}

// inviteLocked e-mails an employee an invitation whose code is a single-use
// token for POST /person/recover-password, which sets the first password.
func (s *Sim) inviteLocked(p *person, corp *corporation) {
	tok := s.newRecoveryLocked(p.ID)
	s.sendEmailLocked(p.Email, "You are invited to "+corp.Name+". Set your password: https://sandbox.invalid/invite?token="+tok, tok)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

var updatePersonFields = []string{"first_name", "last_name", "country", "nationality", "city", "region",
	"post_code", "street", "date_of_birth", "social_security_number", "position", "ownership",
	"is_politically_exposed", "is_tax_resident", "is_ubo", "is_director", "is_2_fa_enabled", "email",
	"gender", "phone", "other_phone", "is_questionnaire_filled", "political_institution",
	"position_in_political_institution", "roles", "password", "confirm_password", "current_password"}

var staffOnlyPersonFields = []string{"is_2_fa_enabled", "email", "phone"}

func (s *Sim) updatePerson(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	pr := principalOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.scopedPersonLocked(w, pr, chi.URLParam(r, "id"))
	if p == nil {
		return
	}
	self := pr.kind == kindPerson && pr.id == p.ID
	if !s.mayUpdatePersonLocked(w, b, pr, self) {
		return
	}
	var e errs
	b.unknown(&e, "", updatePersonFields...)
	np := readPersonUpdate(&e, b, p)
	newHash := s.readNewPasswordLocked(&e, b, p, self)
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	if np.Email != p.Email && np.emailUnique {
		if other := s.personByEmailLocked(np.Email); other != nil && other.ID != p.ID {
			writeErrors(w, http.StatusConflict, fieldErr("email", "e-mail is already taken", CodeInvalid))
			return
		}
	}
	if newHash != nil {
		np.hash = newHash
	}
	np.UpdatedAt = s.now()
	np.UpdatedBy = s.actorLocked(pr)
	*p = np
	writeJSON(w, http.StatusOK, s.personJSONLocked(p, pr))
}

// mayUpdatePersonLocked answers 403 when the principal may not send this
// body: persons need persons_management.write unless they change
// themselves, some fields are staff only, and a password is changed by
// staff or the person alone.
func (s *Sim) mayUpdatePersonLocked(w http.ResponseWriter, b body, pr principal, self bool) bool {
	if !self && !s.canWritePersonsLocked(pr) {
		forbidden(w, "", "permission "+PermPersonsWrite+" is required")
		return false
	}
	if !pr.isStaff() {
		for _, f := range staffOnlyPersonFields {
			if b.has(f) {
				forbidden(w, f, f+" can be changed by staff only")
				return false
			}
		}
	}
	if b.has("current_password") && pr.kind != kindPerson {
		forbidden(w, "current_password", "current_password is for persons only")
		return false
	}
	if !pr.isStaff() && !self {
		for _, f := range []string{"password", "confirm_password", "current_password"} {
			if b.has(f) {
				forbidden(w, f, "only staff or the person themselves can change a password")
				return false
			}
		}
	}
	return true
}

// readPersonUpdate validates PUT /persons/{id} into a copy of p, so that a
// refused request changes nothing.
func readPersonUpdate(e *errs, b body, p *person) person {
	np := *p
	np.Roles = append([]string(nil), p.Roles...)
	readNames(e, b, &np, false)
	readAddress(e, b, np.setString)
	for _, f := range []string{"position", "other_phone", "political_institution", "position_in_political_institution"} {
		if v, ok := b.str(e, "", f); ok {
			np.setString(f, v)
		}
	}
	if v, ok := b.number(e, "", "ownership"); ok {
		if v < 0 || v > 100 {
			e.invalid("ownership", "ownership must be 0 to 100")
		}
		np.Ownership = v
	}
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"is_politically_exposed", &np.IsPEP}, {"is_tax_resident", &np.IsTaxResident}, {"is_ubo", &np.IsUBO},
		{"is_director", &np.IsDirector}, {"is_questionnaire_filled", &np.IsQuestionnaireFilled},
		{"is_2_fa_enabled", &np.Is2FA}} {
		if v, ok := b.boolean(e, "", f.name); ok {
			*f.dst = v
		}
	}
	if v, ok := b.str(e, "", "gender"); ok {
		oneOf(e, "gender", v, genders...)
		np.Gender = v
	}
	if v, ok := b.strings(e, "", "roles"); ok {
		np.Roles = v
	}
	if v, ok := b.str(e, "", "phone"); ok {
		checkPhone(e, "phone", v)
		np.Phone = v
	}
	if v, ok := b.str(e, "", "email"); ok {
		v = normEmail(v)
		checkEmail(e, "email", v)
		np.Email = v
	}
	if np.Is2FA && np.Phone == "" && b.has("is_2_fa_enabled") {
		e.invalid("is_2_fa_enabled", "two-factor needs a phone")
	}
	if np.Type == TypeConsumer {
		np.IsUBO, np.IsDirector, np.Roles = false, false, nil
	}
	return np
}

func (s *Sim) blockPerson(w http.ResponseWriter, r *http.Request) { s.setBlocked(w, r, true) }

func (s *Sim) restorePerson(w http.ResponseWriter, r *http.Request) { s.setBlocked(w, r, false) }

// setBlocked moves a person between active and blocked (deleted_at set).
// Both moves are idempotent. Blocking revokes the person's tokens.
func (s *Sim) setBlocked(w http.ResponseWriter, r *http.Request, block bool) {
	pr := principalOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.scopedPersonLocked(w, pr, chi.URLParam(r, "id"))
	if p == nil {
		return
	}
	if !s.canWritePersonsLocked(pr) {
		forbidden(w, "", "permission "+PermPersonsWrite+" is required")
		return
	}
	if block && pr.kind == kindPerson && pr.id == p.ID {
		forbidden(w, "", "a person cannot block themselves")
		return
	}
	now := s.now()
	switch {
	case block && p.DeletedAt == nil:
		p.DeletedAt = &now
	case !block:
		p.DeletedAt = nil
	}
	p.UpdatedAt = now
	p.UpdatedBy = s.actorLocked(pr)
	writeJSON(w, http.StatusOK, map[string]any{"id": p.ID})
}

func (s *Sim) getPerson(w http.ResponseWriter, r *http.Request) {
	pr := principalOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.scopedPersonLocked(w, pr, chi.URLParam(r, "id")); p != nil {
		writeJSON(w, http.StatusOK, s.personJSONLocked(p, pr))
	}
}

var personSorts = map[string]string{
	"createdAt": "created_at", "created_at": "created_at", "updatedAt": "updated_at", "updated_at": "updated_at",
	"first_name": "first_name", "firstName": "first_name", "last_name": "last_name", "lastName": "last_name",
	"email": "email",
}

// listPersons lists the persons of the principal's corporation; staff see
// every corporation's, or one with ?corporation_id=.
func (s *Sim) listPersons(w http.ResponseWriter, r *http.Request) {
	pr := principalOf(r)
	if pr.kind == kindIntroducer {
		forbidden(w, "", "introducers cannot manage persons")
		return
	}
	pg, e := s.parsePage(r, "createdAt", "DESC", personSorts)
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	corpID := pr.corpID
	if pr.isStaff() {
		corpID = r.URL.Query().Get("corporation_id")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var items []*person
	for _, p := range s.persons {
		if corpID == "" || p.CorpID == corpID {
			items = append(items, p)
		}
	}
	less := func(a, b *person) int {
		switch pg.key {
		case "first_name":
			return cmp.Compare(strings.ToLower(a.FirstName), strings.ToLower(b.FirstName))
		case "last_name":
			return cmp.Compare(strings.ToLower(a.LastName), strings.ToLower(b.LastName))
		case "email":
			return cmp.Compare(a.Email, b.Email)
		case "updated_at":
			return a.UpdatedAt.Compare(b.UpdatedAt)
		}
		return a.CreatedAt.Compare(b.CreatedAt)
	}
	writeJSON(w, http.StatusOK, paginate(pg, items, less, func(p *person) string { return p.ID },
		func(p *person) any { return s.personItemJSONLocked(p) }))
}
