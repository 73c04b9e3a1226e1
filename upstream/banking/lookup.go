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
func (s *LookupService) IsSEPAEnabled(ctx context.Context, sourceID, iban string) (bool, error) {
	q := url.Values{"source_id": {sourceID}, "iban": {iban}}
	out, err := call[struct {
		IsSEPAEnabledIBAN bool `json:"is_sepa_enabled_iban"`
	}](ctx, s.client, http.MethodGet, "lookup/ibans/is-sepa-enabled?"+q.Encode(), nil)
	if err != nil {
		return false, err
	}
	return out.IsSEPAEnabledIBAN, nil
}
