package resolvers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/upstream/payments"
)

// This file validates payments input before anything is sent upstream, so
// that malformed input costs no upstream call and gets a BAD_USER_INPUT
// error naming the field.

var currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)

const (
	maxText      = 255
	maxItems     = 100
	maxQuantity  = 1_000_000
	maxTokenLen  = 512
	maxOrderSpan = 366 * 24 * time.Hour
)

// checkCardToken refuses a token that is malformed or that appears in the
// query text: tokens must travel as variables so that they never land in
// the query cache, a persisted query or an access log.
func checkCardToken(ctx context.Context, field, token string) error {
	if token == "" || len(token) > maxTokenLen || strings.ContainsAny(token, " \t\r\n\"") {
		return gqlerr.BadInput(field, "%s must be a card token", field)
	}
	if graphql.HasOperationContext(ctx) && strings.Contains(graphql.GetOperationContext(ctx).RawQuery, token) {
		return gqlerr.BadInput(field, "%s must be passed as a variable, not written into the query", field)
	}
	return nil
}

func contactFromInput(field string, in *model.ContactInput) (payments.Contact, error) {
	if in == nil {
		return payments.Contact{}, gqlerr.BadInput(field, "%s is required", field)
	}
	if err := checkText(field+".name", in.Name, true); err != nil {
		return payments.Contact{}, err
	}
	if err := checkText(field+".email", in.Email, true); err != nil {
		return payments.Contact{}, err
	}
	var v validator
	v.email(field+".email", &in.Email)
	if in.Address != nil {
		v.twoLetter(field+".address.countryCode", in.Address.CountryCode)
	}
	if v.err != nil {
		return payments.Contact{}, v.err
	}
	for f, v := range map[string]*string{".identityNumber": in.IdentityNumber, ".id": in.ID, ".phone": in.Phone} {
		if err := optText(field+f, v); err != nil {
			return payments.Contact{}, err
		}
	}
	c := payments.Contact{Name: in.Name, Email: in.Email}
	if in.Type != nil {
		c.Type = strings.ToLower(string(*in.Type))
	}
	c.IdentityNumber = deref(in.IdentityNumber)
	c.ID = deref(in.ID)
	c.Phone = deref(in.Phone)
	if a := in.Address; a != nil {
		for f, v := range map[string]*string{".street": a.Street, ".zipCode": a.ZipCode, ".city": a.City} {
			if err := optText(field+".address"+f, v); err != nil {
				return payments.Contact{}, err
			}
		}
		c.Address = &payments.Address{Street: deref(a.Street), ZipCode: deref(a.ZipCode), City: deref(a.City), CountryCode: deref(a.CountryCode)}
	}
	return c, nil
}

func itemFromInput(field string, in *model.OrderItemInput) (payments.Item, error) {
	if in == nil {
		return payments.Item{}, gqlerr.BadInput(field, "%s is required", field)
	}
	if in.Amount <= 0 {
		return payments.Item{}, gqlerr.BadInput(field+".amount", "amount must be a positive number of minor units")
	}
	q := int64(1)
	if in.Quantity != nil {
		q = *in.Quantity
	}
	if q < 1 || q > maxQuantity {
		return payments.Item{}, gqlerr.BadInput(field+".quantity", "quantity must be between 1 and %d", maxQuantity)
	}
	if err := checkText(field+".name", in.Name, true); err != nil {
		return payments.Item{}, err
	}
	return payments.Item{Name: in.Name, Amount: in.Amount, Quantity: int(q)}, nil
}

func itemsFromInput(in *model.OrderItemsInput) (payments.Items, error) {
	return itemsFromInputAt("input.items", in)
}

func itemsFromInputAt(field string, in *model.OrderItemsInput) (payments.Items, error) {
	if in == nil {
		return payments.Items{}, gqlerr.BadInput(field, "items is required")
	}
	set := 0
	for _, b := range []bool{in.Amount != nil, in.Item != nil, in.List != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		return payments.Items{}, gqlerr.BadInput(field, "give exactly one of items.amount, items.item, items.list")
	}
	switch {
	case in.Amount != nil:
		if *in.Amount <= 0 {
			return payments.Items{}, gqlerr.BadInput(field+".amount", "amount must be a positive number of minor units")
		}
		n := *in.Amount
		return payments.Items{Number: &n}, nil
	case in.Item != nil:
		it, err := itemFromInput(field+".item", in.Item)
		if err != nil {
			return payments.Items{}, err
		}
		items := payments.Items{Item: &it}
		if items.Total() > model.MaxMinorUnits {
			return payments.Items{}, totalTooLarge(field)
		}
		return items, nil
	}
	if len(in.List) == 0 || len(in.List) > maxItems {
		return payments.Items{}, gqlerr.BadInput(field+".list", "list must hold 1 to %d items", maxItems)
	}
	list := make([]payments.Item, 0, len(in.List))
	for i, li := range in.List {
		it, err := itemFromInput(fmt.Sprintf("%s.list[%d]", field, i), li)
		if err != nil {
			return payments.Items{}, err
		}
		list = append(list, it)
	}
	items := payments.Items{List: list}
	if items.Total() > model.MaxMinorUnits {
		return payments.Items{}, totalTooLarge(field)
	}
	return items, nil
}

// totalTooLarge refuses items whose total (payments.Items.Total, which
// saturates instead of wrapping: every amount here is positive) is beyond
// model.MaxMinorUnits.
func totalTooLarge(field string) error {
	return gqlerr.BadInput(field, "the order's total (amount × quantity, summed) must be at most %d minor units",
		int64(model.MaxMinorUnits))
}

func initiator(in *model.Initiator, def string) string {
	if in == nil {
		return def
	}
	return strings.ToLower(string(*in))
}

// newOrderFromInput validates an order created together with a customer or
// a card: it has neither payment nor customer.
func newOrderFromInput(field string, in *model.NewOrderInput) (payments.OrderCreatable, error) {
	var o payments.OrderCreatable
	if in == nil {
		return o, gqlerr.BadInput(field, "%s is required", field)
	}
	items, err := itemsFromInputAt(field+".items", in.Items)
	if err != nil {
		return o, err
	}
	if !currencyRe.MatchString(in.Currency) {
		return o, gqlerr.BadInput(field+".currency", "currency must be an ISO 4217 code such as EUR")
	}
	if err := optText(field+".number", in.Number); err != nil {
		return o, err
	}
	o.Items, o.Currency, o.Number = items, in.Currency, deref(in.Number)
	if in.AutoCharge != nil && *in.AutoCharge {
		o.Charge = "auto"
	}
	return o, nil
}

// newOrdersFromInput validates a list of new orders; nil when none.
func newOrdersFromInput(field string, in []*model.NewOrderInput) ([]payments.OrderCreatable, error) {
	if len(in) > maxItems {
		return nil, gqlerr.BadInput(field, "at most %d orders", maxItems)
	}
	var out []payments.OrderCreatable
	for i, o := range in {
		oc, err := newOrderFromInput(fmt.Sprintf("%s[%d]", field, i), o)
		if err != nil {
			return nil, err
		}
		out = append(out, oc)
	}
	return out, nil
}

// toOrderCreatable validates createOrder's input and builds the upstream
// request, choosing the payment shape of the spec's rule 2.
func toOrderCreatable(ctx context.Context, in model.CreateOrderInput) (payments.OrderCreatable, error) {
	var o payments.OrderCreatable
	items, err := itemsFromInput(in.Items)
	if err != nil {
		return o, err
	}
	o.Items = items
	if !currencyRe.MatchString(in.Currency) {
		return o, gqlerr.BadInput("input.currency", "currency must be an ISO 4217 code such as EUR")
	}
	o.Currency = in.Currency
	if err := optText("input.number", in.Number); err != nil {
		return o, err
	}
	o.Number = deref(in.Number)
	if in.AutoCharge != nil && *in.AutoCharge {
		o.Charge = "auto"
	}
	if in.CustomerID != nil {
		if err := checkText("input.customerId", *in.CustomerID, true); err != nil {
			return o, err
		}
		o.Customer = *in.CustomerID
	}
	p := in.Payment
	if p == nil {
		return o, gqlerr.BadInput("input.payment", "payment is required")
	}
	branches := 0
	for _, b := range []bool{p.Card != nil, p.SavedCard != nil, p.Customer != nil} {
		if b {
			branches++
		}
	}
	if branches != 1 {
		return o, gqlerr.BadInput("input.payment", "give exactly one of payment.card, payment.savedCard, payment.customer")
	}
	switch {
	case p.Card != nil:
		if err := checkCardToken(ctx, "input.payment.card.token", p.Card.Token); err != nil {
			return o, err
		}
		o.Payment = payments.CardPayment(p.Card.Token, p.Card.Browser)
	case p.SavedCard != nil:
		if o.Customer == "" && !inCustomerSession(ctx) {
			return o, gqlerr.BadInput("input.customerId", "customerId is required with a savedCard payment")
		}
		if err := checkText("input.payment.savedCard.methodToken", p.SavedCard.MethodToken, true); err != nil {
			return o, err
		}
		// The payment itself is built from the stored method once it has
		// been read (see savedCardPayment).
		o.Payment = &payments.Payment{Type: "card", Card: p.SavedCard.MethodToken}
	default:
		if o.Customer == "" && !inCustomerSession(ctx) {
			return o, gqlerr.BadInput("input.customerId", "customerId is required with a customer payment")
		}
		o.Payment = payments.CustomerPayment(initiator(p.Customer.Initiator, payments.InitiatorCardholder))
	}
	return o, nil
}

// fingerprint identifies what an order attempt asks for, without its card
// token, so that an idempotency key reused for a different order is caught.
func fingerprint(o payments.OrderCreatable) string {
	h := sha256.New()
	items, _ := o.Items.MarshalJSON()
	fmt.Fprintf(h, "%s|%s|%s|%s|%s|%s", items, o.Currency, o.Customer, o.Number, o.Charge, o.Payment.Type)
	return hex.EncodeToString(h.Sum(nil))
}

// orderWindow resolves optional start and end dates: end defaults to today,
// start to 30 days before end.
func orderWindow(now time.Time, start, end *model.Date) (time.Time, time.Time, error) {
	e := now.UTC().Truncate(24 * time.Hour)
	if end != nil {
		e = end.Time
	}
	s := e.AddDate(0, 0, -30)
	if start != nil {
		s = start.Time
	}
	if e.Before(s) {
		return s, e, gqlerr.BadInput("end", "end must not be before start")
	}
	if e.Sub(s) > maxOrderSpan {
		return s, e, gqlerr.BadInput("start", "the date range may span at most 366 days")
	}
	return s, e, nil
}

// checkWebhookURL refuses what the spec forbids before asking the upstream:
// a webhook URL must be an absolute HTTPS URL.
func checkWebhookURL(raw string) error {
	const field = "input.url"
	if len(raw) > 2048 {
		return gqlerr.BadInput(field, "url must be at most 2048 characters")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil {
		return gqlerr.BadInput(field, "url must be an absolute URL such as https://hooks.example/payments")
	}
	if u.Scheme != "https" {
		return gqlerr.BadInput(field, "url must use HTTPS")
	}
	return nil
}
