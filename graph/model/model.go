// Package model holds the GraphQL types of the fingraph graph: those gqlgen
// generates from the schema (models_gen.go) and the few written by hand
// because they carry data the schema does not show, such as the customer id
// an Order resolves its customer from.
package model

import (
	"io"
	"strconv"
	"time"

	"github.com/fingraph/fingraph/gqlerr"
)

// Date is a calendar date (YYYY-MM-DD), midnight UTC.
type Date struct{ time.Time }

// DateLayout is how Date reads and writes.
const DateLayout = "2006-01-02"

// UnmarshalGQL reads a YYYY-MM-DD string.
func (d *Date) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok {
		return gqlerr.BadInput("", "a Date must be a string YYYY-MM-DD, got %T", v)
	}
	t, err := time.Parse(DateLayout, s)
	if err != nil {
		return gqlerr.BadInput("", "a Date must be YYYY-MM-DD, got %q", s)
	}
	d.Time = t
	return nil
}

// MarshalGQL writes YYYY-MM-DD.
func (d Date) MarshalGQL(w io.Writer) {
	_, _ = io.WriteString(w, strconv.Quote(d.UTC().Format(DateLayout)))
}

// Order is an order of the merchant.
type Order struct {
	ID             string
	Number         *string
	Created        time.Time
	Status         OrderStatus
	Amount         *Money
	CapturedAmount *Money
	RefundedAmount *Money
	Charge         *string
	Contact        *Contact
	// Parts converts the order's items and card payment when they are
	// read (Order.Items, Order.Payment).
	Parts OrderParts
	// CustomerID is the id Order.customer resolves (batched); empty when the
	// order carries inline contact data instead.
	CustomerID string
}

// OrderParts are an order's items and card payment, each converted when it
// is read; an error is the upstream's part that could not be read, and
// fails that field alone.
type OrderParts interface {
	Items() (*OrderItems, error)
	Payment() (*CardPayment, error)
}

// Items are what the order is for.
func (o *Order) Items() (*OrderItems, error) {
	if o.Parts == nil {
		return nil, nil
	}
	return o.Parts.Items()
}

// Payment is the card the order was paid with.
func (o *Order) Payment() (*CardPayment, error) {
	if o.Parts == nil {
		return nil, nil
	}
	return o.Parts.Payment()
}

// IsCreateOrderResult marks Order as a member of the CreateOrderResult union.
func (Order) IsCreateOrderResult() {}

// OrderChangePayload answers capture, refund and cancel.
type OrderChangePayload struct {
	OrderID string
	Applied string
}

// UpdateCustomerContactPayload answers updateCustomerContact: the contact
// as stored, and the customer it changed, read when selected.
type UpdateCustomerContactPayload struct {
	Contact *Contact
	// CustomerID is the upstream id of the customer changed ("me" in a
	// customer session).
	CustomerID string
}

// AddPaymentMethodPayload answers addPaymentMethod: the stored card, the
// orders authorised with it, and the customer whose cards changed, read
// when selected.
type AddPaymentMethodPayload struct {
	PaymentMethod *PaymentMethod
	Orders        []*SignedOrder
	// CustomerID is the upstream id of the customer changed.
	CustomerID string
}

// Event is an upstream event.
type Event struct {
	ID string
	// GatewayCursor, for a banking-side event (made by the gateway or
	// found by polling), is its cursor in the event stream: what its
	// global id refetches it by. "" for an upstream event.
	GatewayCursor string
	// Shared, on an event streamed to subscribers, holds what is resolved
	// once for all of them (its subject); nil otherwise.
	Shared       any
	Name         string
	Payload      map[string]any
	CreatedAt    time.Time
	IndividualID *string
	OrderID      *string
	// Prefetched marks PrefetchedPendingActions as the answer to
	// Event.pendingActions: streamed events arrive with their pending
	// action already read, and need no request of their own.
	Prefetched               bool
	PrefetchedPendingActions []*PendingAction
}

// PersonBackOffice holds the back-office fields of a person the graph shows
// to staff only (Person.profileLevel, primaryCurrency,
// isPersonLimitsDisabled); the converter fills it, the resolvers decide.
type PersonBackOffice struct {
	ProfileLevel           *string
	PrimaryCurrency        *string
	IsPersonLimitsDisabled *bool
}
