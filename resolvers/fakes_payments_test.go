package resolvers

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/upstream/payments"
)

// paymentsCustomer is a record of the fake payments upstream.
type paymentsCustomer = payments.Customer

// fakePayments is an in-memory payments upstream: one fake per service the
// resolvers and the read cache use.
type fakePayments struct {
	// specOnly makes Offers answer false for every addition, as the
	// strict sandbox's client does.
	specOnly bool
	// customerKeys maps a customer key to its customer's id (harness.as
	// registers them).
	customerKeys map[string]string

	customers      *fakeCustomers
	orders         *fakeOrders
	orderTokens    *fakeOrderTokens
	webhooks       *fakeWebhooks
	events         *fakePaymentEvents
	individuals    *fakeIndividuals
	pendingActions *fakePendingActions
}

func newFakePayments() *fakePayments {
	p := &fakePayments{customerKeys: map[string]string{}}
	p.customers = &fakeCustomers{fakeService: newFakeService("payments.Customers"), p: p}
	p.orders = &fakeOrders{fakeService: newFakeService("payments.Orders")}
	p.orderTokens = &fakeOrderTokens{fakeService: newFakeService("payments.OrderTokens"), orders: p.orders}
	p.webhooks = &fakeWebhooks{fakeService: newFakeService("payments.Webhooks")}
	p.events = &fakePaymentEvents{fakeService: newFakeService("payments.Events"), byID: map[string]*payments.Event{}}
	p.individuals = &fakeIndividuals{fakeService: newFakeService("payments.Individuals")}
	p.pendingActions = &fakePendingActions{fakeService: newFakeService("payments.PendingActions")}
	return p
}

// Offers is the client's capability: every addition unless specOnly.
func (p *fakePayments) Offers(payments.Feature) bool { return !p.specOnly }

// resolvers is the fake as resolvers use it.
func (p *fakePayments) resolvers() Payments {
	return Payments{PaymentsFeatures: p, Customers: p.customers, Orders: p.orders, OrderTokens: p.orderTokens,
		Webhooks: p.webhooks, Events: p.events, Individuals: p.individuals, PendingActions: p.pendingActions}
}

// sources is the fake as the read cache reads it.
func (p *fakePayments) sources() loaders.PaymentsSource {
	return loaders.PaymentsSource{Customers: p.customers, Orders: p.orders, PendingActions: p.pendingActions}
}

// total is how many calls the payments upstream got.
func (p *fakePayments) total() int {
	return p.customers.total() + p.orders.total() + p.orderTokens.total() + p.webhooks.total() +
		p.events.total() + p.individuals.total() + p.pendingActions.total()
}

// fakeCustomers holds customers in creation order.
type fakeCustomers struct {
	fakeService
	p    *fakePayments
	list []payments.Customer
	seq  int
}

// add stores c as the upstream's.
func (f *fakeCustomers) add(c payments.Customer) {
	f.data.Lock()
	defer f.data.Unlock()
	f.list = append(f.list, c)
}

func (f *fakeCustomers) find(id string) *payments.Customer {
	for i := range f.list {
		if f.list[i].ID == id {
			return &f.list[i]
		}
	}
	return nil
}

// Get reads a customer; "me" is the customer of the context's customer key.
func (f *fakeCustomers) Get(ctx context.Context, id string) (*payments.Customer, error) {
	if err := f.enter("Get"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	if id == "me" {
		key, _ := payments.CustomerKey(ctx)
		id = f.p.customerKeys[key]
	}
	c := f.find(id)
	if c == nil {
		return nil, paymentsNotFound()
	}
	out := *c
	return &out, nil
}

func (f *fakeCustomers) List(context.Context) ([]payments.Customer, error) {
	if err := f.enter("List"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	return slices.Clone(f.list), nil
}

func (f *fakeCustomers) Create(_ context.Context, c payments.CustomerCreatable) (*payments.Customer, error) {
	if err := f.enter("Create"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	f.seq++
	out := payments.Customer{ID: fmt.Sprintf("cus-new-%d", f.seq), Number: c.Number, Contact: c.Contact, Status: "active"}
	f.list = append(f.list, out)
	return &out, nil
}

func (f *fakeCustomers) UpdateContact(_ context.Context, id string, c payments.Contact) (*payments.Contact, error) {
	if err := f.enter("UpdateContact"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	cu := f.find(id)
	if cu == nil {
		return nil, paymentsNotFound()
	}
	cu.Contact = c
	out := c
	return &out, nil
}

func (f *fakeCustomers) AddMethod(context.Context, string, payments.PaymentMethodCreatable) (*payments.PaymentMethod, error) {
	if err := f.enter("AddMethod"); err != nil {
		return nil, err
	}
	return nil, f.notFaked("AddMethod")
}

func (f *fakeCustomers) AddMethodWithOrder(context.Context, string, payments.MethodWithOrder) (*payments.MethodWithOrderResult, error) {
	if err := f.enter("AddMethodWithOrder"); err != nil {
		return nil, err
	}
	return nil, f.notFaked("AddMethodWithOrder")
}

func (f *fakeCustomers) SetMethods(_ context.Context, id string, methods []payments.PaymentMethod) (*payments.Customer, error) {
	if err := f.enter("SetMethods"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	cu := f.find(id)
	if cu == nil {
		return nil, paymentsNotFound()
	}
	cu.Method = deferred(methods)
	out := *cu
	return &out, nil
}

// fakeOrders holds orders in creation order.
type fakeOrders struct {
	fakeService
	list    []payments.Order
	applied [][]payments.OrderChange
	seq     int
}

// add stores o as the upstream's.
func (f *fakeOrders) add(o payments.Order) {
	f.data.Lock()
	defer f.data.Unlock()
	f.list = append(f.list, o)
}

// List lists the orders created on the days from start to end.
func (f *fakeOrders) List(_ context.Context, start, end time.Time) ([]payments.Order, error) {
	if err := f.enter("List"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	var out []payments.Order
	for _, o := range f.list {
		if !o.Created.Before(start) && o.Created.Before(end.AddDate(0, 0, 1)) {
			out = append(out, o)
		}
	}
	return out, nil
}

func (f *fakeOrders) Create(_ context.Context, o payments.OrderCreatable) (*payments.Order, error) {
	if err := f.enter("Create"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	f.seq++
	out := payments.Order{ID: fmt.Sprintf("ord-new-%d", f.seq), Created: time.Now().UTC(), Number: o.Number,
		Customer: payments.OrderCustomer{ID: o.Customer}, Items: deferred(o.Items), Currency: o.Currency, Status: "authorized"}
	f.list = append(f.list, out)
	return &out, nil
}

// Apply records the changes and answers them as applied.
func (f *fakeOrders) Apply(_ context.Context, changes []payments.OrderChange) ([]payments.OrderChange, error) {
	if err := f.enter("Apply"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	f.applied = append(f.applied, slices.Clone(changes))
	return slices.Clone(changes), nil
}

// fakeOrderTokens reads a token "token:<order id>" as that order, signed
// or confirmed alike.
type fakeOrderTokens struct {
	fakeService
	orders *fakeOrders
}

func (f *fakeOrderTokens) VerifyAll(_ context.Context, tokens []string) ([]payments.SignedOrder, error) {
	if err := f.enter("VerifyAll"); err != nil {
		return nil, err
	}
	return f.read(tokens)
}

func (f *fakeOrderTokens) ConfirmAll(_ context.Context, tokens []string) ([]payments.SignedOrder, error) {
	if err := f.enter("ConfirmAll"); err != nil {
		return nil, err
	}
	return f.read(tokens)
}

func (f *fakeOrderTokens) read(tokens []string) ([]payments.SignedOrder, error) {
	f.orders.data.Lock()
	defer f.orders.data.Unlock()
	out := make([]payments.SignedOrder, 0, len(tokens))
	for _, t := range tokens {
		var found *payments.Order
		for i := range f.orders.list {
			if "token:"+f.orders.list[i].ID == t {
				o := f.orders.list[i]
				found = &o
			}
		}
		if found == nil {
			return nil, payments.ErrInvalidOrderToken
		}
		out = append(out, payments.SignedOrder{Token: t, Order: found})
	}
	return out, nil
}

// fakeWebhooks holds the company's webhooks.
type fakeWebhooks struct {
	fakeService
	list []payments.Webhook
	seq  int
}

func (f *fakeWebhooks) Create(_ context.Context, u string) (*payments.Webhook, error) {
	if err := f.enter("Create"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	f.seq++
	w := payments.Webhook{ID: fmt.Sprintf("wh-%d", f.seq), URL: u, CreatedAt: time.Now().UTC()}
	f.list = append(f.list, w)
	return &w, nil
}

func (f *fakeWebhooks) List(context.Context) ([]payments.Webhook, error) {
	if err := f.enter("List"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	return slices.Clone(f.list), nil
}

func (f *fakeWebhooks) Delete(_ context.Context, id string) error {
	if err := f.enter("Delete"); err != nil {
		return err
	}
	f.data.Lock()
	defer f.data.Unlock()
	n := len(f.list)
	f.list = slices.DeleteFunc(f.list, func(w payments.Webhook) bool { return w.ID == id })
	if len(f.list) == n {
		return paymentsNotFound()
	}
	return nil
}

// fakePaymentEvents holds upstream events by id.
type fakePaymentEvents struct {
	fakeService
	byID map[string]*payments.Event
}

// add stores e as the upstream's.
func (f *fakePaymentEvents) add(e payments.Event) {
	f.data.Lock()
	defer f.data.Unlock()
	f.byID[e.ID] = &e
}

func (f *fakePaymentEvents) Get(_ context.Context, id string) (*payments.Event, error) {
	if err := f.enter("Get"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	e, ok := f.byID[id]
	if !ok {
		return nil, paymentsNotFound()
	}
	out := *e
	return &out, nil
}

// fakeIndividuals holds individuals.
type fakeIndividuals struct {
	fakeService
	list []payments.Individual
}

// add stores i as the upstream's.
func (f *fakeIndividuals) add(i payments.Individual) {
	f.data.Lock()
	defer f.data.Unlock()
	f.list = append(f.list, i)
}

func (f *fakeIndividuals) List(_ context.Context, status string) ([]payments.Individual, error) {
	if err := f.enter("List"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	var out []payments.Individual
	for _, i := range f.list {
		if status == "" || i.Status == status {
			out = append(out, i)
		}
	}
	return out, nil
}

func (f *fakeIndividuals) Onboard(_ context.Context, id string) (*payments.Individual, error) {
	if err := f.enter("Onboard"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	for i := range f.list {
		if f.list[i].ID == id {
			out := f.list[i]
			return &out, nil
		}
	}
	return nil, paymentsNotFound()
}

// fakePendingActions holds pending actions.
type fakePendingActions struct {
	fakeService
	list []payments.PendingAction
}

// add stores a as the upstream's.
func (f *fakePendingActions) add(a payments.PendingAction) {
	f.data.Lock()
	defer f.data.Unlock()
	f.list = append(f.list, a)
}

func (f *fakePendingActions) ByEvent(_ context.Context, eventID string) (*payments.PendingAction, error) {
	if err := f.enter("ByEvent"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	for _, a := range f.list {
		if a.EventID == eventID {
			return &a, nil
		}
	}
	return nil, paymentsNotFound()
}

func (f *fakePendingActions) ByIndividual(_ context.Context, individualID string) ([]payments.PendingAction, error) {
	if err := f.enter("ByIndividual"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	var out []payments.PendingAction
	for _, a := range f.list {
		if a.IndividualID == individualID {
			out = append(out, a)
		}
	}
	return out, nil
}
