package banking

import (
	"context"
	"encoding/json"
	"net/http"
)

// CardsService issues and reads virtual cards, reads their credentials and
// transactions, and simulates card transactions. Like every banking route
// they live under the version (/v2/cards): the spec's tables print paths
// without it, and its Versioning rule 1 says the version is common to all.
type CardsService service

// Card statuses.
const (
	CardActive   = "ACTIVE"
	CardInactive = "INACTIVE"
	CardCanceled = "CANCELED"
	CardLost     = "LOST"
	CardStolen   = "STOLEN"
	CardPending  = "PENDING"
)

// The only values the issue route accepts.
const (
	CardTypeVirtual  = "VIRTUAL"
	CardBrandMC      = "MASTERCARD"
	CardRegionEurope = "EUROPE"
	CardCurrencyEUR  = "EUR"
)

// Cardholder types.
const (
	CardholderPrimary    = "PRIMARY"
	CardholderAuthorised = "AUTHORISED"
)

// Card is the spec's Card. It never carries the full PAN or the CVC: those
// come only from Credentials.
type Card struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	// AvailableBalance is in minor units, derived from the card's limits.
	AvailableBalance int64         `json:"available_balance"`
	Expiry           CardExpiry    `json:"expiry"`
	DisplayName      string        `json:"display_name"`
	FundingSourceID  string        `json:"funding_source_id"`
	Type             string        `json:"type"`
	Brand            string        `json:"brand"`
	Region           string        `json:"region"`
	Currency         string        `json:"currency"`
	Address          *CardAddress  `json:"address,omitempty"`
	EmbossedData     *EmbossedData `json:"embossed_data,omitempty"`
	Cardholder       CardholderRef `json:"cardholder"`
	PAN              MaskedPAN     `json:"pan"`
	CreatedAt        Timestamp     `json:"created_at"`
	ModifiedAt       Timestamp     `json:"modified_at"`
}

// CardExpiry is a card's expiry; the spec sends both parts as strings.
type CardExpiry struct {
	Year  string `json:"year"`
	Month string `json:"month"`
}

// CardAddress is the address object of cards, companies and cardholders.
type CardAddress struct {
	Street   string  `json:"street"`
	Country  string  `json:"country"`
	PostCode string  `json:"post_code"`
	City     string  `json:"city"`
	Region   *string `json:"region,omitempty"`
}

// EmbossedData is what is printed on a card.
type EmbossedData struct {
	FirstName   string `json:"embossed_first_name"`
	LastName    string `json:"embossed_last_name"`
	CompanyName string `json:"embossed_company_name,omitempty"`
}

// CardholderRef links a card to its cardholder; ExternalID is the person id.
type CardholderRef struct {
	ExternalID string `json:"external_id"`
	ID         string `json:"id"`
}

// MaskedPAN is the part of a card number that may be shown.
type MaskedPAN struct {
	BIN      string `json:"bin"`
	LastFour string `json:"last_four"`
}

// CardCredentials are a card's secrets. Both print as [REDACTED]; callers
// Reveal them only to answer the one request that asked.
type CardCredentials struct {
	PAN  Secret `json:"pan"`
	CVC2 Secret `json:"cvc2"`
}

// IssueCardRequest is the body of POST /cards/issue.
type IssueCardRequest struct {
	Card       IssueCardDetails `json:"card"`
	Company    IssueCardCompany `json:"company"`
	Cardholder IssueCardholder  `json:"cardholder"`
	// TemplateID is optional; only one predefined template exists.
	TemplateID string `json:"template_id,omitempty"`
}

// IssueCardDetails is the card part of an issue request.
type IssueCardDetails struct {
	Expiry          CardExpiry `json:"expiry"`
	DisplayName     string     `json:"display_name,omitempty"`
	FundingSourceID string     `json:"funding_source_id"`
	Type            string     `json:"type"`
	Brand           string     `json:"brand"`
	Region          string     `json:"region"`
	Currency        string     `json:"currency"`
}

// IssueCardCompany is the company part of an issue request.
type IssueCardCompany struct {
	// ExternalID is the corporate account id.
	ExternalID string      `json:"external_id"`
	Name       string      `json:"name"`
	Email      string      `json:"email"`
	Phone      string      `json:"phone,omitempty"`
	Address    CardAddress `json:"address"`
}

// IssueCardholder is the cardholder part of an issue request.
type IssueCardholder struct {
	// ExternalID is a person of the corporation.
	ExternalID string       `json:"external_id"`
	FirstName  string       `json:"first_name"`
	LastName   string       `json:"last_name"`
	Type       string       `json:"type"`
	Phone      string       `json:"phone"`
	Email      string       `json:"email"`
	Address    *CardAddress `json:"address,omitempty"`
}

// SimulateCardRequest is the body of POST /card/simulation.
type SimulateCardRequest struct {
	CardID string `json:"card_id"`
	// Amount is in minor units.
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// Authorisation is a simulation's answer: authorised, or declined with a
// card authorisation code.
type Authorisation struct {
	Authorised bool   `json:"authorised"`
	Code       string `json:"code"`
}

// CardTransaction is a card's Transaction. Only the fields a card
// transaction needs are typed; the spec leaves status, meta, source and
// target unshaped, so they stay raw.
type CardTransaction struct {
	ID             string          `json:"id"`
	Type           string          `json:"type"`
	AmountEUR      *int64          `json:"amount_eur"`
	SourceAmount   int64           `json:"source_amount"`
	SourceCurrency string          `json:"source_currency"`
	TargetAmount   int64           `json:"target_amount"`
	TargetCurrency string          `json:"target_currency"`
	Status         json.RawMessage `json:"status,omitempty"`
	Meta           json.RawMessage `json:"meta,omitempty"`
	Source         json.RawMessage `json:"source,omitempty"`
	Target         json.RawMessage `json:"target,omitempty"`
	CreatedAt      Timestamp       `json:"created_at"`
	UpdatedAt      Timestamp       `json:"updated_at"`
	CreatedBy      *Actor          `json:"created_by,omitempty"`
}

// CardTransactionList is a page of card transactions.
type CardTransactionList struct {
	List []*CardTransaction `json:"list"`
	Meta Meta               `json:"meta"`
}

// List reads the cards the principal may see (GET /cards).
func (s *CardsService) List(ctx context.Context) ([]*Card, error) {
	out, err := call[[]*Card](ctx, s.client, http.MethodGet, "cards", nil)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// Get reads one card (GET /cards/:id).
func (s *CardsService) Get(ctx context.Context, id string) (*Card, error) {
	return call[Card](ctx, s.client, http.MethodGet, "cards/"+pathEscape(id), nil)
}

// Credentials reads a card's PAN and CVC (GET /cards/:id/credentials).
func (s *CardsService) Credentials(ctx context.Context, id string) (*CardCredentials, error) {
	return call[CardCredentials](ctx, s.client, http.MethodGet, "cards/"+pathEscape(id)+"/credentials", nil)
}

// Transactions reads a page of a card's transactions (GET
// /cards/:id/transactions with the pagination query).
func (s *CardsService) Transactions(ctx context.Context, id string, opts *ListOptions) (*CardTransactionList, error) {
	return call[CardTransactionList](ctx, s.client, http.MethodGet, opts.encode("cards/"+pathEscape(id)+"/transactions"), nil)
}

// Issue issues a card (POST /cards/issue) and returns its id.
func (s *CardsService) Issue(ctx context.Context, in *IssueCardRequest) (string, error) {
	out, err := call[idResponse](ctx, s.client, http.MethodPost, "cards/issue", in)
	if err != nil {
		return "", err
	}
	return out.ID, nil
}

// Simulate simulates a card transaction (POST /card/simulation). A decline
// is an answer, not an error: Authorised false with the code.
func (s *CardsService) Simulate(ctx context.Context, in *SimulateCardRequest) (*Authorisation, error) {
	return call[Authorisation](ctx, s.client, http.MethodPost, "card/simulation", in)
}

// authorisationNames are the spec's card authorisation codes.
var authorisationNames = map[string]string{
	"00": "APPROVED", "01": "REFER_TO_CARD_ISSUER", "02": "REFER_TO_CARD_ISSUER_SPECIAL",
	"03": "INVALID_MERCHANT", "04": "PICK_UP_CARD", "05": "DO_NOT_HONOUR", "06": "ERROR",
	"07": "PICK_UP_CARD_SPECIAL", "09": "REQUEST_IN_PROGRESS", "12": "INVALID_TRANSACTION",
	"13": "INVALID_AMOUNT", "14": "INVALID_CARD_NUMBER", "19": "REENTER_TRANSACTION", "21": "NO_ACTION_TAKEN",
	"30": "FORMAT_ERROR", "41": "LOSR_CARD_PICK_UP", "43": "STOLEN_CARD_PICK_UP", "51": "NOT_SUFFICENT_FUNDS",
	"52": "NO_CHECKING_ACCOUNT", "53": "NO_SAVING_ACCOUNTS", "54": "EXPIRED_CARD", "55": "PIN_INCORRECT",
	"57": "TRANSACTION_NOT_ALLOWED_FOR_CARDHOLDER", "58": "TRANSACTION_NOT_ALLOWED_FOR_MERCHANT",
	"61": "EXCEEDS_WITHDRAWAL_AMOUNT_LIMIT", "62": "RESTRICTED_CARD", "63": "SECURITY_VIOLATION",
	"65": "ACTIVITY_COUNT_LIMIT_EXCEEDED", "75": "PIN_RETRIES_EXCEEDED", "77": "INCONSISTENT_WITH_ORIGINAL",
	"78": "NO_ACCOUNT", "84": "PREAUTHORISATION_TIME_TOO_GREAT", "86": "CANNOT_VERIFY_PIN",
	"91": "ISSUER_UNAVAILABLE", "92": "INVALID_RECEVING_INSTITUTION_ID", "93": "TRANSACTION_VIOLATES_LAW",
	"94": "DUPLICATE_TRANSACTION", "96": "SYSTEM_MANLFUNCTION",
}

// AuthorisationName names a card authorisation code as the spec's table
// spells it (typos included: they are the wire names); "" when unknown.
func AuthorisationName(code string) string { return authorisationNames[code] }
