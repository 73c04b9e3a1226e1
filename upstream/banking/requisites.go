package banking

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
