package banking

import (
	"context"
	"net/http"
	"net/url"
)

// LookupService answers reference questions.
type LookupService service

// IsSEPAEnabled reports whether a transfer from the corporate wallet
// sourceID can reach iban by SEPA (GET /lookup/ibans/is-sepa-enabled).
func (s *LookupService) IsSEPAEnabled(ctx context.Context, sourceID, iban string) (bool, *Response, error) {
	q := url.Values{"source_id": {sourceID}, "iban": {iban}}
	req, err := s.client.NewRequest(ctx, http.MethodGet, "lookup/ibans/is-sepa-enabled?"+q.Encode(), nil)
	if err != nil {
		return false, nil, err
	}
	var out struct {
		IsSEPAEnabledIBAN bool `json:"is_sepa_enabled_iban"`
	}
	resp, err := s.client.Do(req, &out)
	if err != nil {
		return false, resp, err
	}
	return out.IsSEPAEnabledIBAN, resp, nil
}
