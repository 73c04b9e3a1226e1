package resolvers

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/upstream/payments"
)

func TestContactFromInput(t *testing.T) {
	valid := func() *model.ContactInput {
		return &model.ContactInput{Name: "Anna", Email: "anna@demo.test"}
	}
	tests := []struct {
		name  string
		edit  func(c *model.ContactInput) *model.ContactInput
		field string
	}{
		{"valid", func(c *model.ContactInput) *model.ContactInput { return c }, ""},
		{"missing", func(*model.ContactInput) *model.ContactInput { return nil }, "input.contact"},
		{"no name", func(c *model.ContactInput) *model.ContactInput { c.Name = " "; return c }, "input.contact.name"},
		{"name too long", func(c *model.ContactInput) *model.ContactInput { c.Name = strings.Repeat("n", 256); return c }, "input.contact.name"},
		{"no e-mail", func(c *model.ContactInput) *model.ContactInput { c.Email = ""; return c }, "input.contact.email"},
		{"bad e-mail", func(c *model.ContactInput) *model.ContactInput { c.Email = "anna"; return c }, "input.contact.email"},
		{"phone too long", func(c *model.ContactInput) *model.ContactInput { c.Phone = ptr(strings.Repeat("1", 256)); return c }, "input.contact.phone"},
		{"id too long", func(c *model.ContactInput) *model.ContactInput { c.ID = ptr(strings.Repeat("1", 256)); return c }, "input.contact.id"},
		{"country code lower case", func(c *model.ContactInput) *model.ContactInput {
			c.Address = &model.AddressInput{CountryCode: ptr("lv")}
			return c
		}, "input.contact.address.countryCode"},
		{"street too long", func(c *model.ContactInput) *model.ContactInput {
			c.Address = &model.AddressInput{Street: ptr(strings.Repeat("s", 256))}
			return c
		}, "input.contact.address.street"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := contactFromInput("input.contact", tc.edit(valid()))
			wantBadInput(t, err, tc.field)
		})
	}

	c, err := contactFromInput("input.contact", &model.ContactInput{
		Type: ptr(model.ContactTypeOrganisation), Name: "Demo SIA", Email: "billing@demo.test", Phone: ptr("+37120000000"),
		Address: &model.AddressInput{Street: ptr("Brīvības 1"), City: ptr("Rīga"), ZipCode: ptr("LV-1010"), CountryCode: ptr("LV")},
	})
	require.NoError(t, err)
	assert.Equal(t, payments.Contact{Type: "organisation", Name: "Demo SIA", Email: "billing@demo.test", Phone: "+37120000000",
		Address: &payments.Address{Street: "Brīvības 1", City: "Rīga", ZipCode: "LV-1010", CountryCode: "LV"}}, c)
}

func TestItemsFromInput(t *testing.T) {
	item := func(name string, amount int64, qty *int64) *model.OrderItemInput {
		return &model.OrderItemInput{Name: name, Amount: amount, Quantity: qty}
	}
	tests := []struct {
		name  string
		in    *model.OrderItemsInput
		field string
	}{
		{"amount", &model.OrderItemsInput{Amount: ptr[int64](100)}, ""},
		{"item", &model.OrderItemsInput{Item: item("Tea", 300, ptr[int64](2))}, ""},
		{"list", &model.OrderItemsInput{List: []*model.OrderItemInput{item("Tea", 300, nil), item("Cake", 450, nil)}}, ""},
		{"missing", nil, "input.items"},
		{"none of the three", &model.OrderItemsInput{}, "input.items"},
		{"two of the three", &model.OrderItemsInput{Amount: ptr[int64](1), Item: item("Tea", 1, nil)}, "input.items"},
		{"zero amount", &model.OrderItemsInput{Amount: ptr[int64](0)}, "input.items.amount"},
		{"negative amount", &model.OrderItemsInput{Amount: ptr[int64](-5)}, "input.items.amount"},
		{"item without name", &model.OrderItemsInput{Item: item("", 300, nil)}, "input.items.item.name"},
		{"item of no value", &model.OrderItemsInput{Item: item("Tea", 0, nil)}, "input.items.item.amount"},
		{"zero quantity", &model.OrderItemsInput{Item: item("Tea", 1, ptr[int64](0))}, "input.items.item.quantity"},
		{"huge quantity", &model.OrderItemsInput{Item: item("Tea", 1, ptr[int64](1_000_001))}, "input.items.item.quantity"},
		{"empty list", &model.OrderItemsInput{List: []*model.OrderItemInput{}}, "input.items.list"},
		{"list too long", &model.OrderItemsInput{List: make([]*model.OrderItemInput, maxItems+1)}, "input.items.list"},
		{"bad element names its index", &model.OrderItemsInput{List: []*model.OrderItemInput{item("Tea", 1, nil), item("Cake", -1, nil)}}, "input.items.list[1].amount"},
		{"missing element", &model.OrderItemsInput{List: []*model.OrderItemInput{nil}}, "input.items.list[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := itemsFromInput(tc.in)
			wantBadInput(t, err, tc.field)
		})
	}
	got, err := itemsFromInput(&model.OrderItemsInput{Item: item("Tea", 300, nil)})
	require.NoError(t, err)
	assert.Equal(t, payments.Items{Item: &payments.Item{Name: "Tea", Amount: 300, Quantity: 1}}, got, "quantity defaults to 1")
}

func TestToOrderCreatable(t *testing.T) {
	valid := func() model.CreateOrderInput {
		return model.CreateOrderInput{Currency: "EUR", Items: &model.OrderItemsInput{Amount: ptr[int64](700)},
			Payment: &model.PaymentInput{Card: &model.CardPaymentInput{Token: "tok_ok_1"}}}
	}
	tests := []struct {
		name  string
		edit  func(in *model.CreateOrderInput)
		field string
	}{
		{"valid", func(*model.CreateOrderInput) {}, ""},
		{"lower-case currency", func(in *model.CreateOrderInput) { in.Currency = "eur" }, "input.currency"},
		{"currency name", func(in *model.CreateOrderInput) { in.Currency = "Euro" }, "input.currency"},
		{"number too long", func(in *model.CreateOrderInput) { in.Number = ptr(strings.Repeat("9", 256)) }, "input.number"},
		{"blank customer id", func(in *model.CreateOrderInput) { in.CustomerID = ptr(" ") }, "input.customerId"},
		{"no payment", func(in *model.CreateOrderInput) { in.Payment = nil }, "input.payment"},
		{"empty payment", func(in *model.CreateOrderInput) { in.Payment = &model.PaymentInput{} }, "input.payment"},
		{"two payments", func(in *model.CreateOrderInput) { in.Payment.Customer = &model.CustomerPaymentInput{} }, "input.payment"},
		{"bad card token", func(in *model.CreateOrderInput) { in.Payment.Card.Token = "tok ok" }, "input.payment.card.token"},
		{"saved card without customer", func(in *model.CreateOrderInput) {
			in.Payment = &model.PaymentInput{SavedCard: &model.SavedCardPaymentInput{MethodToken: "pm_1"}}
		}, "input.customerId"},
		{"saved card without method", func(in *model.CreateOrderInput) {
			in.CustomerID = ptr("c-1")
			in.Payment = &model.PaymentInput{SavedCard: &model.SavedCardPaymentInput{}}
		}, "input.payment.savedCard.methodToken"},
		{"customer payment without customer", func(in *model.CreateOrderInput) {
			in.Payment = &model.PaymentInput{Customer: &model.CustomerPaymentInput{}}
		}, "input.customerId"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := valid()
			tc.edit(&in)
			_, err := toOrderCreatable(context.Background(), in)
			wantBadInput(t, err, tc.field)
		})
	}

	in := valid()
	in.AutoCharge, in.Number, in.CustomerID = ptr(true), ptr("ORD-1"), ptr("c-1")
	in.Payment = &model.PaymentInput{Customer: &model.CustomerPaymentInput{Initiator: ptr(model.InitiatorMerchant)}}
	o, err := toOrderCreatable(context.Background(), in)
	require.NoError(t, err)
	assert.Equal(t, "auto", o.Charge)
	assert.Equal(t, "ORD-1", o.Number)
	assert.Equal(t, "c-1", o.Customer)
	assert.Equal(t, payments.CustomerPayment(payments.InitiatorMerchant), o.Payment)
}

func TestFingerprintIgnoresOnlyTheCardToken(t *testing.T) {
	base := func() payments.OrderCreatable {
		n := int64(700)
		return payments.OrderCreatable{Items: payments.Items{Number: &n}, Currency: "EUR", Number: "ORD-1",
			Customer: "c-1", Payment: payments.CardPayment("tok_ok_1", nil)}
	}
	fp := fingerprint(base())
	retry := base()
	retry.Payment = payments.CardPayment("tok_ok_2", nil)
	retry.ID = "order-from-an-earlier-error"
	assert.Equal(t, fp, fingerprint(retry), "a retry with a new card token and the earlier id is the same order")
	assert.NotContains(t, fp, "tok_ok_1")

	for name, edit := range map[string]func(o *payments.OrderCreatable){
		"amount":   func(o *payments.OrderCreatable) { n := int64(701); o.Items.Number = &n },
		"currency": func(o *payments.OrderCreatable) { o.Currency = "USD" },
		"number":   func(o *payments.OrderCreatable) { o.Number = "ORD-2" },
		"customer": func(o *payments.OrderCreatable) { o.Customer = "c-2" },
		"charge":   func(o *payments.OrderCreatable) { o.Charge = "auto" },
		"payment":  func(o *payments.OrderCreatable) { o.Payment = payments.CustomerPayment("") },
	} {
		o := base()
		edit(&o)
		assert.NotEqual(t, fp, fingerprint(o), "a different %s is a different order", name)
	}
}

func TestOrderWindow(t *testing.T) {
	now := time.Date(2030, 5, 20, 15, 4, 5, 0, time.UTC)
	day := func(s string) *model.Date {
		d, err := time.Parse(model.DateLayout, s)
		require.NoError(t, err)
		return &model.Date{Time: d}
	}
	s, e, err := orderWindow(now, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "2030-04-20", s.Format(model.DateLayout), "start defaults to 30 days before end")
	assert.Equal(t, "2030-05-20", e.Format(model.DateLayout), "end defaults to today")

	_, _, err = orderWindow(now, day("2030-05-02"), day("2030-05-01"))
	wantBadInput(t, err, "end")
	_, _, err = orderWindow(now, day("2029-01-01"), day("2030-05-01"))
	wantBadInput(t, err, "start")
	_, _, err = orderWindow(now, day("2029-05-01"), day("2030-05-01"))
	wantBadInput(t, err, "") // 365 days are allowed
}

func TestCheckWebhookURL(t *testing.T) {
	for raw, field := range map[string]string{
		"https://hooks.example/payments":          "",
		"http://hooks.example/payments":           "input.url",
		"/webhooks/payments":                      "input.url",
		"https://user:pw@hooks.example/payments":  "input.url",
		"hooks.example/payments":                  "input.url",
		"https://" + strings.Repeat("a", 2048):    "input.url",
		"https://hooks.example/%zz":               "input.url",
		"ftp://hooks.example/payments":            "input.url",
		"https://hooks.example:8443/payments?a=1": "",
	} {
		t.Run(raw[:min(len(raw), 40)], func(t *testing.T) {
			err := checkWebhookURL(raw)
			wantBadInput(t, err, field)
			if err != nil {
				assert.NotContains(t, err.Error(), "pw", "an error must not echo credentials")
			}
		})
	}
}
