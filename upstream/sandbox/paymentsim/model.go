package paymentsim

import (
	"encoding/json"
	"time"
)

// method is a stored card payment method, in its wire shape. Every field
// takes part in the equality check of PUT /v1/customer/{id}/methods.
type method struct {
	Type     string `json:"type"`
	Scheme   string `json:"scheme"`
	IIN      string `json:"iin"`
	Last4    string `json:"last4"`
	Expires  [2]int `json:"expires"`
	Acquirer string `json:"acquirer"`
	Created  string `json:"created"`
	Token    string `json:"token"`
}

type customer struct {
	ID       string
	Number   string
	Contact  json.RawMessage // as sent
	Methods  []method        // priority order
	Currency string          // of the first order; EUR while there is none
	HasOrder bool
	Key      string
	Created  time.Time
	// Balance and Subscriptions are seeded only: the spec shows no route
	// that changes them.
	Balance       []balanceEntry
	Subscriptions []subscription
}

// balanceEntry is one element of a customer's balance array. The spec shows
// the array without its elements' shape; the sandbox's is a currency and
// an amount in minor units (docs/sandbox-payments.md, "Demo data").
type balanceEntry struct {
	Currency string `json:"currency"`
	Amount   int64  `json:"amount"`
}

// subscription is one element of a customer's subscription array, with the
// spec's fields.
type subscription struct {
	ID       string          `json:"id"`
	Start    string          `json:"start"`
	Items    json.RawMessage `json:"items"`
	Currency string          `json:"currency"`
	Callback string          `json:"callback"`
	Due      string          `json:"due"`
}

// customerJSON is the Customer resource on the wire.
type customerJSON struct {
	ID       string          `json:"id"`
	Number   string          `json:"number"`
	Contact  json.RawMessage `json:"contact"`
	Method   []method        `json:"method"`
	Status   string          `json:"status"`
	Total    int64           `json:"total"`
	Balance  []balanceEntry  `json:"balance"`
	Currency string          `json:"currency"`
	// Subscription is optional in the spec: left out when there is none.
	Subscription []subscription `json:"subscription,omitempty"`
	Order        any            `json:"order,omitempty"`
}

func (c *customer) toJSON() customerJSON {
	ms := c.Methods
	if ms == nil {
		ms = []method{}
	}
	return customerJSON{
		ID: c.ID, Number: c.Number, Contact: c.Contact, Method: append([]method{}, ms...),
		Status: "active", Total: 0, Balance: append([]balanceEntry{}, c.Balance...), Currency: c.Currency,
		Subscription: append([]subscription(nil), c.Subscriptions...),
	}
}

// cardPayment is the payment of an Order response. Token is set only for
// saved-card and customer payments (pm_ tokens); a one-time card token is
// never echoed.
type cardPayment struct {
	Type     string `json:"type"`
	Scheme   string `json:"scheme"`
	IIN      string `json:"iin"`
	Last4    string `json:"last4"`
	Expires  [2]int `json:"expires"`
	Acquirer string `json:"acquirer"`
	Token    string `json:"token,omitempty"`
}

// Order statuses.
const (
	statusAuthorized        = "authorized"
	statusCaptured          = "captured"
	statusPartiallyRefunded = "partially_refunded"
	statusRefunded          = "refunded"
	statusCancelled         = "cancelled"
)

type order struct {
	ID         string
	Created    time.Time
	Number     string
	CustomerID string
	Contact    json.RawMessage // one-time card order without customer
	Items      json.RawMessage // as sent
	Currency   string
	Charge     string
	Payment    cardPayment
	Status     string
	Amount     int64
	Captured   int64
	Refunded   int64
}

// orderJSON is the Order resource on the wire.
type orderJSON struct {
	ID             string          `json:"id"`
	Created        string          `json:"created"`
	Number         string          `json:"number,omitempty"`
	Customer       any             `json:"customer,omitempty"`
	Items          json.RawMessage `json:"items"`
	Currency       string          `json:"currency"`
	Charge         string          `json:"charge,omitempty"`
	Payment        cardPayment     `json:"payment"`
	Status         string          `json:"status"`
	Amount         int64           `json:"amount"`
	CapturedAmount int64           `json:"captured_amount"`
	RefundedAmount int64           `json:"refunded_amount"`
}

func (o *order) toJSON() orderJSON {
	j := orderJSON{
		ID: o.ID, Created: ts(o.Created), Number: o.Number, Items: o.Items, Currency: o.Currency,
		Charge: o.Charge, Payment: o.Payment, Status: o.Status, Amount: o.Amount,
		CapturedAmount: o.Captured, RefundedAmount: o.Refunded,
	}
	switch {
	case o.CustomerID != "":
		j.Customer = o.CustomerID
	case len(o.Contact) > 0:
		j.Customer = o.Contact
	}
	return j
}

// pendingOrder is an order id handed out in a 402 error, waiting for the
// retry that rule 3 of the spec describes.
type pendingOrder struct {
	ThreeDS  bool // the last attempt needed 3-D Secure
	Verified bool // 3-D Secure was completed for this order id
}

type event struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Payload   map[string]any `json:"payload"`
	CreatedAt string         `json:"created_at"`
}

type webhook struct {
	ID        string `json:"id"`
	URL       string `json:"url"`
	CreatedAt string `json:"created_at"`
}

type delivery struct {
	EventID string `json:"event_id"`
	Name    string `json:"name"`
	URL     string `json:"url"`
	Attempt int    `json:"attempt"`
	Status  int    `json:"status"`
	Error   string `json:"error"`
	At      string `json:"at"`
}

// Individual statuses.
const (
	indRequested    = "onboarding_requested"
	indDataProvided = "onboarding_data_provided"
	indActive       = "active"
	indBlocked      = "blocked"
)

type individual struct {
	ID            string `json:"id"`
	Status        string `json:"status"`
	CreatedAt     string `json:"created_at"`
	UpdatedAt     string `json:"updated_at"`
	BlockedReason string `json:"blocked_reason,omitempty"`
}

type pendingAction struct {
	ID           string  `json:"id"`
	IndividualID string  `json:"individual_id"`
	EventID      string  `json:"event_id"`
	Type         string  `json:"type"`
	Status       string  `json:"status"`
	CreatedAt    string  `json:"created_at"`
	CompletedAt  *string `json:"completed_at"`
	// completedEvent is the PendingActionCompleted event, for lookup by event.
	completedEvent string
}
