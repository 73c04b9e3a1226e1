package banking

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// CorporationsService manages corporations: sign-up, reading, staff updates
// and settings. The spec has no route to read one corporation by id other
// than the current one; callers list and filter, or use Current.
type CorporationsService service

// Corporation is the spec's Corporation.
type Corporation struct {
	ID        string  `json:"id"`
	AccountID string  `json:"account_id,omitempty"`
	Name      string  `json:"name"`
	Email     string  `json:"email,omitempty"`
	Address   string  `json:"address,omitempty"`
	City      *string `json:"city"`
	Region    *string `json:"region"`
	PostCode  *string `json:"post_code"`
	// Country is a two-letter code from the accepted list.
	Country string `json:"country,omitempty"`
	// Currency is one of USD, EUR, GBP, SEK, DKK, NOK.
	Currency    string     `json:"currency,omitempty"`
	CreatedAt   Timestamp  `json:"created_at"`
	OnboardedAt Timestamp  `json:"onboarded_at"`
	DeletedAt   *Timestamp `json:"deleted_at"`
	CreatedBy   *Actor     `json:"created_by,omitempty"`
	UpdatedBy   *Actor     `json:"updated_by,omitempty"`

	Identity                   *CorporationIdentity `json:"identity,omitempty"`
	IsAnotherBankAccount       bool                 `json:"is_another_bank_account"`
	IsInitialApplicationFilled bool                 `json:"is_initial_application_filled"`
	// IsOnboarded false disables every operation on the corporation's wallets.
	IsOnboarded          bool                  `json:"is_onboarded"`
	KYCDataProvidedByID  *string               `json:"kyc_data_provided_by_id"`
	KYCDataProvider      *KYCDataProvider      `json:"kyc_data_provider"`
	Questionnaire        json.RawMessage       `json:"questionnaire,omitempty"`
	OverallScreeningInfo *OverallScreeningInfo `json:"overall_screening_info,omitempty"`
}

// CorporationIdentity is the corporate identity of a corporation.
type CorporationIdentity struct {
	ID string `json:"id"`
	// Type is "corporate".
	Type                  string `json:"type"`
	IsKYCVerified         bool   `json:"is_kyc_verified"`
	IsQuestionnaireFilled bool   `json:"is_questionnaire_filled"`
}

// KYCDataProvider is the person who provided a corporation's KYC data.
type KYCDataProvider struct {
	ID        string `json:"id"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

// OverallScreeningInfo is a corporation's screening state.
type OverallScreeningInfo struct {
	IsCorporationUnderReview bool              `json:"is_corporation_under_review"`
	CorporationProfile       *ScreeningProfile `json:"corporation_profile,omitempty"`
	CorporateUsersProfile    *ScreeningProfile `json:"corporate_users_profile,omitempty"`
}

// CorporationList is a page of corporations.
type CorporationList = Page[*Corporation]

// CorporationSignUpRequest holds the fields of POST /corporation/signup. The
// spec spells them in camelCase; the captcha travels as recaptcha.
type CorporationSignUpRequest struct {
	CompanyName string `json:"companyName"`
	Email       string `json:"email"`
	FirstName   string `json:"firstName"`
	LastName    string `json:"lastName"`
	Phone       string `json:"phone"`
	Country     string `json:"country"`
	// Captcha is the captcha response token.
	Captcha string `json:"recaptcha"`
}

// CorporationUpdateRequest holds the fields of PUT /corporation/:id (staff
// only). Only non-nil fields are sent; absent fields stay unchanged.
type CorporationUpdateRequest struct {
	Name    *string `json:"name,omitempty"`
	Email   *string `json:"email,omitempty"`
	Country *string `json:"country,omitempty"`
	// Currency accepts only EUR.
	Currency      *string `json:"currency,omitempty"`
	City          *string `json:"city,omitempty"`
	Region        *string `json:"region,omitempty"`
	PostCode      *string `json:"post_code,omitempty"`
	Address       *string `json:"address,omitempty"`
	IsKYCVerified *bool   `json:"is_kyc_verified,omitempty"`
	// IsOnboarded true moves the corporation to onboarded.
	IsOnboarded *bool `json:"is_onboarded,omitempty"`
}

// CorporationSettings is the spec's Corporation settings.
type CorporationSettings struct {
	// ID is the corporation id.
	ID string `json:"id"`
	// AllowedPersonTypes lists employee and/or consumer; employee is
	// always assigned.
	AllowedPersonTypes []string  `json:"allowed_person_types"`
	CreatedAt          Timestamp `json:"created_at"`
	UpdatedAt          Timestamp `json:"updated_at"`
}

// CorporationSettingsUpdate holds the fields of PUT /corporations/:id/settings.
type CorporationSettingsUpdate struct {
	AllowedPersonTypes []string `json:"allowed_person_types,omitempty"`
}

// SignUp registers a corporation (POST /corporation/signup, no token) and
// returns its id; the upstream e-mails further instructions.
func (s *CorporationsService) SignUp(ctx context.Context, in *CorporationSignUpRequest) (string, error) {
	out, err := callPublic[idResponse](ctx, s.client, http.MethodPost, "corporation/signup", in)
	if err != nil {
		return "", err
	}
	return out.ID, nil
}

// List reads a page of corporations (GET /corporations).
func (s *CorporationsService) List(ctx context.Context, opts *ListOptions) (*CorporationList, error) {
	return call[CorporationList](ctx, s.client, http.MethodGet, opts.encode("corporations"), nil)
}

// Current reads the signed-in principal's corporation (GET /corporations/current).
func (s *CorporationsService) Current(ctx context.Context) (*Corporation, error) {
	return call[Corporation](ctx, s.client, http.MethodGet, "corporations/current", nil)
}

// Update changes the sent fields of a corporation (PUT /corporation/:id,
// staff only; note the singular path).
func (s *CorporationsService) Update(ctx context.Context, id string, in *CorporationUpdateRequest) (*Corporation, error) {
	return call[Corporation](ctx, s.client, http.MethodPut, "corporation/"+pathEscape(id), in)
}

// Settings reads a corporation's settings (GET /corporations/:id/settings).
func (s *CorporationsService) Settings(ctx context.Context, id string) (*CorporationSettings, error) {
	return call[CorporationSettings](ctx, s.client, http.MethodGet, settingsPath(id), nil)
}

// UpdateSettings changes a corporation's settings (PUT
// /corporations/:id/settings). The spec does not show the response, so the
// result is nil unless the upstream answers with a settings object; callers
// needing the new state read it with Settings.
func (s *CorporationsService) UpdateSettings(ctx context.Context, id string, in *CorporationSettingsUpdate) (*CorporationSettings, error) {
	out, err := call[maybeSettings](ctx, s.client, http.MethodPut, settingsPath(id), in)
	if err != nil {
		return nil, err
	}
	return out.settings, nil
}

func settingsPath(id string) string { return "corporations/" + pathEscape(id) + "/settings" }

// maybeSettings is the unspecified answer of a settings update: a settings
// object when the upstream sends one, nothing otherwise. Any other shape is
// not an error, because the update itself succeeded.
type maybeSettings struct{ settings *CorporationSettings }

// UnmarshalJSON keeps an object carrying allowed_person_types, ignores the rest.
func (m *maybeSettings) UnmarshalJSON(b []byte) error {
	var probe map[string]json.RawMessage
	if roundtrip.Unmarshal(b, &probe) != nil {
		return nil
	}
	if _, ok := probe["allowed_person_types"]; !ok {
		return nil
	}
	out := new(CorporationSettings)
	if roundtrip.Unmarshal(b, out) == nil {
		m.settings = out
	}
	return nil
}
