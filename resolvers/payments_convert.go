package resolvers

import (
	"strings"
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
	methods := make([]*model.PaymentMethod, 0, len(c.Method))
	for _, m := range c.Method {
		methods = append(methods, toPaymentMethod(m))
	}
	return &model.Customer{
		GlobalID:       relay.ID(relay.Customer, c.ID),
		ID:             c.ID,
		Number:         c.Number,
		Contact:        toContact(&c.Contact),
		Status:         c.Status,
		Currency:       strPtr(c.Currency),
		Total:          c.Total,
		PaymentMethods: methods,
	}
}

func toContact(c *payments.Contact) *model.Contact {
	if c == nil {
		return nil
	}
	out := &model.Contact{
		IdentityNumber: strPtr(c.IdentityNumber),
		ID:             strPtr(c.ID),
		Name:           strPtr(c.Name),
		Email:          strPtr(c.Email),
		Phone:          strPtr(c.Phone),
	}
	if t := model.ContactType(strings.ToUpper(c.Type)); t.IsValid() {
		out.Type = &t
	}
	if a := c.Address; a != nil {
		out.Address = &model.Address{
			Street:      strPtr(a.Street),
			ZipCode:     strPtr(a.ZipCode),
			City:        strPtr(a.City),
			CountryCode: strPtr(a.CountryCode),
		}
	}
	return out
}

func expiry(e []int) (month, year *int64) {
	if len(e) == 2 {
		m, y := int64(e[0]), int64(e[1])
		return &m, &y
	}
	return nil, nil
}

func toPaymentMethod(m payments.PaymentMethod) *model.PaymentMethod {
	month, year := expiry(m.Expires)
	out := &model.PaymentMethod{
		Token:        m.Token,
		Type:         m.Type,
		Scheme:       strPtr(m.Scheme),
		Iin:          strPtr(m.IIN),
		Last4:        strPtr(m.Last4),
		ExpiresMonth: month,
		ExpiresYear:  year,
		Acquirer:     strPtr(m.Acquirer),
	}
	if t, err := time.Parse(time.RFC3339Nano, m.Created); err == nil {
		out.Created = &t
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
	amount := o.Amount
	if amount == 0 {
		amount = o.Items.Total()
	}
	// One allocation for the order and everything it points to (a listing
	// converts every order, and the README query asks only for ids: this
	// was ~15 allocations per order). The strings are copied into the
	// block (a string header copy, not its bytes), so nothing here aliases
	// the loader's cached payments.Order.
	b := new(struct {
		order   model.Order
		money   [3]model.Money
		payment model.CardPayment
		expiry  [2]int64
		strs    [6]string
	})
	b.money = [3]model.Money{
		{Amount: amount, Currency: o.Currency},
		{Amount: o.CapturedAmount, Currency: o.Currency},
		{Amount: o.RefundedAmount, Currency: o.Currency},
	}
	b.strs = [6]string{o.Number, o.Charge, o.Payment.Scheme, o.Payment.IIN, o.Payment.Last4, o.Payment.Acquirer}
	opt := func(i int) *string {
		if b.strs[i] == "" {
			return nil
		}
		return &b.strs[i]
	}
	b.payment = model.CardPayment{Type: o.Payment.Type, Scheme: opt(2), Iin: opt(3), Last4: opt(4), Acquirer: opt(5)}
	if e := o.Payment.Expires; len(e) == 2 {
		b.expiry = [2]int64{int64(e[0]), int64(e[1])}
		b.payment.ExpiresMonth, b.payment.ExpiresYear = &b.expiry[0], &b.expiry[1]
	}
	b.order = model.Order{
		ID:             o.ID,
		Number:         opt(0),
		Created:        o.Created,
		Status:         status,
		Amount:         &b.money[0],
		CapturedAmount: &b.money[1],
		RefundedAmount: &b.money[2],
		Items:          toItems(o.Items),
		Charge:         opt(1),
		Payment:        &b.payment,
		CustomerID:     o.Customer.ID,
		Contact:        toContact(o.Customer.Contact),
	}
	return &b.order
}

func toItems(it payments.Items) *model.OrderItems {
	item := func(i payments.Item) *model.OrderItem {
		return &model.OrderItem{Name: strPtr(i.Name), Amount: i.Amount, Quantity: int64(max(i.Quantity, 1))}
	}
	out := &model.OrderItems{Total: it.Total(), Items: []*model.OrderItem{}}
	switch {
	case it.Number != nil:
		out.Shape = model.ItemsShapeAmount
	case it.Item != nil:
		out.Shape = model.ItemsShapeItem
		out.Items = append(out.Items, item(*it.Item))
	default:
		out.Shape = model.ItemsShapeList
		for _, i := range it.List {
			out.Items = append(out.Items, item(i))
		}
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
