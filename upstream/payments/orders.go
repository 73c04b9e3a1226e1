package payments

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/url"
	"time"

	"github.com/fingraph/fingraph/upstream/roundtrip"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// OrdersService handles the order routes.
type OrdersService service

// Item is one item of an order. The spec does not show an item's fields;
// these are the upstream's documented ones.
type Item struct {
	Name     string `json:"name,omitempty"`
	Amount   int64  `json:"amount"`
	Quantity int    `json:"quantity,omitempty"`
}

// Items is what the spec allows for an order's items: a number, one item
// object, or an array of items. Exactly one of the fields is set.
type Items struct {
	Number *int64
	Item   *Item
	List   []Item
}

// IsZero reports whether no items are set.
func (it Items) IsZero() bool { return it.Number == nil && it.Item == nil && it.List == nil }

// Total is the amount in minor units the items stand for. A product or sum
// beyond int64 gives math.MaxInt64 (math.MinInt64 below it) instead of
// wrapping round: 4 × 2^62 must not read as an order of 0.
func (it Items) Total() int64 {
	switch {
	case it.Number != nil:
		return *it.Number
	case it.Item != nil:
		return it.Item.total(0)
	}
	var sum int64
	for _, i := range it.List {
		sum = i.total(sum)
	}
	return sum
}

// total is sum + Amount × Quantity, saturated at the int64 bounds.
func (i Item) total(sum int64) int64 {
	q := int64(max(i.Quantity, 1))
	p := i.Amount * q
	if p/q != i.Amount {
		return saturated(i.Amount)
	}
	s := sum + p
	if (p > 0 && s < sum) || (p < 0 && s > sum) {
		return saturated(p)
	}
	return s
}

func saturated(sign int64) int64 {
	if sign > 0 {
		return math.MaxInt64
	}
	return math.MinInt64
}

// MarshalJSON writes the one shape that is set.
func (it Items) MarshalJSON() ([]byte, error) {
	switch {
	case it.Number != nil:
		return json.Marshal(*it.Number)
	case it.Item != nil:
		return json.Marshal(it.Item)
	case it.List != nil:
		return json.Marshal(it.List)
	}
	return nil, errors.New("payments: items not set")
}

// UnmarshalJSON reads any of the three shapes.
func (it *Items) UnmarshalJSON(b []byte) error { return roundtrip.Unmarshal(b, it) }

// UnmarshalJSONFrom reads any of the three shapes from the decoder of an
// upstream answer, without scanning the value twice.
func (it *Items) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*it = Items{}
	switch dec.PeekKind() {
	case '[':
		return jsonv2.UnmarshalDecode(dec, &it.List)
	case '{':
		it.Item = new(Item)
		return jsonv2.UnmarshalDecode(dec, it.Item)
	case 0:
		return errors.New("payments: empty items")
	default:
		it.Number = new(int64)
		return jsonv2.UnmarshalDecode(dec, it.Number)
	}
}

// Payment is one of the spec's three payment shapes; build it with
// CardPayment, SavedCardPayment or CustomerPayment.
type Payment struct {
	Type       string      `json:"type"`
	Card       string      `json:"card,omitempty"`
	Client     *ClientInfo `json:"client,omitempty"`
	Subsequent *Subsequent `json:"subsequent,omitempty"`
	Initiator  string      `json:"initiator,omitempty"`
}

// Subsequent marks a payment with a saved card.
type Subsequent struct {
	Reference string `json:"reference"`
	Initiator string `json:"initiator"`
}

// Initiators of saved-card and customer payments.
const (
	InitiatorCardholder = "cardholder"
	InitiatorMerchant   = "merchant"
)

// CardPayment pays with a single-use card token.
func CardPayment(cardToken string, browser map[string]any) *Payment {
	return &Payment{Type: "card", Card: cardToken, Client: newClientInfo(browser)}
}

// SavedCardPayment is the spec's conversion of a stored method and an
// initiator into a payment; the initiator defaults to the merchant.
func SavedCardPayment(m PaymentMethod, initiator, reference string) *Payment {
	if initiator == "" {
		initiator = InitiatorMerchant
	}
	return &Payment{Type: "card", Card: m.Token, Subsequent: &Subsequent{Reference: reference, Initiator: initiator}}
}

// CustomerPayment charges an existing customer.
func CustomerPayment(initiator string) *Payment {
	if initiator == "" {
		initiator = InitiatorCardholder
	}
	return &Payment{Type: "customer", Initiator: initiator}
}

// OrderCreatable is the request of order creation.
type OrderCreatable struct {
	// ID is only ever the id from an earlier error of the same order.
	ID       string   `json:"id,omitempty"`
	Number   string   `json:"number,omitempty"`
	Items    Items    `json:"items"`
	Currency string   `json:"currency"`
	Charge   string   `json:"charge,omitempty"`
	Customer string   `json:"customer,omitempty"`
	Payment  *Payment `json:"payment,omitempty"`
}

// Order is an order as the upstream answers it.
type Order struct {
	ID       string        `json:"id"`
	Created  time.Time     `json:"created"`
	Number   string        `json:"number,omitempty"`
	Customer OrderCustomer `json:"customer"`
	// Items and Payment are decoded when they are read
	// (roundtrip.Deferred): a listing holds many orders, and most reads of
	// it select neither.
	Items    roundtrip.Deferred[Items]       `json:"items"`
	Currency string                          `json:"currency"`
	Charge   string                          `json:"charge,omitempty"`
	Payment  roundtrip.Deferred[CardDetails] `json:"payment"`
	// Status and the amounts are not named by the spec's Order table; the
	// upstream documents them, and they are empty when it does not send them.
	Status         string `json:"status,omitempty"`
	Amount         int64  `json:"amount,omitempty"`
	CapturedAmount int64  `json:"captured_amount,omitempty"`
	RefundedAmount int64  `json:"refunded_amount,omitempty"`
}

// CardDetails describe a card without any card token: an order's card
// payment, and the card of a stored PaymentMethod.
type CardDetails struct {
	Type     string `json:"type"`
	Scheme   string `json:"scheme,omitempty"`
	IIN      string `json:"iin,omitempty"`
	Last4    string `json:"last4,omitempty"`
	Expires  []int  `json:"expires,omitempty"`
	Acquirer string `json:"acquirer,omitempty"`
}

// OrderCustomer is an order's customer: an id, or inline contact data.
type OrderCustomer struct {
	ID      string
	Contact *Contact
}

// UnmarshalJSON accepts a customer id string or a contact object.
func (c *OrderCustomer) UnmarshalJSON(b []byte) error { return roundtrip.Unmarshal(b, c) }

// UnmarshalJSONFrom accepts a customer id string or a contact object from
// the decoder of an upstream answer.
func (c *OrderCustomer) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*c = OrderCustomer{}
	switch dec.PeekKind() {
	case 'n':
		_, err := dec.ReadToken()
		return err
	case '"':
		return jsonv2.UnmarshalDecode(dec, &c.ID)
	}
	c.Contact = new(Contact)
	return jsonv2.UnmarshalDecode(dec, c.Contact)
}

// MarshalJSON writes the shape that is set.
func (c OrderCustomer) MarshalJSON() ([]byte, error) {
	if c.Contact != nil {
		return json.Marshal(c.Contact)
	}
	if c.ID == "" {
		return []byte("null"), nil
	}
	return json.Marshal(c.ID)
}

// OrderEvent is an event applied to an order. The spec does not show the
// fields of an event creatable; these are the upstream's documented ones.
type OrderEvent struct {
	Type   string `json:"type"`
	Amount *int64 `json:"amount,omitempty"`
}

// Order event types.
const (
	EventCapture = "capture"
	EventRefund  = "refund"
	EventCancel  = "cancel"
)

// OrderChange applies events to one order.
type OrderChange struct {
	ID    string       `json:"id"`
	Event []OrderEvent `json:"event"`
}

// Create creates an order. With a customer key in ctx it acts as that
// customer, otherwise with the private key. A failed creation answers an
// *ErrorResponse carrying the order id, which the retry must send as ID.
func (s *OrdersService) Create(ctx context.Context, o OrderCreatable) (*Order, error) {
	return call[Order](ctx, s.client, privateOrCustomer(ctx), http.MethodPost, "v1/order", o)
}

// Apply applies events to orders (private key) and answers what was sent.
func (s *OrdersService) Apply(ctx context.Context, changes []OrderChange) ([]OrderChange, error) {
	return callList[OrderChange](ctx, s.client, KeyPrivate, http.MethodPatch, "v1/order", changes)
}

// DateLayout is the layout of the start and end query parameters.
const DateLayout = "2006-01-02"

// List lists orders created between start and end (inclusive dates); the
// spec strongly recommends always giving both.
func (s *OrdersService) List(ctx context.Context, start, end time.Time) ([]Order, error) {
	q := url.Values{}
	q.Set("start", start.UTC().Format(DateLayout))
	q.Set("end", end.UTC().Format(DateLayout))
	return callList[Order](ctx, s.client, privateOrCustomer(ctx), http.MethodGet, "v1/order?"+q.Encode(), nil)
}
