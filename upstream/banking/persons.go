package banking

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/fingraph/fingraph/upstream/roundtrip"
	"github.com/go-json-experiment/json/jsontext"
)

// PersonsService manages persons (employees and consumers) of a corporation
// and the signed-in person ("me").
type PersonsService service

// Person is the spec's Person. List items of GET /persons carry a subset of
// these fields; absent ones stay zero. Objects whose inner shape the spec
// does not show are kept raw.
type Person struct {
	ID        string `json:"id"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	PersonContact
	Gender                  string     `json:"gender,omitempty"`
	Email                   string     `json:"email,omitempty"`
	IsPersonLimitsDisabled  *bool      `json:"is_person_limits_disabled"`
	Longitude               *string    `json:"longitude"`
	Latitude                *string    `json:"latitude"`
	SocialSecurityNumber    string     `json:"social_security_number,omitempty"`
	ScoreAdjustment         *float64   `json:"score_adjustment"`
	EmailDomainCreationDate *string    `json:"email_domain_creation_date"`
	PersonLoginID           string     `json:"person_login_id,omitempty"`
	CreatedAt               Timestamp  `json:"created_at"`
	UpdatedAt               Timestamp  `json:"updated_at"`
	DeletedAt               *Timestamp `json:"deleted_at"`
	IsBlocked               bool       `json:"is_blocked"`
	ProfileLevel            string     `json:"profile_level,omitempty"`
	IsInvitationAccepted    bool       `json:"is_invitation_accepted"`
	// Is2FAEnabled is visible to staff only; nil when not shown.
	Is2FAEnabled                   *bool    `json:"is_2_fa_enabled,omitempty"`
	IsPoliticallyExposed           bool     `json:"is_politically_exposed"`
	PoliticalInstitution           string   `json:"political_institution,omitempty"`
	PositionInPoliticalInstitution string   `json:"position_in_political_institution,omitempty"`
	Ownership                      *float64 `json:"ownership,omitempty"`
	Position                       string   `json:"position,omitempty"`
	IsUBO                          bool     `json:"is_ubo"`
	IsDirector                     bool     `json:"is_director"`
	IsTaxResident                  bool     `json:"is_tax_resident"`
	PrimaryCurrency                string   `json:"primary_currency,omitempty"`
	// IsQuestionnaireFilled is settable by the update routes; the spec's
	// field table does not list it on the Person, so it is nil when the
	// upstream leaves it out (as its listings do).
	IsQuestionnaireFilled *bool `json:"is_questionnaire_filled"`
	// Account holds, among others, the person's corporation; its shape is
	// not shown by the spec.
	Account      Account           `json:"account,omitzero"`
	Identity     json.RawMessage   `json:"identity,omitempty"`
	Login        json.RawMessage   `json:"login,omitempty"`
	Emails       json.RawMessage   `json:"emails,omitempty"`
	Fingerprints []json.RawMessage `json:"fingerprints,omitempty"`
	IPs          []json.RawMessage `json:"ips,omitempty"`
	Roles        []json.RawMessage `json:"roles,omitempty"`
	CreatedBy    *Actor            `json:"created_by,omitempty"`
	UpdatedBy    *Actor            `json:"updated_by,omitempty"`
	// Permissions is filled only by Me: permission name to granted.
	Permissions   map[string]bool `json:"permissions,omitempty"`
	ScreeningInfo *ScreeningInfo  `json:"screening_info,omitempty"`
	// Type is "employee" (default) or "consumer".
	Type string `json:"type,omitempty"`
}

// RoleIDs are the ids of the person's roles. The spec shows the roles
// array without its items' shape and takes role ids on creation: an item is
// read as an id string, or as an object's id.
func (p *Person) RoleIDs() []string {
	ids := make([]string, 0, len(p.Roles))
	for _, raw := range p.Roles {
		var id string
		if json.Unmarshal(raw, &id) == nil {
			if id != "" {
				ids = append(ids, id)
			}
			continue
		}
		var obj struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &obj) == nil && obj.ID != "" {
			ids = append(ids, obj.ID)
		}
	}
	return ids
}

// PersonContact is a person's birth date, phones and address: read back on a
// Person as they are sent on its creation. Empty fields are not sent.
type PersonContact struct {
	DateOfBirth string `json:"date_of_birth,omitempty"`
	Phone       string `json:"phone,omitempty"`
	OtherPhone  string `json:"other_phone,omitempty"`
	Country     string `json:"country,omitempty"`
	Nationality string `json:"nationality,omitempty"`
	Street      string `json:"street,omitempty"`
	City        string `json:"city,omitempty"`
	Region      string `json:"region,omitempty"`
	PostCode    string `json:"post_code,omitempty"`
}

// ScreeningInfo is a person's screening state. A single person carries
// IsPersonUnderReview and PersonProfile; list items carry Status and Profile.
type ScreeningInfo struct {
	IsPersonUnderReview *bool             `json:"is_person_under_review,omitempty"`
	PersonProfile       *ScreeningProfile `json:"person_profile,omitempty"`
	Status              string            `json:"status,omitempty"`
	Profile             *ScreeningProfile `json:"profile,omitempty"`
}

// ScreeningProfile holds the screening flags, refreshed weekly upstream.
type ScreeningProfile struct {
	PoliticallyExposed       bool `json:"politically_exposed"`
	SanctionsListsEntity     bool `json:"sanctions_lists_entity"`
	RelativeOrCloseAssociate bool `json:"relative_or_close_associate"`
	BoardMember              bool `json:"board_member"`
}

// PersonList is a page of persons.
type PersonList = Page[*Person]

// PersonCreateRequest holds the fields of POST /persons. Zero values are not
// sent, leaving the upstream's defaults.
type PersonCreateRequest struct {
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	// Email is required unless the person is a UBO, not a director and has
	// no roles.
	Email      string `json:"email,omitempty"`
	Gender     string `json:"gender"`
	IsUBO      bool   `json:"is_ubo,omitempty"`
	IsDirector bool   `json:"is_director,omitempty"`
	PersonContact
	SocialSecurityNumber string   `json:"social_security_number,omitempty"`
	Roles                []string `json:"roles,omitempty"`
	// Type is required for corporations that allow several person types.
	Type string `json:"type,omitempty"`
	// AccountID is required for staff and ignored for others.
	AccountID string `json:"account_id,omitempty"`
}

// PersonUpdateRequest holds the fields of PUT /persons/:id. Only non-nil
// fields are sent, because absent fields stay unchanged upstream; a pointer
// to a zero value clears or falsifies a field on purpose.
type PersonUpdateRequest struct {
	FirstName                      *string   `json:"first_name,omitempty"`
	LastName                       *string   `json:"last_name,omitempty"`
	Country                        *string   `json:"country,omitempty"`
	Nationality                    *string   `json:"nationality,omitempty"`
	City                           *string   `json:"city,omitempty"`
	Region                         *string   `json:"region,omitempty"`
	PostCode                       *string   `json:"post_code,omitempty"`
	Street                         *string   `json:"street,omitempty"`
	DateOfBirth                    *string   `json:"date_of_birth,omitempty"`
	SocialSecurityNumber           *string   `json:"social_security_number,omitempty"`
	Position                       *string   `json:"position,omitempty"`
	Ownership                      *float64  `json:"ownership,omitempty"`
	IsPoliticallyExposed           *bool     `json:"is_politically_exposed,omitempty"`
	IsTaxResident                  *bool     `json:"is_tax_resident,omitempty"`
	IsUBO                          *bool     `json:"is_ubo,omitempty"`
	IsDirector                     *bool     `json:"is_director,omitempty"`
	Is2FAEnabled                   *bool     `json:"is_2_fa_enabled,omitempty"` // staff only
	Email                          *string   `json:"email,omitempty"`           // staff only
	Gender                         *string   `json:"gender,omitempty"`
	Phone                          *string   `json:"phone,omitempty"` // staff only
	OtherPhone                     *string   `json:"other_phone,omitempty"`
	IsQuestionnaireFilled          *bool     `json:"is_questionnaire_filled,omitempty"`
	PoliticalInstitution           *string   `json:"political_institution,omitempty"`
	PositionInPoliticalInstitution *string   `json:"position_in_political_institution,omitempty"`
	Roles                          *[]string `json:"roles,omitempty"`
	Password                       *string   `json:"password,omitempty"`
	ConfirmPassword                *string   `json:"confirm_password,omitempty"`
	CurrentPassword                *string   `json:"current_password,omitempty"` // person members only
}

// MeUpdateRequest holds the fields of PUT /persons/me. Only non-nil fields
// are sent. The phone is changed with ChangeMyPhone instead, because that
// route answers with a two-factor step rather than a Person.
type MeUpdateRequest struct {
	IsUBO                          *bool     `json:"is_ubo,omitempty"`
	IsDirector                     *bool     `json:"is_director,omitempty"`
	Gender                         *string   `json:"gender,omitempty"`
	OtherPhone                     *string   `json:"other_phone,omitempty"`
	IsQuestionnaireFilled          *bool     `json:"is_questionnaire_filled,omitempty"`
	PoliticalInstitution           *string   `json:"political_institution,omitempty"`
	PositionInPoliticalInstitution *string   `json:"position_in_political_institution,omitempty"`
	Roles                          *[]string `json:"roles,omitempty"`
	// CurrentPassword is required to change the password.
	CurrentPassword *string `json:"current_password,omitempty"`
	Password        *string `json:"password,omitempty"`
	ConfirmPassword *string `json:"confirm_password,omitempty"`
}

// Create creates a person (POST /persons).
func (s *PersonsService) Create(ctx context.Context, in *PersonCreateRequest) (*Person, error) {
	return call[Person](ctx, s.client, http.MethodPost, "persons", in)
}

// Update changes the sent fields of a person (PUT /persons/:id).
func (s *PersonsService) Update(ctx context.Context, id string, in *PersonUpdateRequest) (*Person, error) {
	return call[Person](ctx, s.client, http.MethodPut, "persons/"+pathEscape(id), in)
}

// Get reads a person (GET /persons/:id).
func (s *PersonsService) Get(ctx context.Context, id string) (*Person, error) {
	return call[Person](ctx, s.client, http.MethodGet, "persons/"+pathEscape(id), nil)
}

// Me reads the signed-in person including permissions (GET /persons/me).
func (s *PersonsService) Me(ctx context.Context) (*Person, error) {
	return call[Person](ctx, s.client, http.MethodGet, "persons/me", nil)
}

// UpdateMe changes the signed-in person's sent fields (PUT /persons/me).
func (s *PersonsService) UpdateMe(ctx context.Context, in *MeUpdateRequest) (*Person, error) {
	return call[Person](ctx, s.client, http.MethodPut, "persons/me", in)
}

// Block blocks a person (DELETE /persons/:id) and returns the id the upstream
// confirms; the person keeps existing with deleted_at set.
func (s *PersonsService) Block(ctx context.Context, id string) (string, error) {
	return callID(ctx, s.client, http.MethodDelete, "persons/"+pathEscape(id))
}

// Restore unblocks a person (PUT /persons/:id/restore) and returns the id.
func (s *PersonsService) Restore(ctx context.Context, id string) (string, error) {
	return callID(ctx, s.client, http.MethodPut, "persons/"+pathEscape(id)+"/restore")
}

// List reads a page of persons (GET /persons).
func (s *PersonsService) List(ctx context.Context, opts *ListOptions) (*PersonList, error) {
	return call[PersonList](ctx, s.client, http.MethodGet, opts.encode("persons"), nil)
}

// PhoneChange is the two-step phone change of the signed-in person. Step 1
// sends CurrentPassword and Phone; step 2 repeats it with TwoFactorCode (and,
// for the v3 shape, ChallengeID).
type PhoneChange struct {
	CurrentPassword string
	Phone           string
	TwoFactorCode   string
	ChallengeID     string
}

// PhoneChangeResult is either the two-factor step (step 1) or the person
// with the new phone (step 2).
type PhoneChangeResult struct {
	TwoFactor *TwoFactor
	Person    *Person
}

type phoneChangeBody struct {
	CurrentPassword string           `json:"current_password,omitempty"`
	Phone           string           `json:"phone,omitempty"`
	TwoFACode       string           `json:"two_fa_code,omitempty"`
	Challenge       *challengeAnswer `json:"challenge,omitempty"`
}

// ChangeMyPhone runs one step of the phone change (PUT /persons/me). In the
// v2 shape step 2 sends only two_fa_code, as the spec's route table shows; in
// the v3 shape it repeats the original fields plus challenge.two_fa.
func (s *PersonsService) ChangeMyPhone(ctx context.Context, in PhoneChange) (*PhoneChangeResult, error) {
	var body phoneChangeBody
	code, ch := (*service)(s).twoFactorAnswer(in.TwoFactorCode, in.ChallengeID)
	switch {
	case in.TwoFactorCode == "":
		body = phoneChangeBody{CurrentPassword: in.CurrentPassword, Phone: in.Phone}
	case ch != nil:
		body = phoneChangeBody{CurrentPassword: in.CurrentPassword, Phone: in.Phone, Challenge: ch}
	default:
		body = phoneChangeBody{TwoFACode: code}
	}
	out, err := call[PhoneChangeResult](ctx, s.client, http.MethodPut, "persons/me", body)
	if err != nil {
		return nil, err
	}
	if out.TwoFactor == nil && out.Person == nil {
		return nil, errors.New("banking: phone change response is empty")
	}
	return out, nil
}

// UnmarshalJSON reads either answer of a phone change step: a two-factor
// step (no id, a challenge) or the changed Person.
func (r *PhoneChangeResult) UnmarshalJSON(raw []byte) error {
	var probe struct {
		twoFactorProbe
		ID string `json:"id"`
	}
	if err := roundtrip.Unmarshal(raw, &probe); err != nil {
		return errors.New("banking: phone change response is not a JSON object")
	}
	if probe.ID == "" {
		if tf := probe.twoFactor(); tf != nil {
			*r = PhoneChangeResult{TwoFactor: tf}
			return nil
		}
	}
	p := new(Person)
	if err := roundtrip.Unmarshal(raw, p); err != nil {
		return errors.New("banking: phone change response is not a Person")
	}
	*r = PhoneChangeResult{Person: p}
	return nil
}

// Account is a person's account object as the upstream sent it (Raw), with
// the two ids a person's corporation is read from, decoded once with the
// person: corporation_id when present, else the account's own id. The spec
// does not show the object's shape; an account that is not an object (or
// null) has neither id.
type Account struct {
	Raw           json.RawMessage
	ID            string
	CorporationID string
}

// IsZero reports whether the upstream sent no account (or null).
func (a Account) IsZero() bool { return len(a.Raw) == 0 }

// UnmarshalJSON reads an account object.
func (a *Account) UnmarshalJSON(b []byte) error { return roundtrip.Unmarshal(b, a) }

// UnmarshalJSONFrom reads an account from the decoder of an upstream answer.
func (a *Account) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*a = Account{}
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	if v.Kind() == 'n' {
		return nil
	}
	a.Raw = bytes.Clone(v)
	var ids struct {
		ID            string `json:"id"`
		CorporationID string `json:"corporation_id"`
	}
	if v.Kind() == '{' && roundtrip.Unmarshal(v, &ids) == nil {
		a.ID, a.CorporationID = ids.ID, ids.CorporationID
	}
	return nil
}

// MarshalJSON writes the account as the upstream sent it.
func (a Account) MarshalJSON() ([]byte, error) {
	if len(a.Raw) == 0 {
		return []byte("null"), nil
	}
	return a.Raw, nil
}

// Corporation is the id of the person's corporation: corporation_id when
// the account has one, else the account's id (which the corporation routes
// also accept).
func (a Account) Corporation() string {
	if a.CorporationID != "" {
		return a.CorporationID
	}
	return a.ID
}
