package banking

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// WalletsService reads and creates corporation wallets.
type WalletsService service

// Wallet types.
const (
	WalletTypeReal    = "real"
	WalletTypePending = "pending"
)

// Adapter names, the upstream's wire values.
const (
	AdapterA = "adapter_a"
	// AdapterB is deprecated upstream.
	AdapterB = "adapter_b"
	AdapterC = "adapter_c"
)

// PurposeCard marks a wallet that may fund cards.
const PurposeCard = "CARD"

// Wallet is the spec's Corporation Wallet. Amount is in minor units.
type Wallet struct {
	ID string `json:"id"`
	// Amount is the available funds in minor units (cents).
	Amount int64 `json:"amount"`
	// Type is "real" or "pending".
	Type     string `json:"type"`
	Name     string `json:"name"`
	Currency string `json:"currency"`
	// Adapter is the payment processor adapter (adapter_a, adapter_b, adapter_c).
	Adapter    string `json:"payment_processor_adapter"`
	IdentityID string `json:"identity_id,omitempty"`
	// Pending is the wallet holding this wallet's reserved funds; nil until
	// the first transaction from or to the wallet.
	Pending     *PendingWallet `json:"pending"`
	CreatedBy   *Actor         `json:"created_by,omitempty"`
	BankAddress *BankAddress   `json:"bank_address,omitempty"`
	// Requisites are the attached requisites, partial (id, number, code, type).
	Requisites       []*Requisites `json:"wallet_requisites,omitempty"`
	Purpose          *string       `json:"purpose"`
	CreatedByLoginID string        `json:"created_by_login_id,omitempty"`
	CreatedAt        Timestamp     `json:"created_at"`
	UpdatedAt        Timestamp     `json:"updated_at"`
}

// PendingWallet is the pending object of a wallet. Its shape is not shown in
// the spec; the client reads id, amount and currency and keeps the rest raw.
type PendingWallet struct {
	ID       string `json:"id"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	// Raw is the object as the upstream sent it.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the raw object next to the fields it understands.
func (p *PendingWallet) UnmarshalJSON(b []byte) error {
	type plain PendingWallet
	var v plain
	if err := roundtrip.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = PendingWallet(v)
	p.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// BankAddress is the bank data of a wallet.
type BankAddress struct {
	Name     string `json:"name"`
	Street   string `json:"street"`
	PostCode string `json:"postCode"`
	City     string `json:"city"`
	Country  string `json:"country"`
}

func walletsPath(corporationID string) string {
	return "corporations/" + pathEscape(corporationID) + "/wallets"
}

// List reads a corporation's wallets (GET /corporations/:id/wallets).
func (s *WalletsService) List(ctx context.Context, corporationID string) ([]*Wallet, error) {
	out, err := call[[]*Wallet](ctx, s.client, http.MethodGet, walletsPath(corporationID), nil)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// Get reads one wallet (GET /corporations/:id/wallets/:walletId).
func (s *WalletsService) Get(ctx context.Context, corporationID, walletID string) (*Wallet, error) {
	return call[Wallet](ctx, s.client, http.MethodGet, walletsPath(corporationID)+"/"+pathEscape(walletID), nil)
}

// RequisitesInput is a pair of account number and bank code of a request:
// an IBAN and BIC for sepa, an account number and sort code for ukLocal.
type RequisitesInput struct {
	Number string `json:"number,omitempty"`
	Code   string `json:"code,omitempty"`
}

// WalletCreateRequest holds the fields of POST /corporations/:id/wallets
// (staff only). Which fields apply depends on Adapter: ManualOrAutomatic,
// Purpose and SEPA.Number on adapter_a; UKLocal, CrossBorder and SEPA on
// adapter_b (deprecated); Currencies on adapter_c.
type WalletCreateRequest struct {
	Adapter           string           `json:"adapter"`
	UKLocal           *RequisitesInput `json:"ukLocal,omitempty"`
	CrossBorder       *RequisitesInput `json:"crossBorder,omitempty"`
	SEPA              *RequisitesInput `json:"sepa,omitempty"`
	ManualOrAutomatic string           `json:"manual_or_automatic,omitempty"`
	Purpose           string           `json:"purpose,omitempty"`
	Currencies        []string         `json:"currencies,omitempty"`
	// Name is not in the spec's field list; the sandbox accepts it and
	// other upstreams may ignore it.
	Name string `json:"name,omitempty"`
}

// Create creates wallets (POST /corporations/:id/wallets). The upstream
// answers the created wallet; for adapter_c, which creates one wallet per
// currency, the answer may be an array. Both shapes are read.
func (s *WalletsService) Create(ctx context.Context, corporationID string, in *WalletCreateRequest) ([]*Wallet, error) {
	raw, err := call[json.RawMessage](ctx, s.client, http.MethodPost, walletsPath(corporationID), in)
	if err != nil {
		return nil, err
	}
	var list []*Wallet
	if err := roundtrip.Unmarshal(*raw, &list); err == nil {
		return list, nil
	}
	one := new(Wallet)
	if err := roundtrip.Unmarshal(*raw, one); err != nil {
		return nil, fmt.Errorf("banking: POST wallets: unexpected response shape: %w", err)
	}
	return []*Wallet{one}, nil
}
