package banking

import (
	"context"
	"net/http"
)

// Requisites is the spec's Corporation Wallet Requisites: the SEPA IBAN and
// BIC of a wallet.
type Requisites struct {
	ID string `json:"id"`
	// Number is the IBAN.
	Number string `json:"number"`
	// Code is the BIC.
	Code string `json:"code"`
	// Type is "sepa" (the wallet example also shows "cross-border").
	Type       string    `json:"type"`
	IdentityID string    `json:"identity_id,omitempty"`
	CreatedAt  Timestamp `json:"created_at"`
	UpdatedAt  Timestamp `json:"updated_at"`
}

// RequisitesService manages a corporation's wallet requisites.
type RequisitesService service

// RequisitesCreateRequest holds the fields of creating or attaching
// requisites. SEPA is required when ManualOrAutomatic is "manual"; WalletID
// is for Attach only.
type RequisitesCreateRequest struct {
	Adapter           string           `json:"adapter"`
	ManualOrAutomatic string           `json:"manual_or_automatic"`
	SEPA              *RequisitesInput `json:"sepa,omitempty"`
	WalletID          string           `json:"wallet_id,omitempty"`
}

func requisitesPath(corporationID string) string {
	return "corporations/" + pathEscape(corporationID) + "/wallet-requisites"
}

// List reads the corporation's requisites (GET .../wallet-requisites).
func (s *RequisitesService) List(ctx context.Context, corporationID string) ([]*Requisites, error) {
	out, err := call[[]*Requisites](ctx, s.client, http.MethodGet, requisitesPath(corporationID), nil)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// Create creates requisites, not attached to a wallet (POST
// .../wallet-requisites).
func (s *RequisitesService) Create(ctx context.Context, corporationID string, in *RequisitesCreateRequest) ([]*Requisites, error) {
	in2 := *in
	in2.WalletID = ""
	out, err := call[[]*Requisites](ctx, s.client, http.MethodPost, requisitesPath(corporationID), &in2)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// Attach creates requisites attached to in.WalletID (POST
// .../wallet-requisites/attach; adapter_a only).
func (s *RequisitesService) Attach(ctx context.Context, corporationID string, in *RequisitesCreateRequest) ([]*Requisites, error) {
	out, err := call[[]*Requisites](ctx, s.client, http.MethodPost, requisitesPath(corporationID)+"/attach", in)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// Delete removes requisites and answers the removed id (DELETE
// .../wallet-requisites/:id).
func (s *RequisitesService) Delete(ctx context.Context, corporationID, id string) (string, error) {
	out, err := call[idResponse](ctx, s.client, http.MethodDelete, requisitesPath(corporationID)+"/"+pathEscape(id), nil)
	if err != nil {
		return "", err
	}
	return out.ID, nil
}
