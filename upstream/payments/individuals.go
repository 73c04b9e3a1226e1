package payments

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// IndividualsService handles individual onboarding.
type IndividualsService service

// Individual is a person going through onboarding.
type Individual struct {
	ID        string    `json:"id"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	FormURL   string    `json:"form_url,omitempty"`
}

// Onboarding statuses.
const (
	StatusOnboardingRequested    = "onboarding_requested"
	StatusOnboardingDataProvided = "onboarding_data_provided"
)

// Onboard sends an individual that is still in onboarding_requested to the
// onboarding form again. The spec does not show this route's version, body
// or response; the upstream documents it unversioned, with the access token.
func (s *IndividualsService) Onboard(ctx context.Context, id string) (*Individual, error) {
	return call[Individual](ctx, s.client, KeyAccessToken, http.MethodPost, "individuals/"+url.PathEscape(id)+"/onboard", nil)
}

// List lists individuals with a status (an upstream addition for finding
// those who dropped off the onboarding form).
func (s *IndividualsService) List(ctx context.Context, status string) ([]Individual, error) {
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	return callList[Individual](ctx, s.client, KeyAccessToken, http.MethodGet, "v3/individuals?"+q.Encode(), nil)
}
