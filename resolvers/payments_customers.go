package resolvers

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/payments"
)

// customerTarget is the customer id a mutation addresses: the given id, or
// `me` in a customer session, where giving an id is refused so that a
// customer can never address anyone else.
func customerTarget(ctx context.Context, field string, id *string) (string, error) {
	if inCustomerSession(ctx) {
		if id != nil {
			return "", gqlerr.BadInput(field, "leave %s out in a customer session: it acts on its own customer", field)
		}
		return "me", nil
	}
	if id == nil {
		return "", gqlerr.BadInput(field, "%s is required", field)
	}
	if err := checkText(field, *id, true); err != nil {
		return "", err
	}
	return *id, nil
}

// orderCustomer refuses an order of a customer session that names another
// customer: a customer key acts as `me` only.
func orderCustomer(ctx context.Context, id *string) error {
	s := session.From(ctx)
	if s == nil || s.Kind != session.Customer || id == nil {
		return nil
	}
	switch *id {
	case "", "me", s.PrincipalID:
		return nil
	}
	return gqlerr.Forbiddenf("a customer session may create orders only for itself")
}

// signedOrders verifies every signed order token the upstream answered; a
// token that fails verification is never trusted or passed on.
func (r *Resolver) signedOrders(ctx context.Context, tokens payments.OrderTokens) ([]*model.SignedOrder, error) {
	confirm := r.Payments.OrderTokens.VerifyAll
	if !r.Payments.Offers(payments.SigningKeys) {
		// No published key to verify with: the orders are read from the
		// upstream's listing instead, never from an unverified token.
		confirm = r.Payments.OrderTokens.ConfirmAll
	}
	verified, err := confirm(ctx, tokens.Tokens)
	if err != nil {
		return nil, gqlerr.InternalError(err)
	}
	out := make([]*model.SignedOrder, 0, len(verified))
	for _, v := range verified {
		out = append(out, &model.SignedOrder{Token: v.Token, Order: toOrder(v.Order)})
	}
	return out, nil
}

// orderBody is what the upstream takes as the order of a customer or method
// creation: one object for one order, an array for several.
func orderBody(orders []payments.OrderCreatable) any {
	switch len(orders) {
	case 0:
		return nil
	case 1:
		return orders[0]
	}
	return orders
}

// savedCardPayment builds the saved-card payment from the stored method, as
// the spec's conversion function does, after checking that the card is one
// of the customer's.
func (r *Resolver) savedCardPayment(ctx context.Context, req *payments.OrderCreatable, in *model.SavedCardPaymentInput) error {
	var c *payments.Customer
	var err error
	if req.Customer == "" || inCustomerSession(ctx) {
		// A customer session's order is its own customer's, however it
		// names it (none, "me" or its id: orderCustomer refused others).
		c, err = r.Payments.Customers.Get(ctx, "me")
	} else {
		c, err = loaders.For(ctx).Customer.Get(ctx, req.Customer)
	}
	if err != nil {
		return err
	}
	if c == nil {
		return gqlerr.BadInput("input.customerId", "there is no customer %q", req.Customer)
	}
	methods, err := customerMethods(c)
	if err != nil {
		return err
	}
	for _, m := range methods {
		if m.Token == in.MethodToken {
			ref := deref(in.Reference)
			if ref == "" {
				ref = req.Number
			}
			if ref == "" {
				ref = newReference()
			}
			req.Customer = c.ID
			req.Payment = payments.SavedCardPayment(m, initiator(in.Initiator, payments.InitiatorMerchant), ref)
			return nil
		}
	}
	return gqlerr.BadInput("input.payment.savedCard.methodToken", "not a stored card of this customer")
}

func newReference() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "fg-" + hex.EncodeToString(b)
}

// methodsInOrder builds the array for PUT /methods from the customer's
// stored methods, in the order of tokens, unchanged in content.
func methodsInOrder(c *payments.Customer, tokens []string) ([]payments.PaymentMethod, error) {
	methods, err := customerMethods(c)
	if err != nil {
		return nil, err
	}
	byToken := make(map[string]payments.PaymentMethod, len(methods))
	for _, m := range methods {
		byToken[m.Token] = m
	}
	seen := map[string]bool{}
	out := make([]payments.PaymentMethod, 0, len(tokens))
	for i, t := range tokens {
		field := fmt.Sprintf("input.methodTokens[%d]", i)
		m, ok := byToken[t]
		if !ok {
			return nil, gqlerr.BadInput(field, "not a stored card of this customer")
		}
		if seen[t] {
			return nil, gqlerr.BadInput(field, "a card may appear only once")
		}
		seen[t] = true
		out = append(out, m)
	}
	return out, nil
}

// prefetchOrderCustomers reads the customers of a list of orders in one
// listing when the query selects Order.customer for more than one customer.
// A customer session never lists: its loader reads only itself.
func (r *Resolver) prefetchOrderCustomers(ctx context.Context, orders []payments.Order) error {
	if inCustomerSession(ctx) || !selects(ctx, "customer") {
		return nil
	}
	distinct := map[string]bool{}
	for _, o := range orders {
		if o.Customer.ID != "" {
			distinct[o.Customer.ID] = true
		}
	}
	if len(distinct) < 2 {
		return nil
	}
	_, err := primeCustomers(ctx)
	return err
}

// primeCustomers reads the merchant's customer listing once per operation
// and stores each customer as the Customer loader's answer for its id: the
// customers of a list are then answered without a batch, and a query's cost
// does not depend on how the loader's window happens to split the keys.
func primeCustomers(ctx context.Context) ([]payments.Customer, error) {
	l := loaders.For(ctx)
	list, err := l.Customers.Get(ctx, loaders.Whole{})
	if err != nil {
		return nil, err
	}
	for i := range list {
		l.Customer.Prime(ctx, list[i].ID, &list[i])
	}
	return list, nil
}

// customerTypes are the types a fragment on a customer may name (the type
// and its interface), as gqlgen collects its fields.
var customerTypes = []string{"Customer", "Node"}

// startCustomersOrders begins, for the customer list being resolved, the
// order listings its customers' orders fields will read. A listing depends
// on the field's date window only, which the arguments give, not on the
// customers, so it is read beside the customer listing instead of after it:
// the README query waits for one upstream round trip instead of two. An
// argument the field would refuse starts nothing; the field reports it.
// When the customer listing fails or is empty, the order listing was read
// for nothing (one upstream call, as with startCorporationReads). At most
// maxEarlyOrderWindows distinct windows start here, all at once; aliases
// with more windows are read by the batch resolver, a bounded number at a
// time, as before.
func startCustomersOrders(ctx context.Context, now time.Time) {
	if graphql.GetFieldContext(ctx) == nil {
		return
	}
	vars := graphql.GetOperationContext(ctx).Variables
	l := loaders.For(ctx)
	var started [maxEarlyOrderWindows][2]time.Time
	n := 0
	for _, f := range graphql.CollectFieldsCtx(ctx, customerTypes) {
		if f.Name != "orders" {
			continue
		}
		args := f.ArgumentMap(vars)
		start, ok1 := dateArg(args["start"])
		end, ok2 := dateArg(args["end"])
		if !ok1 || !ok2 {
			continue
		}
		s, e, err := orderWindow(now, start, end)
		if err != nil || slices.Contains(started[:n], [2]time.Time{s, e}) {
			continue
		}
		if n == len(started) {
			return
		}
		started[n] = [2]time.Time{s, e}
		n++
		l.Orders.Start(ctx, loaders.WindowOf(s, e))
	}
}

// maxEarlyOrderWindows bounds the order listings one customer list starts
// before its customers are read: a screen shows one date range, or two to
// compare.
const maxEarlyOrderWindows = 2

// dateArg reads an optional Date argument as gqlgen would: nil when absent
// or null, false when it is not a date.
func dateArg(v any) (*model.Date, bool) {
	if v == nil {
		return nil, true
	}
	var d model.Date
	if err := d.UnmarshalGQL(v); err != nil {
		return nil, false
	}
	return &d, true
}

// customersOrders answers Customer.orders for all the sibling customers of
// a list at once (a gqlgen batch resolver, gqlgen.yml), from the window's
// one listing, which the customer list has usually started already: the
// README query neither waits a loader's window nor parks a batch goroutine,
// timer and thunk per customer. When the listing failed, each customer gets
// the error on its own path (batchResults).
func customersOrders(ctx context.Context, customers []*model.Customer, start, end time.Time) ([][]*model.Order, error) {
	list, err := loaders.For(ctx).Orders.Get(ctx, loaders.WindowOf(start, end))
	lists, errs := make([][]payments.Order, len(customers)), make([]error, len(customers))
	for i, c := range customers {
		lists[i], errs[i] = list.Of(c.ID), err
	}
	return batchResults(lists, errs, toOrders)
}

// madeWithOrders is what a key remembers of a customer or payment method it
// created: the record's id (a method's token digest) and the signed orders
// authorised with it.
type madeWithOrders struct {
	ID     string   `json:"id"`
	Orders []string `json:"orders,omitempty"`
}

// tokenDigest names a stored method without its token, which is a credential.
func tokenDigest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// customerMethod reads the customer again and finds the method whose token
// has digest d.
func (r *Resolver) customerMethod(ctx context.Context, customerID, d string) (*payments.PaymentMethod, error) {
	c, err := r.Payments.Customers.Get(ctx, customerID)
	if err != nil {
		return nil, err
	}
	methods, err := customerMethods(c)
	if err != nil {
		return nil, err
	}
	for i := range methods {
		if tokenDigest(methods[i].Token) == d {
			return &methods[i], nil
		}
	}
	return nil, gqlerr.NotFoundf("the payment method this idempotencyKey added is no longer the customer's")
}

// changedCustomer reads the customer a mutation has just changed, for its
// payload: straight from the upstream, not through the operation's loader,
// which may hold the customer as it was before the change (an earlier
// field of the same document). The shared reads of the upstream client
// read a client's own writes. The loader is primed with what was read.
func (r *Resolver) changedCustomer(ctx context.Context, id string) (*model.Customer, error) {
	c, err := r.Payments.Customers.Get(ctx, id)
	if payments.IsNotFound(err) {
		return nil, gqlerr.NotFoundf("there is no customer %q", id)
	}
	if err != nil {
		return nil, err
	}
	loaders.For(ctx).Customer.Prime(ctx, c.ID, c)
	return toCustomer(c), nil
}
