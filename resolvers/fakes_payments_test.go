package resolvers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
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
	p.orders = &fakeOrders{fakeService: newFakeService("payments.Orders"), p: p, pending: map[string]string{}}
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

// fakeCustomers holds customers in creation order. As the sandbox, it
// stores a card token as a method "pm-<n>" and consumes the token (a used
// one is refused with 409 card_token_used), and authorises the orders of a
// creation with the customer's first method, answering each as a signed
// token "token:<order id>" (what fakeOrderTokens reads).
type fakeCustomers struct {
	fakeService
	lostAnswers
	p    *fakePayments
	list []payments.Customer
	seq  int
	used map[string]bool
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

// target is the customer id a call names: "me", or any id, with a customer
// key in ctx is the key's customer (the client sends "me" then).
func (f *fakeCustomers) target(ctx context.Context, id string) string {
	if key, ok := payments.CustomerKey(ctx); ok {
		return f.p.customerKeys[key]
	}
	return id
}

// get is a copy of customer id, as a read answers it.
func (f *fakeCustomers) get(id string) (*payments.Customer, error) {
	f.data.Lock()
	defer f.data.Unlock()
	c := f.find(id)
	if c == nil {
		return nil, paymentsNotFound()
	}
	out := *c
	return &out, nil
}

// Get reads a customer; "me" is the customer of the context's customer key.
func (f *fakeCustomers) Get(ctx context.Context, id string) (*payments.Customer, error) {
	if err := f.enter("Get"); err != nil {
		return nil, err
	}
	return f.get(f.target(ctx, id))
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
	if err := f.takeTokens(c.Method...); err != nil {
		f.data.Unlock()
		return nil, err
	}
	f.seq++
	out := payments.Customer{ID: fmt.Sprintf("cus-new-%d", f.seq), Number: c.Number, Contact: c.Contact, Status: "active"}
	methods := f.newMethods(c.Method...)
	out.Method = deferred(methods)
	f.list = append(f.list, out)
	f.data.Unlock()
	if c.Order != nil {
		out.Order = f.p.orders.authorise(out.ID, methods[0], c.Order)
	}
	return &out, f.lose("Create")
}

// takeTokens consumes single-use card tokens, refusing a used one.
// Call with data held.
func (f *fakeCustomers) takeTokens(ms ...payments.PaymentMethodCreatable) error {
	if f.used == nil {
		f.used = map[string]bool{}
	}
	for i, m := range ms {
		if f.used[m.Card] {
			return &payments.ErrorResponse{StatusCode: http.StatusConflict, Code: "card_token_used",
				Field: fmt.Sprintf("method[%d].card", i), Message: "the card token was already used"}
		}
	}
	for _, m := range ms {
		f.used[m.Card] = true
	}
	return nil
}

// newMethods are the stored methods of card tokens. Call with data held.
func (f *fakeCustomers) newMethods(ms ...payments.PaymentMethodCreatable) []payments.PaymentMethod {
	out := make([]payments.PaymentMethod, 0, len(ms))
	for range ms {
		f.seq++
		out = append(out, payments.PaymentMethod{
			CardDetails: payments.CardDetails{Type: "card", Scheme: "visa", IIN: "424242", Last4: "4242", Expires: []int{12, 30}, Acquirer: "sandbox-acquirer"},
			Created:     "2025-03-01T10:00:00Z", Token: fmt.Sprintf("pm-%d", f.seq)})
	}
	return out
}

func (f *fakeCustomers) UpdateContact(ctx context.Context, id string, c payments.Contact) (*payments.Contact, error) {
	if err := f.enter("UpdateContact"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	cu := f.find(f.target(ctx, id))
	if cu == nil {
		return nil, paymentsNotFound()
	}
	cu.Contact = c
	out := c
	return &out, nil
}

// AddMethod stores a card on the customer (public key: a customer key
// plays no part).
func (f *fakeCustomers) AddMethod(_ context.Context, id string, m payments.PaymentMethodCreatable) (*payments.PaymentMethod, error) {
	if err := f.enter("AddMethod"); err != nil {
		return nil, err
	}
	pm, err := f.addMethod(id, m)
	if err != nil {
		return nil, err
	}
	return pm, f.lose("AddMethod")
}

// AddMethodWithOrder stores a card and authorises the order(s) with it.
func (f *fakeCustomers) AddMethodWithOrder(_ context.Context, id string, m payments.MethodWithOrder) (*payments.MethodWithOrderResult, error) {
	if err := f.enter("AddMethodWithOrder"); err != nil {
		return nil, err
	}
	pm, err := f.addMethod(id, m.Method)
	if err != nil {
		return nil, err
	}
	res := &payments.MethodWithOrderResult{Method: *pm, Order: f.p.orders.authorise(id, *pm, m.Order)}
	return res, f.lose("AddMethodWithOrder")
}

func (f *fakeCustomers) addMethod(id string, m payments.PaymentMethodCreatable) (*payments.PaymentMethod, error) {
	f.data.Lock()
	defer f.data.Unlock()
	cu := f.find(id)
	if cu == nil {
		return nil, paymentsNotFound()
	}
	if err := f.takeTokens(m); err != nil {
		return nil, err
	}
	methods, err := cu.Method.Decode()
	if err != nil {
		return nil, err
	}
	pm := f.newMethods(m)[0]
	cu.Method = deferred(append(methods, pm))
	return &pm, nil
}

// SetMethods replaces the customer's methods; as the sandbox, each must be
// one of its current methods, sent unchanged.
func (f *fakeCustomers) SetMethods(ctx context.Context, id string, methods []payments.PaymentMethod) (*payments.Customer, error) {
	if err := f.enter("SetMethods"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	cu := f.find(f.target(ctx, id))
	if cu == nil {
		return nil, paymentsNotFound()
	}
	current, err := cu.Method.Decode()
	if err != nil {
		return nil, err
	}
	for i, m := range methods {
		if !slices.ContainsFunc(current, func(c payments.PaymentMethod) bool { return fmt.Sprint(c) == fmt.Sprint(m) }) {
			return nil, &payments.ErrorResponse{StatusCode: http.StatusBadRequest, Code: "method_changed",
				Field: fmt.Sprintf("[%d]", i), Message: "a method must be sent unchanged"}
		}
	}
	cu.Method = deferred(methods)
	out := *cu
	return &out, nil
}

// lostAnswers makes a call act and then lose its answer, as a connection
// cut after the upstream acted: the caller gets the transport's error.
type lostAnswers struct {
	mu   sync.Mutex
	next map[string]int
}

// loseNext makes the next call of method act, then answer as unavailable.
func (l *lostAnswers) loseNext(method string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.next == nil {
		l.next = map[string]int{}
	}
	l.next[method]++
}

// lose is the answer of a call of method that has acted: nil, or the
// transport's error when its answer is to be lost.
func (l *lostAnswers) lose(method string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.next[method] == 0 {
		return nil
	}
	l.next[method]--
	return unavailable("payments")
}

// fakeOrders holds orders in creation order. Create follows the sandbox:
// a card token "tok_3ds_..." answers 402 verification_required and
// "tok_fail_..." 402 card_declined, both naming the attempt's order id,
// which a retry sends back (the spec's rule 3; another id is 400
// invalid_order_id); a 3-D Secure attempt succeeds once verify(id) was
// called. Apply moves orders as the sandbox does, all changes or none.
type fakeOrders struct {
	fakeService
	lostAnswers
	p       *fakePayments
	list    []payments.Order
	applied [][]payments.OrderChange
	// created are the requests Create took, in order.
	created []payments.OrderCreatable
	// pending maps the order id of a refused attempt to its state:
	// "3ds", "verified" or "failed".
	pending map[string]string
	seq     int
}

// add stores o as the upstream's.
func (f *fakeOrders) add(o payments.Order) {
	f.data.Lock()
	defer f.data.Unlock()
	f.list = append(f.list, o)
}

// find is the stored order id. Call with data held.
func (f *fakeOrders) find(id string) *payments.Order {
	for i := range f.list {
		if f.list[i].ID == id {
			return &f.list[i]
		}
	}
	return nil
}

// verify completes 3-D Secure of a refused attempt.
func (f *fakeOrders) verify(id string) {
	f.data.Lock()
	defer f.data.Unlock()
	f.pending[id] = "verified"
}

// sent is what Create was asked, in order.
func (f *fakeOrders) sent() []payments.OrderCreatable {
	f.data.Lock()
	defer f.data.Unlock()
	return slices.Clone(f.created)
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

func (f *fakeOrders) Create(ctx context.Context, o payments.OrderCreatable) (*payments.Order, error) {
	if err := f.enter("Create"); err != nil {
		return nil, err
	}
	f.data.Lock()
	f.created = append(f.created, o)
	if key, ok := payments.CustomerKey(ctx); ok {
		o.Customer = f.p.customerKeys[key]
	}
	state, retry := f.pending[o.ID]
	if o.ID != "" && !retry {
		f.data.Unlock()
		return nil, &payments.ErrorResponse{StatusCode: http.StatusBadRequest, Code: "invalid_order_id", Field: "id",
			Message: "id is not the id of an earlier failed attempt of this order"}
	}
	id := o.ID
	if id == "" {
		f.seq++
		id = fmt.Sprintf("ord-new-%d", f.seq)
	}
	card := ""
	if o.Payment != nil {
		card = o.Payment.Card
	}
	switch {
	case strings.HasPrefix(card, "tok_3ds_") && state != "verified":
		f.pending[id] = "3ds"
		f.data.Unlock()
		return nil, &payments.ErrorResponse{StatusCode: http.StatusPaymentRequired, Code: "verification_required",
			Message: "verification required", OrderID: id, VerificationURL: "https://payments.test/3ds/" + id}
	case strings.HasPrefix(card, "tok_fail_"):
		f.pending[id] = "failed"
		f.data.Unlock()
		return nil, &payments.ErrorResponse{StatusCode: http.StatusPaymentRequired, Code: "card_declined", Message: "card declined", OrderID: id}
	}
	delete(f.pending, id)
	out := f.newOrder(id, o, payments.CardDetails{Type: "card", Scheme: "visa", IIN: "424242", Last4: "4242", Expires: []int{12, 30}})
	f.data.Unlock()
	return &out, f.lose("Create")
}

// newOrder stores an authorised (or, charged, captured) order. Call with
// data held.
func (f *fakeOrders) newOrder(id string, o payments.OrderCreatable, card payments.CardDetails) payments.Order {
	out := payments.Order{ID: id, Created: time.Now().UTC(), Number: o.Number, Customer: payments.OrderCustomer{ID: o.Customer},
		Items: deferred(o.Items), Currency: o.Currency, Charge: o.Charge, Payment: deferred(card),
		Status: "authorized", Amount: o.Items.Total()}
	if o.Charge == "auto" {
		out.Status, out.CapturedAmount = "captured", out.Amount
	}
	f.list = append(f.list, out)
	return out
}

// authorise creates the orders of a customer or method creation (one
// OrderCreatable, or a slice) paid with m, and answers their signed
// tokens in the shape they were sent.
func (f *fakeOrders) authorise(customerID string, m payments.PaymentMethod, order any) payments.OrderTokens {
	var list []payments.OrderCreatable
	single := false
	switch o := order.(type) {
	case payments.OrderCreatable:
		list, single = []payments.OrderCreatable{o}, true
	case []payments.OrderCreatable:
		list = o
	}
	f.data.Lock()
	defer f.data.Unlock()
	out := payments.OrderTokens{Single: single}
	for _, o := range list {
		f.seq++
		o.Customer = customerID
		made := f.newOrder(fmt.Sprintf("ord-new-%d", f.seq), o, m.CardDetails)
		out.Tokens = append(out.Tokens, "token:"+made.ID)
	}
	return out
}

// Apply applies every change, or none: an unknown order is 404, a
// transition the order's state refuses 409 invalid_transition.
func (f *fakeOrders) Apply(_ context.Context, changes []payments.OrderChange) ([]payments.OrderChange, error) {
	if err := f.enter("Apply"); err != nil {
		return nil, err
	}
	f.data.Lock()
	work := map[string]payments.Order{}
	for _, ch := range changes {
		o, ok := work[ch.ID]
		if !ok {
			stored := f.find(ch.ID)
			if stored == nil {
				f.data.Unlock()
				return nil, paymentsNotFound()
			}
			o = *stored
		}
		for _, ev := range ch.Event {
			if msg := applyOrderEvent(&o, ev); msg != "" {
				f.data.Unlock()
				return nil, &payments.ErrorResponse{StatusCode: http.StatusConflict, Code: "invalid_transition", Field: "[0].event[0]", Message: msg}
			}
		}
		work[ch.ID] = o
	}
	for id, o := range work {
		*f.find(id) = o
	}
	f.applied = append(f.applied, slices.Clone(changes))
	f.data.Unlock()
	return slices.Clone(changes), f.lose("Apply")
}

// applyOrderEvent moves o by ev as the sandbox does; the message says why
// a transition is refused.
func applyOrderEvent(o *payments.Order, ev payments.OrderEvent) string {
	switch ev.Type {
	case payments.EventCapture:
		left := o.Amount - o.CapturedAmount
		amt := left
		if ev.Amount != nil {
			amt = *ev.Amount
		}
		if o.Status != "authorized" || amt <= 0 || amt > left {
			return "capture needs an authorized order and an amount up to what is left, it is " + o.Status
		}
		o.CapturedAmount += amt
		o.Status = "captured"
	case payments.EventRefund:
		left := o.CapturedAmount - o.RefundedAmount
		amt := left
		if ev.Amount != nil {
			amt = *ev.Amount
		}
		if (o.Status != "captured" && o.Status != "partially_refunded") || amt <= 0 || amt > left {
			return "refund needs a captured order and an amount up to what is left, it is " + o.Status
		}
		o.RefundedAmount += amt
		o.Status = "partially_refunded"
		if o.RefundedAmount == o.CapturedAmount {
			o.Status = "refunded"
		}
	default:
		if o.Status != "authorized" {
			return "cancel needs an authorized order, it is " + o.Status
		}
		o.Status = "cancelled"
	}
	return ""
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
