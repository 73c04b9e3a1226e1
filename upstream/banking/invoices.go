package banking

import (
	"context"
	"net/http"
)

// InvoicesService reads corporation invoices.
type InvoicesService service

// Invoice is the spec's Corporation Invoice. Amounts are minor units.
type Invoice struct {
	ID     string `json:"id"`
	IsPaid bool   `json:"is_paid"`
	// Type is opening-fee or monthly-service-fee.
	Type                        string      `json:"type"`
	Amount                      int64       `json:"amount"`
	UnpaidAmount                int64       `json:"unpaid_amount"`
	IdentityID                  string      `json:"identity_id,omitempty"`
	Currency                    string      `json:"currency"`
	InvoicePaymentTransactionID string      `json:"invoice_payment_transaction_id,omitempty"`
	Repayments                  []Repayment `json:"repayments"`
	CreatedAt                   Timestamp   `json:"created_at"`
	UpdatedAt                   Timestamp   `json:"updated_at"`
}

// Repayment is one repayment of an invoice.
type Repayment struct {
	ID     string `json:"id"`
	Amount int64  `json:"amount"`
	// Type is, for example, balance.
	Type string `json:"type"`
}

// List reads the corporation's invoices (GET /corporations/:id/invoices).
func (s *InvoicesService) List(ctx context.Context, corporationID string) ([]*Invoice, error) {
	out, err := call[[]*Invoice](ctx, s.client, http.MethodGet, "corporations/"+pathEscape(corporationID)+"/invoices", nil)
	if err != nil {
		return nil, err
	}
	return *out, nil
}
