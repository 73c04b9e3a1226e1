package resolvers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/idempotency"
	"github.com/fingraph/fingraph/upstream/payments"
)

// applyOrderEvent validates and applies one capture, refund or cancel,
// through the idempotency mechanism. Whether the order's state allows it is
// the upstream's call; its refusal reaches the client as UPSTREAM_REJECTED
// with the upstream's reason.
//
// Changes of one order go through one lane, keyed or not: one at a time,
// and one whose answer was lost holds the order until it has settled. A
// keyed change reads the order just before it is sent; after a lost answer
// a retry reads it again and answers the truth: the change is there (the
// captured or refunded amount moved by exactly it, or the order is
// cancelled, and nothing else touched the order meanwhile), or it is not
// there and has settled (then it is sent), or OUTCOME_UNKNOWN.
func (r *mutationResolver) applyOrderEvent(ctx context.Context, orderID, kind string, amount *int64, key *string) (*model.OrderChangePayload, error) {
	if err := checkText("input.orderId", orderID, true); err != nil {
		return nil, err
	}
	ev := payments.OrderEvent{Type: kind}
	if amount != nil {
		if *amount <= 0 {
			return nil, gqlerr.BadInput("input.amount", "amount must be a positive number of minor units")
		}
		a := *amount
		ev.Amount = &a
	}
	in, err := r.intent(ctx, "order-"+kind, key, orderChangeFingerprint(orderID, ev))
	if err != nil {
		return nil, err
	}
	in.Lane = "order|" + orderID
	in.Send = func(ctx context.Context, _ *idempotency.Attempt) (idempotency.Attempt, error) {
		if _, err := r.Payments.Orders.Apply(ctx, []payments.OrderChange{{ID: orderID, Event: []payments.OrderEvent{ev}}}); err != nil {
			return idempotency.Attempt{}, err
		}
		return idempotency.Attempt{ID: orderID, Succeeded: true}, nil
	}
	if in.Key != "" {
		in.Snapshot = func(ctx context.Context) (json.RawMessage, error) {
			o, err := r.readOrder(ctx, orderID)
			if err != nil || o == nil {
				return nil, err
			}
			return json.Marshal(stateOf(o))
		}
		in.Find = func(ctx context.Context, prior idempotency.Attempt, _, _ time.Time) ([]idempotency.Candidate, error) {
			return r.findOrderChange(ctx, orderID, ev, prior.Sent)
		}
	}
	if _, err := r.Attempts.Run(ctx, in); err != nil {
		return nil, moneyError(err)
	}
	return &model.OrderChangePayload{OrderID: orderID, Applied: kind}, nil
}

func orderChangeFingerprint(orderID string, ev payments.OrderEvent) string {
	amount := "all"
	if ev.Amount != nil {
		amount = strconv.FormatInt(*ev.Amount, 10)
	}
	sum := sha256.Sum256([]byte(orderID + "|" + ev.Type + "|" + amount))
	return hex.EncodeToString(sum[:])
}

// orderState is what a change of an order is measured against.
type orderState struct {
	Status   string `json:"status"`
	Amount   int64  `json:"amount"`
	Captured int64  `json:"captured"`
	Refunded int64  `json:"refunded"`
}

func stateOf(o *payments.Order) orderState {
	return orderState{Status: o.Status, Amount: o.Amount, Captured: o.CapturedAmount, Refunded: o.RefundedAmount}
}

// readOrder reads an order as the upstream holds it now (not from the
// request's cached listing): nil when it is not among the orders of the
// last orderWindowDays.
func (r *Resolver) readOrder(ctx context.Context, id string) (*payments.Order, error) {
	end := r.now().UTC()
	list, err := r.Payments.Orders.List(ctx, end.Add(-orderWindowDays*24*time.Hour), end)
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].ID == id {
			return &list[i], nil
		}
	}
	return nil, nil
}

// findOrderChange reads the order again and compares it with the state
// read before the lost attempt (snap): exactly the attempt's change is one
// candidate, no change at all none, anything else cannot be attributed.
func (r *Resolver) findOrderChange(ctx context.Context, orderID string, ev payments.OrderEvent, snap json.RawMessage) ([]idempotency.Candidate, error) {
	var before orderState
	if len(snap) == 0 || json.Unmarshal(snap, &before) != nil {
		return nil, errors.New("no state of the order was read before the attempt")
	}
	o, err := r.readOrder(ctx, orderID)
	if err != nil {
		return nil, err
	}
	if o == nil {
		return nil, errors.New("the order is not in the listing")
	}
	now := stateOf(o)
	found := []idempotency.Candidate{{ID: orderID}}
	switch ev.Type {
	case payments.EventCapture:
		want := before.Amount - before.Captured
		if ev.Amount != nil {
			want = *ev.Amount
		}
		switch {
		case now.Captured == before.Captured && now.Status == before.Status:
			return nil, nil
		case now.Captured-before.Captured == want && want > 0:
			return found, nil
		}
	case payments.EventRefund:
		want := before.Captured - before.Refunded
		if ev.Amount != nil {
			want = *ev.Amount
		}
		switch {
		case now.Refunded == before.Refunded:
			return nil, nil
		case now.Refunded-before.Refunded == want && want > 0:
			return found, nil
		}
	case payments.EventCancel:
		switch {
		case now.Status == before.Status:
			return nil, nil
		case now.Status == "cancelled":
			return found, nil
		}
	}
	return nil, fmt.Errorf("the order changed otherwise than by this attempt: %w", idempotency.ErrUnprovable)
}

// createOrder validates the order, then places it through the idempotency
// mechanism: a retry after a refusal carries the refused order's id (the
// spec's rule 3), a retry after a success gets the same order back, and two
// concurrent calls with one key make one upstream order. After a lost
// answer a retry looks for its order in the order listing, and answers it
// only when it is provably the key's: it carries the refused order's id the
// attempt sent, or the number the gateway gave the key's order.
func (r *mutationResolver) createOrder(ctx context.Context, input model.CreateOrderInput) (model.CreateOrderResult, error) {
	if err := orderCustomer(ctx, input.CustomerID); err != nil {
		return nil, err
	}
	req, err := toOrderCreatable(ctx, input)
	if err != nil {
		return nil, err
	}
	if sc := input.Payment.SavedCard; sc != nil {
		if err := r.savedCardPayment(ctx, &req, sc); err != nil {
			return nil, err
		}
	}
	in, err := r.intent(ctx, "order", input.IdempotencyKey, fingerprint(req))
	if err != nil {
		return nil, err
	}
	in.Records = recordsOrder
	ref := ""
	if in.Key != "" && req.Number == "" {
		// The spec's number is the merchant's order identifier, echoed in
		// the order: the gateway names the key's order with it, so that the
		// order of an attempt whose answer was lost can be proven the key's.
		ref = orderReference(in.Scope, in.Key)
		req.Number = ref
	}
	var result model.CreateOrderResult
	in.Send = func(ctx context.Context, prior *idempotency.Attempt) (idempotency.Attempt, error) {
		if prior != nil {
			req.ID = prior.ID
		}
		var (
			a   idempotency.Attempt
			err error
		)
		result, a, err = r.placeOrderAttempt(ctx, req)
		return a, err
	}
	in.Find = func(ctx context.Context, prior idempotency.Attempt, from, to time.Time) ([]idempotency.Candidate, error) {
		return r.findOrder(ctx, prior.ID, ref, req, from, to)
	}
	o, err := r.Attempts.Run(ctx, in)
	switch {
	case err != nil:
		return nil, moneyError(err)
	case result != nil:
		return result, nil
	}
	// A replay: the order an earlier call with this key created, or the one
	// a lost attempt created, found in the listing.
	order, err := replayed[payments.Order](o)
	if err != nil {
		return nil, err
	}
	return toOrder(order), nil
}

// orderReference is the order number the gateway gives the order of an
// idempotency key when the client names none: the same for every attempt
// with the key, and no other key's.
func orderReference(scope, key string) string {
	return "fg-" + idempotency.Key(scope, key)[:32]
}

// findOrder reads the orders created between from and to, and returns the
// ones the attempt may have made: the order with the refused order's id it
// carried, or the orders with its number, customer, currency and total.
// Proven are the order with that id and the orders with the number the
// gateway chose (ref); a number the client chose proves nothing, another
// request may have used it.
func (r *mutationResolver) findOrder(ctx context.Context, id, ref string, req payments.OrderCreatable, from, to time.Time) ([]idempotency.Candidate, error) {
	// An order that carries the key's own number is the key's however the
	// payments upstream's clock dates it: the listing reaches a minute
	// further back for it. Any other match must lie in the window.
	list, err := r.Payments.Orders.List(ctx, from.Add(-time.Minute), to)
	if err != nil {
		return nil, err
	}
	var out []idempotency.Candidate
	for i := range list {
		o := &list[i]
		own := ref != "" && o.Number == ref
		switch {
		case id != "" && o.ID != id:
			continue
		case id == "" && (o.Number != req.Number || o.Currency != req.Currency || o.Customer.ID != req.Customer ||
			itemsTotal(o) != req.Items.Total()):
			continue
		case id == "" && !own && (o.Created.Before(from) || o.Created.After(to)):
			continue
		}
		b, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		out = append(out, idempotency.Candidate{ID: o.ID, Result: b, Proven: id != "" || (ref != "" && o.Number == ref)})
	}
	return out, nil
}

// placeOrderAttempt sends one order attempt and returns its GraphQL result
// and what idempotency remembers of it: a refusal that names an order id
// (declined, 3-D Secure required) is an expected result, and its id is what
// a retry must send.
func (r *mutationResolver) placeOrderAttempt(ctx context.Context, req payments.OrderCreatable) (model.CreateOrderResult, idempotency.Attempt, error) {
	o, err := r.Payments.Orders.Create(ctx, req)
	if pe, ok := payments.AsError(err); ok && pe.OrderID != "" {
		a := idempotency.Attempt{ID: pe.OrderID}
		if pe.VerificationRequired() {
			return &model.VerificationRequired{OrderID: pe.OrderID, VerificationURL: strPtr(pe.VerificationURL), Message: "verification required"}, a, nil
		}
		return &model.OrderFailed{OrderID: pe.OrderID, Code: pe.Code, Message: pe.Message}, a, nil
	}
	if err != nil {
		return nil, idempotency.Attempt{}, err
	}
	b, err := json.Marshal(o)
	if err != nil {
		return nil, idempotency.Attempt{}, gqlerr.InternalError(err)
	}
	return toOrder(o), idempotency.Attempt{ID: o.ID, Succeeded: true, Result: b}, nil
}

// itemsTotal is what an order's items are worth, or -1 when they cannot be
// read: no request's items are.
func itemsTotal(o *payments.Order) int64 {
	items, err := o.Items.Decode()
	if err != nil {
		return -1
	}
	return items.Total()
}
