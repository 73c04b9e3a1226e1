package paymentsim

import (
	"encoding/json"
	"strings"
)

// validateContact checks a Contact: name and email required, email with an
// "@", type organisation|person, country_code two upper-case letters.
func validateContact(raw json.RawMessage, prefix string) *apiError {
	if isNull(raw) {
		return badRequest(prefix, "%s is required", nameOr(prefix, "contact"))
	}
	if firstByte(raw) != '{' {
		return badRequest(prefix, "%s must be an object", nameOr(prefix, "contact"))
	}
	var c struct {
		Type           *string `json:"type"`
		IdentityNumber *string `json:"identity_number"`
		ID             *string `json:"id"`
		Name           *string `json:"name"`
		Email          *string `json:"email"`
		Phone          *string `json:"phone"`
		Address        *struct {
			Street      *string `json:"street"`
			ZipCode     *string `json:"zip_code"`
			City        *string `json:"city"`
			CountryCode *string `json:"country_code"`
		} `json:"address"`
	}
	if e := decodeInto(raw, &c, prefix); e != nil {
		return e
	}
	if c.Name == nil || strings.TrimSpace(*c.Name) == "" {
		return badRequest(join(prefix, "name"), "name is required")
	}
	if c.Email == nil || strings.TrimSpace(*c.Email) == "" {
		return badRequest(join(prefix, "email"), "email is required")
	}
	if at := strings.Index(*c.Email, "@"); at <= 0 || at == len(*c.Email)-1 {
		return badRequest(join(prefix, "email"), "email is not an e-mail address")
	}
	if c.Type != nil && *c.Type != "organisation" && *c.Type != "person" {
		return badRequest(join(prefix, "type"), "type must be organisation or person")
	}
	if c.Address != nil && c.Address.CountryCode != nil && !isUpper(*c.Address.CountryCode, 2) {
		return badRequest(join(prefix, "address.country_code"), "country_code must be an ISO 3166 alpha-2 code")
	}
	return nil
}

func isUpper(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, r := range s {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

// validateClient checks the {"browser": {...}} object that goes with a card
// token. The Browser fields are "not shown", so any object is accepted.
func validateClient(raw json.RawMessage, field string) *apiError {
	if isNull(raw) {
		return badRequest(field, "%s with a browser object is required", field)
	}
	var c struct {
		Browser json.RawMessage `json:"browser"`
	}
	if firstByte(raw) != '{' {
		return badRequest(field, "%s must be an object", field)
	}
	if e := decodeInto(raw, &c, field); e != nil {
		return e
	}
	if firstByte(c.Browser) != '{' {
		return badRequest(join(field, "browser"), "browser must be an object")
	}
	return nil
}

// tokenOutcome classifies a card token: "ok", "3ds", "fail", or "" when it
// is not a test card token at all.
func tokenOutcome(tok string) string {
	switch {
	case strings.HasPrefix(tok, TokenOK):
		return "ok"
	case strings.HasPrefix(tok, Token3DS):
		return "3ds"
	case strings.HasPrefix(tok, TokenFail):
		return "fail"
	}
	return ""
}

// methodIn is a Payment method creatable after validation.
type methodIn struct {
	Card  string
	field string // JSON path of the card field
}

func parseMethodCreatable(raw json.RawMessage, prefix string) (methodIn, *apiError) {
	if firstByte(raw) != '{' {
		return methodIn{}, badRequest(prefix, "%s must be a Payment method creatable object", nameOr(prefix, "method"))
	}
	var m struct {
		Type   *string         `json:"type"`
		Card   *string         `json:"card"`
		Client json.RawMessage `json:"client"`
	}
	if e := decodeInto(raw, &m, prefix); e != nil {
		return methodIn{}, e
	}
	if m.Type == nil || *m.Type != "token" {
		return methodIn{}, badRequest(join(prefix, "type"), `type must be "token"`)
	}
	cf := join(prefix, "card")
	if m.Card == nil || tokenOutcome(*m.Card) == "" {
		return methodIn{}, badRequest(cf, "card must be a card token (%s..., %s... or %s...)", TokenOK, Token3DS, TokenFail)
	}
	if e := validateClient(m.Client, join(prefix, "client")); e != nil {
		return methodIn{}, e
	}
	return methodIn{Card: *m.Card, field: cf}, nil
}

// MaxAmount is the largest amount the sandbox takes, in minor units: an
// item's amount, an order's total, and so every capture and refund. It is
// 2^53-1, the largest integer a JSON number carries exactly to every
// reader; a bank refuses what it cannot book exactly.
const MaxAmount = 1<<53 - 1

// MaxQuantity is the largest quantity of one item.
const MaxQuantity = 1_000_000

// parseItems validates items and returns the amount in minor units: the
// number itself, or the sum of amount*quantity of the item objects. An
// amount, a product or a total beyond MaxAmount is refused, never wrapped.
func parseItems(raw json.RawMessage, field string) (int64, *apiError) {
	if isNull(raw) {
		return 0, badRequest(field, "items is required")
	}
	switch firstByte(raw) {
	case '{':
		return parseItem(raw, field)
	case '[':
		var list []json.RawMessage
		if e := decodeInto(raw, &list, field); e != nil {
			return 0, e
		}
		if len(list) == 0 {
			return 0, badRequest(field, "items must not be an empty array")
		}
		var sum int64
		for i, it := range list {
			f := join(field, "["+itoa(i)+"]")
			if firstByte(it) != '{' {
				return 0, badRequest(f, "an item must be an object")
			}
			a, e := parseItem(it, f)
			if e != nil {
				return 0, e
			}
			// Both are at most MaxAmount: the sum fits in int64.
			if sum += a; sum > MaxAmount {
				return 0, badRequest(field, "the total of the items must be at most %d minor units", int64(MaxAmount))
			}
		}
		return sum, nil
	default:
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil || n <= 0 {
			return 0, badRequest(field, "items must be a positive integer amount in minor units, an item object or an array of item objects")
		}
		if n > MaxAmount {
			return 0, badRequest(field, "items must be at most %d minor units", int64(MaxAmount))
		}
		return n, nil
	}
}

func parseItem(raw json.RawMessage, field string) (int64, *apiError) {
	var it struct {
		Name     *string `json:"name"`
		Amount   *int64  `json:"amount"`
		Quantity *int64  `json:"quantity"`
	}
	if e := decodeInto(raw, &it, field); e != nil {
		return 0, e
	}
	if it.Name == nil || strings.TrimSpace(*it.Name) == "" {
		return 0, badRequest(join(field, "name"), "name is required")
	}
	if it.Amount == nil || *it.Amount <= 0 || *it.Amount > MaxAmount {
		return 0, badRequest(join(field, "amount"), "amount must be a positive integer in minor units, at most %d", int64(MaxAmount))
	}
	q := int64(1)
	if it.Quantity != nil {
		q = *it.Quantity
	}
	if q < 1 || q > MaxQuantity {
		return 0, badRequest(join(field, "quantity"), "quantity must be between 1 and %d", MaxQuantity)
	}
	// Checked by division: amount and quantity are positive.
	if *it.Amount > MaxAmount/q {
		return 0, badRequest(field, "amount × quantity must be at most %d minor units", int64(MaxAmount))
	}
	return *it.Amount * q, nil
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// Payment kinds of an order.
const (
	payOneTime  = "card"     // card payment creatable with a tok_ token
	paySaved    = "saved"    // saved-card payment with a pm_ token
	payCustomer = "customer" // customer payment creatable
)

// orderIn is a validated Order creatable.
type orderIn struct {
	ID         string // "" when absent
	Number     string
	Items      json.RawMessage
	Amount     int64
	Currency   string
	Charge     string
	CustomerID string          // the customer field, when a string
	Contact    json.RawMessage // the customer field, when a contact object
	PayKind    string          // "" when payment is absent
	Card       string          // tok_ or pm_ token
	prefix     string          // JSON path prefix of this order in the request
}

// parseOrder validates an Order creatable. embedded orders (in customer or
// method creation) must not carry payment or customer.
func parseOrder(raw json.RawMessage, prefix string, embedded bool) (*orderIn, *apiError) {
	if firstByte(raw) != '{' {
		return nil, badRequest(prefix, "%s must be an Order creatable object", nameOr(prefix, "order"))
	}
	var o struct {
		ID       *string         `json:"id"`
		Number   *string         `json:"number"`
		Items    json.RawMessage `json:"items"`
		Currency *string         `json:"currency"`
		Charge   *string         `json:"charge"`
		Customer json.RawMessage `json:"customer"`
		Payment  json.RawMessage `json:"payment"`
	}
	if e := decodeInto(raw, &o, prefix); e != nil {
		return nil, e
	}
	in := &orderIn{prefix: prefix}
	if o.ID != nil {
		if embedded {
			return nil, badRequest(join(prefix, "id"), "id belongs only to a retried POST /v1/order")
		}
		in.ID = *o.ID
	}
	if o.Number != nil {
		in.Number = *o.Number
	}
	amount, e := parseItems(o.Items, join(prefix, "items"))
	if e != nil {
		return nil, e
	}
	in.Items, in.Amount = compact(o.Items), amount
	if o.Currency == nil {
		return nil, badRequest(join(prefix, "currency"), "currency is required")
	}
	if !isUpper(*o.Currency, 3) {
		return nil, badRequest(join(prefix, "currency"), "currency must be three upper-case letters")
	}
	in.Currency = *o.Currency
	if o.Charge != nil {
		if *o.Charge != "auto" {
			return nil, badRequest(join(prefix, "charge"), `charge must be "auto" when given`)
		}
		in.Charge = "auto"
	}
	if embedded {
		if !isNull(o.Payment) {
			return nil, badRequest(join(prefix, "payment"), "payment must be omitted here")
		}
		if !isNull(o.Customer) {
			return nil, badRequest(join(prefix, "customer"), "customer must be omitted here")
		}
		return in, nil
	}
	switch firstByte(o.Customer) {
	case 0, 'n':
	case '"':
		_ = json.Unmarshal(o.Customer, &in.CustomerID)
		if in.CustomerID == "" {
			return nil, badRequest(join(prefix, "customer"), "customer must be a customer id")
		}
	case '{':
		if e := validateContact(o.Customer, join(prefix, "customer")); e != nil {
			return nil, e
		}
		in.Contact = compact(o.Customer)
	default:
		return nil, badRequest(join(prefix, "customer"), "customer must be a customer id or a contact object")
	}
	if e := in.parsePayment(o.Payment, join(prefix, "payment")); e != nil {
		return nil, e
	}
	if in.Contact != nil && in.PayKind != payOneTime {
		return nil, badRequest(join(prefix, "customer"), "a contact object as customer goes only with a one-time card payment")
	}
	return in, nil
}

// parsePayment recognises the three payment shapes and refuses anything else.
func (in *orderIn) parsePayment(raw json.RawMessage, field string) *apiError {
	if isNull(raw) {
		return badRequest(field, "payment is required")
	}
	if firstByte(raw) != '{' {
		return badRequest(field, "payment must be an object")
	}
	var p struct {
		Type       *string         `json:"type"`
		Card       *string         `json:"card"`
		Client     json.RawMessage `json:"client"`
		Subsequent json.RawMessage `json:"subsequent"`
		Initiator  *string         `json:"initiator"`
	}
	if e := decodeInto(raw, &p, field); e != nil {
		return e
	}
	if p.Type == nil {
		return badRequest(join(field, "type"), `type is required ("card" or "customer")`)
	}
	initiatorOK := func(s string) bool { return s == "cardholder" || s == "merchant" }
	switch *p.Type {
	case "card":
		if p.Initiator != nil {
			return badRequest(join(field, "initiator"), "initiator belongs in subsequent for a card payment")
		}
		if p.Card == nil || *p.Card == "" {
			return badRequest(join(field, "card"), "card is required")
		}
		in.Card = *p.Card
		if strings.HasPrefix(*p.Card, "pm_") {
			in.PayKind = paySaved
			if !isNull(p.Client) {
				return badRequest(join(field, "client"), "client goes only with a one-time card token")
			}
			sf := join(field, "subsequent")
			if firstByte(p.Subsequent) != '{' {
				return badRequest(sf, "subsequent (reference, initiator) is required with a saved card")
			}
			var sub struct {
				Reference *string `json:"reference"`
				Initiator *string `json:"initiator"`
			}
			if e := decodeInto(p.Subsequent, &sub, sf); e != nil {
				return e
			}
			if sub.Reference == nil {
				return badRequest(join(sf, "reference"), "reference is required")
			}
			if sub.Initiator != nil && !initiatorOK(*sub.Initiator) {
				return badRequest(join(sf, "initiator"), "initiator must be cardholder or merchant")
			}
			return nil
		}
		in.PayKind = payOneTime
		if !isNull(p.Subsequent) {
			return badRequest(join(field, "subsequent"), "subsequent goes only with a saved card (pm_...)")
		}
		if tokenOutcome(*p.Card) == "" {
			return badRequest(join(field, "card"), "card must be a card token (%s..., %s... or %s...) or a saved method token (pm_...)", TokenOK, Token3DS, TokenFail)
		}
		return validateClient(p.Client, join(field, "client"))
	case "customer":
		in.PayKind = payCustomer
		if p.Card != nil || !isNull(p.Client) || !isNull(p.Subsequent) {
			return badRequest(field, "a customer payment has only type and initiator")
		}
		if p.Initiator == nil || !initiatorOK(*p.Initiator) {
			return badRequest(join(field, "initiator"), "initiator must be cardholder or merchant")
		}
		return nil
	}
	return badRequest(join(field, "type"), `type must be "card" or "customer"`)
}
