package resolvers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/payments"
)

// This file maps payments upstream types to graph models. Nothing here ever
// copies a one-time card token: the Order model has no place for one.

func toCustomer(c *payments.Customer) *model.Customer {
	if c == nil {
		return nil
	}
	// One allocation for the customer and its optional currency, one for
	// its contact. Its cards, balance and subscriptions are converted from
	// c when a query selects them (customerExtras); c is the operation's
	// own copy of the upstream answer, which nothing changes after it is
	// decoded.
	b := new(struct {
		customer model.Customer
		currency string
	})
	b.currency = c.Currency
	b.customer = model.Customer{
		GlobalID: relay.ID(relay.Customer, c.ID),
		ID:       c.ID,
		Number:   c.Number,
		Contact:  toContact(&c.Contact),
		Status:   c.Status,
		Currency: optional(&b.currency),
		Total:    c.Total,
		Extras:   customerExtras{c},
	}
	return &b.customer
}

// customerExtras converts a customer's lists when they are read
// (model.CustomerExtras), its cards and subscriptions decoded then.
type customerExtras struct{ c *payments.Customer }

func (e customerExtras) PaymentMethods() ([]*model.PaymentMethod, error) {
	methods, err := customerMethods(e.c)
	return toPaymentMethods(methods), err
}

func (e customerExtras) Balance() ([]*model.CustomerBalance, error) {
	return toCustomerBalance(e.c.Balance), nil
}

func (e customerExtras) Subscription() ([]*model.CustomerSubscription, error) {
	subs, err := e.c.Subscription.Decode()
	if err != nil {
		return []*model.CustomerSubscription{}, fmt.Errorf("payments: customer %s: decode its subscription: %w", e.c.ID, err)
	}
	return toSubscriptions(subs), nil
}

// customerMethods decodes the customer's stored cards.
func customerMethods(c *payments.Customer) ([]payments.PaymentMethod, error) {
	methods, err := c.Method.Decode()
	if err != nil {
		return nil, fmt.Errorf("payments: customer %s: decode its stored cards: %w", c.ID, err)
	}
	return methods, nil
}

// toCustomerBalance reads each balance entry as an object with currency and
// amount when it is one (the sandbox's shape); the spec shows no shape, so
// the entry also travels as given.
func toCustomerBalance(list []json.RawMessage) []*model.CustomerBalance {
	out := make([]*model.CustomerBalance, 0, len(list))
	for _, raw := range list {
		entry := &model.CustomerBalance{}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var m map[string]any
		if dec.Decode(&m) == nil && m != nil {
			entry.Raw = m
			if c, ok := m["currency"].(string); ok && c != "" {
				entry.Currency = &c
			}
			if n, ok := m["amount"].(json.Number); ok {
				if v, err := n.Int64(); err == nil && v >= -model.MaxMinorUnits && v <= model.MaxMinorUnits {
					entry.Amount = &v
				}
			}
		}
		out = append(out, entry)
	}
	return out
}

func toSubscriptions(list []payments.Subscription) []*model.CustomerSubscription {
	out := make([]*model.CustomerSubscription, 0, len(list))
	for i := range list {
		s := &list[i]
		sub := &model.CustomerSubscription{ID: strPtr(s.ID), Start: dateOf(s.Start), Due: dateOf(s.Due),
			Currency: strPtr(s.Currency), Callback: strPtr(s.Callback)}
		if !s.Items.IsZero() {
			sub.Items = toItems(s.Items)
		}
		out = append(out, sub)
	}
	return out
}

// dateOf reads a date the spec types only as "date": YYYY-MM-DD, or the
// day of a timestamp.
func dateOf(s string) *model.Date {
	if t, err := time.Parse(model.DateLayout, s); err == nil {
		return &model.Date{Time: t}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		y, m, d := t.UTC().Date()
		return &model.Date{Time: time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}
	}
	return nil
}

// contactBlock is a contact with everything it points to, in one
// allocation.
type contactBlock struct {
	contact model.Contact
	address model.Address
	typ     model.ContactType
	strs    [9]string
}

func toContact(c *payments.Contact) *model.Contact {
	if c == nil {
		return nil
	}
	b := new(contactBlock)
	s := &b.strs
	s[0], s[1], s[2], s[3], s[4] = c.IdentityNumber, c.ID, c.Name, c.Email, c.Phone
	b.contact = model.Contact{
		IdentityNumber: optional(&s[0]),
		ID:             optional(&s[1]),
		Name:           optional(&s[2]),
		Email:          optional(&s[3]),
		Phone:          optional(&s[4]),
	}
	if t, ok := enumOf(model.AllContactType, c.Type); ok {
		b.typ = t
		b.contact.Type = &b.typ
	}
	if a := c.Address; a != nil {
		s[5], s[6], s[7], s[8] = a.Street, a.ZipCode, a.City, a.CountryCode
		b.address = model.Address{
			Street:      optional(&s[5]),
			ZipCode:     optional(&s[6]),
			City:        optional(&s[7]),
			CountryCode: optional(&s[8]),
		}
		b.contact.Address = &b.address
	}
	return &b.contact
}

// methodBlock is a payment method with everything it points to.
type methodBlock struct {
	method  model.PaymentMethod
	expiry  [2]int64
	created time.Time
	strs    [4]string
}

func (b *methodBlock) fill(m *payments.PaymentMethod) *model.PaymentMethod {
	b.strs = [4]string{m.Scheme, m.IIN, m.Last4, m.Acquirer}
	b.method = model.PaymentMethod{
		Token:    m.Token,
		Type:     m.Type,
		Scheme:   optional(&b.strs[0]),
		Iin:      optional(&b.strs[1]),
		Last4:    optional(&b.strs[2]),
		Acquirer: optional(&b.strs[3]),
	}
	if e := m.Expires; len(e) == 2 {
		b.expiry = [2]int64{int64(e[0]), int64(e[1])}
		b.method.ExpiresMonth, b.method.ExpiresYear = &b.expiry[0], &b.expiry[1]
	}
	if t, err := time.Parse(time.RFC3339Nano, m.Created); err == nil {
		b.created = t
		b.method.Created = &b.created
	}
	return &b.method
}

func toPaymentMethod(m *payments.PaymentMethod) *model.PaymentMethod {
	return new(methodBlock).fill(m)
}

// toPaymentMethods converts a customer's methods in two allocations.
func toPaymentMethods(list []payments.PaymentMethod) []*model.PaymentMethod {
	blocks := make([]methodBlock, len(list))
	out := make([]*model.PaymentMethod, len(list))
	for i := range list {
		out[i] = blocks[i].fill(&list[i])
	}
	return out
}

var orderStatuses = map[string]model.OrderStatus{
	"authorized":         model.OrderStatusAuthorized,
	"captured":           model.OrderStatusCaptured,
	"partially_refunded": model.OrderStatusPartiallyRefunded,
	"refunded":           model.OrderStatusRefunded,
	"cancelled":          model.OrderStatusCancelled,
}

func toOrder(o *payments.Order) *model.Order {
	status, ok := orderStatuses[o.Status]
	if !ok {
		status = model.OrderStatusUnknown
	}
	// One allocation for the order and everything it points to: a listing
	// converts every order, and the README query asks only for ids. Its
	// items and card payment are
	// decoded and converted when a query selects them (orderParts); o is
	// the operation's own copy of the upstream answer, which nothing
	// changes after it is decoded.
	b := new(struct {
		order model.Order
		money [3]model.Money
		strs  [2]string
	})
	b.money = [3]model.Money{
		{Amount: o.Amount, Currency: o.Currency},
		{Amount: o.CapturedAmount, Currency: o.Currency},
		{Amount: o.RefundedAmount, Currency: o.Currency},
	}
	b.strs = [2]string{o.Number, o.Charge}
	b.order = model.Order{
		ID:             o.ID,
		Number:         optional(&b.strs[0]),
		Created:        o.Created,
		Status:         status,
		Amount:         &b.money[0],
		CapturedAmount: &b.money[1],
		RefundedAmount: &b.money[2],
		Charge:         optional(&b.strs[1]),
		CustomerID:     o.Customer.ID,
		Contact:        toContact(o.Customer.Contact),
		Parts:          orderParts{o},
	}
	if o.Amount == 0 {
		// An order without an amount is worth its items; items that cannot
		// be read leave no amount, and the non-null field says so.
		if items, err := o.Items.Decode(); err == nil {
			b.money[0].Amount = items.Total()
		} else {
			b.order.Amount = nil
		}
	}
	return &b.order
}

// orderParts converts an order's items and card payment when they are read
// (model.OrderParts).
type orderParts struct{ o *payments.Order }

func (p orderParts) Items() (*model.OrderItems, error) {
	items, err := p.o.Items.Decode()
	if err != nil {
		return nil, fmt.Errorf("payments: order %s: decode its items: %w", p.o.ID, err)
	}
	return toItems(items), nil
}

func (p orderParts) Payment() (*model.CardPayment, error) {
	card, err := p.o.Payment.Decode()
	if err != nil {
		return nil, fmt.Errorf("payments: order %s: decode its payment: %w", p.o.ID, err)
	}
	b := new(struct {
		payment model.CardPayment
		expiry  [2]int64
		strs    [4]string
	})
	b.strs = [4]string{card.Scheme, card.IIN, card.Last4, card.Acquirer}
	b.payment = model.CardPayment{Type: card.Type, Scheme: optional(&b.strs[0]), Iin: optional(&b.strs[1]),
		Last4: optional(&b.strs[2]), Acquirer: optional(&b.strs[3])}
	if e := card.Expires; len(e) == 2 {
		b.expiry = [2]int64{int64(e[0]), int64(e[1])}
		b.payment.ExpiresMonth, b.payment.ExpiresYear = &b.expiry[0], &b.expiry[1]
	}
	return &b.payment, nil
}

func toItems(it payments.Items) *model.OrderItems {
	out := &model.OrderItems{Total: it.Total()}
	switch {
	case it.Number != nil:
		out.Shape = model.ItemsShapeAmount
	case it.Item != nil:
		out.Shape = model.ItemsShapeItem
		out.Items = toOrderItems(it.Item, nil)
	default:
		out.Shape = model.ItemsShapeList
		out.Items = toOrderItems(nil, it.List)
	}
	if out.Items == nil {
		out.Items = []*model.OrderItem{}
	}
	return out
}

// toOrderItems converts one item, or a list, in two allocations: the items
// with their names, and the list of pointers the graph wants.
func toOrderItems(one *payments.Item, list []payments.Item) []*model.OrderItem {
	if one != nil {
		list = []payments.Item{*one}
	}
	if len(list) == 0 {
		return nil
	}
	type block struct {
		item model.OrderItem
		name string
	}
	blocks := make([]block, len(list))
	out := make([]*model.OrderItem, len(list))
	for i, it := range list {
		b := &blocks[i]
		b.name = it.Name
		b.item = model.OrderItem{Name: optional(&b.name), Amount: it.Amount, Quantity: int64(max(it.Quantity, 1))}
		out[i] = &b.item
	}
	return out
}

func toOrders(list []payments.Order) []*model.Order {
	out := make([]*model.Order, 0, len(list))
	for i := range list {
		out = append(out, toOrder(&list[i]))
	}
	return out
}
