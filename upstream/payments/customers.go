package payments

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// CustomersService handles the customer routes.
type CustomersService service

// Customer is a customer record of the merchant.
type Customer struct {
	ID      string  `json:"id"`
	Number  string  `json:"number"`
	Contact Contact `json:"contact"`
	// Method and Subscription are decoded when they are read
	// (roundtrip.Deferred): most reads of a listing use neither.
	Method roundtrip.Deferred[[]PaymentMethod] `json:"method"`
	Status string                              `json:"status"`
	Total  float64                             `json:"total"`
	// Balance entries are kept as sent: the spec shows an array without the
	// shape of its items.
	Balance      []json.RawMessage                  `json:"balance"`
	Currency     string                             `json:"currency"`
	Subscription roundtrip.Deferred[[]Subscription] `json:"subscription,omitzero"`
	// Order holds the signed order token(s) of a creation with orders.
	Order OrderTokens `json:"order,omitzero"`
}

// Contact is a customer's contact data.
type Contact struct {
	Type           string   `json:"type,omitempty"`
	IdentityNumber string   `json:"identity_number,omitempty"`
	ID             string   `json:"id,omitempty"`
	Name           string   `json:"name,omitempty"`
	Address        *Address `json:"address,omitempty"`
	Email          string   `json:"email,omitempty"`
	Phone          string   `json:"phone,omitempty"`
}

// Address is a postal address; CountryCode is ISO 3166 alpha-2.
type Address struct {
	Street      string `json:"street,omitempty"`
	ZipCode     string `json:"zip_code,omitempty"`
	City        string `json:"city,omitempty"`
	CountryCode string `json:"country_code,omitempty"`
}

// Subscription is an element of a customer's subscription array.
type Subscription struct {
	ID       string `json:"id,omitempty"`
	Start    string `json:"start,omitempty"`
	Due      string `json:"due,omitempty"`
	Items    Items  `json:"items,omitzero"`
	Currency string `json:"currency,omitempty"`
	Callback string `json:"callback,omitempty"`
}

// PaymentMethod is a stored card: the card's details, when it was stored,
// and the token that pays with it. Its array position is its priority.
type PaymentMethod struct {
	CardDetails
	Created string `json:"created,omitempty"`
	Token   string `json:"token,omitempty"`
}

// PaymentMethodCreatable adds a card from a single-use card token.
type PaymentMethodCreatable struct {
	Type   string      `json:"type"`
	Card   string      `json:"card"`
	Client *ClientInfo `json:"client,omitempty"`
}

// NewPaymentMethodCreatable returns the creatable for a single-use card token.
func NewPaymentMethodCreatable(cardToken string, browser map[string]any) PaymentMethodCreatable {
	return PaymentMethodCreatable{Type: "token", Card: cardToken, Client: newClientInfo(browser)}
}

// ClientInfo describes the cardholder's client; the Browser object's fields
// are not shown in the spec, so it is passed through as given.
type ClientInfo struct {
	Browser map[string]any `json:"browser"`
}

func newClientInfo(browser map[string]any) *ClientInfo {
	if browser == nil {
		browser = map[string]any{}
	}
	return &ClientInfo{Browser: browser}
}

// CustomerCreatable is the request of customer creation.
type CustomerCreatable struct {
	Number  string                   `json:"number"`
	Method  []PaymentMethodCreatable `json:"method"`
	Contact Contact                  `json:"contact"`
	// Order is one OrderCreatable, or a slice of them; payment and customer
	// must be left empty.
	Order any `json:"order,omitempty"`
}

// OrderTokens are signed order tokens: one string, or an array.
type OrderTokens struct {
	Tokens []string
	// Single is true when the upstream sent one string rather than an array.
	Single bool
}

// IsZero reports whether no token is present.
func (t OrderTokens) IsZero() bool { return len(t.Tokens) == 0 }

// UnmarshalJSON accepts a string or an array of strings.
func (t *OrderTokens) UnmarshalJSON(b []byte) error {
	var one string
	if err := roundtrip.Unmarshal(b, &one); err == nil {
		*t = OrderTokens{Tokens: []string{one}, Single: true}
		return nil
	}
	var many []string
	if err := roundtrip.Unmarshal(b, &many); err != nil {
		return err
	}
	*t = OrderTokens{Tokens: many}
	return nil
}

// MarshalJSON writes the shape that was read.
func (t OrderTokens) MarshalJSON() ([]byte, error) {
	if t.Single && len(t.Tokens) == 1 {
		return json.Marshal(t.Tokens[0])
	}
	return json.Marshal(t.Tokens)
}

// MethodWithOrder is the request and response of method creation with an order.
type MethodWithOrder struct {
	Method PaymentMethodCreatable `json:"method"`
	Order  any                    `json:"order"`
}

// MethodWithOrderResult is the answer to method creation with an order.
type MethodWithOrderResult struct {
	Method PaymentMethod `json:"method"`
	Order  OrderTokens   `json:"order"`
}

func customerPath(ctx context.Context, id string) string {
	if _, ok := CustomerKey(ctx); ok {
		id = "me"
	}
	return "v1/customer/" + url.PathEscape(id)
}

// Create creates a customer (public key).
func (s *CustomersService) Create(ctx context.Context, c CustomerCreatable) (*Customer, error) {
	return call[Customer](ctx, s.client, KeyPublic, http.MethodPost, "v1/customer", c)
}

// Get reads one customer: with a customer key in ctx it reads `me`,
// otherwise the customer id with the private key.
func (s *CustomersService) Get(ctx context.Context, id string) (*Customer, error) {
	return call[Customer](ctx, s.client, privateOrCustomer(ctx), http.MethodGet, customerPath(ctx, id), nil)
}

// List lists every customer of the merchant (private key). The spec shows
// no paging for this route.
func (s *CustomersService) List(ctx context.Context) ([]Customer, error) {
	return callList[Customer](ctx, s.client, KeyPrivate, http.MethodGet, "v1/customer", nil)
}

// UpdateContact replaces a customer's contact and returns it as stored.
func (s *CustomersService) UpdateContact(ctx context.Context, id string, c Contact) (*Contact, error) {
	return call[Contact](ctx, s.client, privateOrCustomer(ctx), http.MethodPut, customerPath(ctx, id)+"/contact", c)
}

// AddMethod stores a card from a single-use token (public key).
func (s *CustomersService) AddMethod(ctx context.Context, customerID string, m PaymentMethodCreatable) (*PaymentMethod, error) {
	return call[PaymentMethod](ctx, s.client, KeyPublic, http.MethodPost, "v1/customer/"+url.PathEscape(customerID)+"/method", m)
}

// AddMethodWithOrder stores a card and authorises an order with it.
func (s *CustomersService) AddMethodWithOrder(ctx context.Context, customerID string, m MethodWithOrder) (*MethodWithOrderResult, error) {
	return call[MethodWithOrderResult](ctx, s.client, KeyPublic, http.MethodPost, "v1/customer/"+url.PathEscape(customerID)+"/method", m)
}

// SetMethods sends the customer's methods reordered and/or with some left
// out; their contents must be unchanged.
func (s *CustomersService) SetMethods(ctx context.Context, id string, methods []PaymentMethod) (*Customer, error) {
	if methods == nil {
		methods = []PaymentMethod{}
	}
	return call[Customer](ctx, s.client, privateOrCustomer(ctx), http.MethodPut, customerPath(ctx, id)+"/methods", methods)
}
