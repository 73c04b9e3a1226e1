package banking

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// TransactionsService creates conversions.
type TransactionsService service

// Authorization codes of a transaction; they act as its states.
const (
	TxApproved    = 0
	TxAuthorized  = 1
	TxDeclined    = 10
	TxRefunded    = 21
	TxHold        = 22
	TxRejected    = 30
	TxPending     = 40
	TxPendingAuth = 41
	TxUnderReview = 42
	TxInitialized = 43
)

var txStatusNames = map[int]string{
	TxApproved: "APPROVED", TxAuthorized: "AUTHORIZED", TxDeclined: "DECLINED", TxRefunded: "REFUNDED",
	TxHold: "HOLD", TxRejected: "REJECTED", TxPending: "PENDING", TxPendingAuth: "PENDING_AUTH",
	TxUnderReview: "UNDER_REVIEW", TxInitialized: "INITIALIZED",
}

// TransactionStatusName names an authorization code, "" when unknown.
func TransactionStatusName(code int) string { return txStatusNames[code] }

// Transaction is the spec's Transaction. Amounts are minor units; the
// amount_* and charge_* fields are the amount and the charge in the
// equivalent of each currency.
type Transaction struct {
	ID string `json:"id"`

	AmountDKK int64 `json:"amount_dkk"`
	AmountEUR int64 `json:"amount_eur"`
	AmountGBP int64 `json:"amount_gbp"`
	AmountNOK int64 `json:"amount_nok"`
	AmountSEK int64 `json:"amount_sek"`
	AmountUSD int64 `json:"amount_usd"`
	ChargeDKK int64 `json:"charge_dkk"`
	ChargeEUR int64 `json:"charge_eur"`
	ChargeGBP int64 `json:"charge_gbp"`
	ChargeNOK int64 `json:"charge_nok"`
	ChargeSEK int64 `json:"charge_sek"`
	ChargeUSD int64 `json:"charge_usd"`

	ExchangeRate       *float64   `json:"exchange_rate"`
	ChargeExchangeRate *float64   `json:"charge_exchange_rate"`
	CreatedAt          Timestamp  `json:"created_at"`
	UpdatedAt          Timestamp  `json:"updated_at"`
	DeletedAt          *Timestamp `json:"deleted_at"`
	CreatedBy          *Actor     `json:"created_by,omitempty"`
	// Status's shape is not shown in the spec; StatusCode reads it.
	Status json.RawMessage `json:"status,omitempty"`
	Score  float64         `json:"score"`
	// ScoreRangeID is the scoring range the score falls in.
	ScoreRangeID string `json:"score_range_id,omitempty"`
	// SourceAmount is the amount reserved on the source wallet.
	SourceAmount   int64  `json:"source_amount"`
	SourceCurrency string `json:"source_currency"`
	TargetAmount   int64  `json:"target_amount"`
	TargetCurrency string `json:"target_currency"`
	// SourceCounterpartyID and TargetCounterpartyID are the wallets.
	SourceCounterpartyID string `json:"source_counterparty_id"`
	TargetCounterpartyID string `json:"target_counterparty_id"`
	// Type is convert, transfer-outgoing, transfer-incoming, invoice-payment, ...
	Type string `json:"type"`
}

// StatusCode reads the authorization code from the status object
// ({"code": n}) or a bare number; ok is false when neither is there.
func (t *Transaction) StatusCode() (code int, ok bool) {
	if len(t.Status) == 0 {
		return 0, false
	}
	if roundtrip.Unmarshal(t.Status, &code) == nil {
		return code, true
	}
	var obj struct {
		Code *int `json:"code"`
	}
	if roundtrip.Unmarshal(t.Status, &obj) == nil && obj.Code != nil {
		return *obj.Code, true
	}
	return 0, false
}

// ConversionRequest is the body of POST /transactions for a conversion:
// Amount (minor units) in Currency, the currency converted into, from the
// wallet SourceID. TargetID is optional and not in the spec's table (its
// error codes name a target); empty lets the upstream choose the
// corporation's wallet in Currency.
type ConversionRequest struct {
	Amount   int64
	Currency string
	SourceID string
	TargetID string
}

type conversionBody struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	Source   idRef  `json:"source"`
	Target   *idRef `json:"target,omitempty"`
	Type     string `json:"type"`
}

type idRef struct {
	ID string `json:"id"`
}

// CreateConversion creates a conversion (POST /transactions, type
// convert). Two-factor is disabled for conversions. It is not idempotent
// upstream: callers that retry must deduplicate themselves.
func (s *TransactionsService) CreateConversion(ctx context.Context, in *ConversionRequest) (*Transaction, error) {
	b := conversionBody{Amount: in.Amount, Currency: in.Currency, Source: idRef{in.SourceID}, Type: "convert"}
	if in.TargetID != "" {
		b.Target = &idRef{in.TargetID}
	}
	return call[Transaction](ctx, s.client, http.MethodPost, "transactions", b)
}

// TransactionList is a page of transactions.
type TransactionList struct {
	List []*Transaction `json:"list"`
	Meta Meta           `json:"meta"`
}

// ListByWallet reads a page of the transactions from or to a wallet (GET
// /corporations/:id/wallets/:walletId/transactions). The spec does not show
// a listing of transactions other than card transactions: an upstream
// without one answers 404, and a caller must then treat what it looked for
// as unknown, never as absent.
func (s *TransactionsService) ListByWallet(ctx context.Context, corporationID, walletID string, opts *ListOptions) (*TransactionList, error) {
	path := "corporations/" + pathEscape(corporationID) + "/wallets/" + pathEscape(walletID) + "/transactions"
	return call[TransactionList](ctx, s.client, http.MethodGet, opts.encode(path), nil)
}
