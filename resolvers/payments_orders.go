package resolvers

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/idempotency"
	"github.com/fingraph/fingraph/upstream/payments"
)

// applyOrderEvent validates and applies one capture, refund or cancel.
// Whether the order's state allows it is the upstream's call; its refusal
// reaches the client as UPSTREAM_REJECTED with the upstream's reason.
func (r *mutationResolver) applyOrderEvent(ctx context.Context, orderID, kind string, amount *int64) (*model.OrderChangePayload, error) {
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
	if _, err := r.Payments.Orders.Apply(ctx, []payments.OrderChange{{ID: orderID, Event: []payments.OrderEvent{ev}}}); err != nil {
		return nil, err
	}
	return &model.OrderChangePayload{OrderID: orderID, Applied: kind}, nil
}

// createOrder validates the order, then places it under its idempotency
// key: a retry after a refusal carries the refused order's id (the spec's
// rule 3), a retry after a success gets the same order back, and two
// concurrent calls with one key make one upstream order. An attempt whose
// answer was lost is remembered as unknown; a retry looks for its order in
// the order listing (by the refused order's id it carried, or by the
// number the gateway gave it) before it charges anything again.
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
	key := deref(input.IdempotencyKey)
	if key == "" {
		return r.placeOrder(ctx, req)
	}
	scope := idempotencyScope(ctx, "order")
	fp := fingerprint(req)
	if req.Number == "" {
		// The spec's number is the merchant's order identifier, echoed in
		// the order: the gateway names the key's order with it, so that the
		// order of an attempt whose answer was lost can be found.
		req.Number = orderReference(scope, key)
	}
	var (
		result  model.CreateOrderResult
		callErr error
	)
	a, err := r.Attempts.Do(ctx, scope, key, fp,
		func(ctx context.Context, prior *idempotency.Attempt) (idempotency.Attempt, error) {
			if prior != nil && prior.Unknown {
				found, resend, err := r.resolveUnknown(ctx, scope, key, *prior, func(ctx context.Context, from, to time.Time) (match, error) {
					return r.findOrder(ctx, prior.ID, req, from, to)
				})
				if err != nil || !resend {
					callErr = err
					return found, err
				}
			}
			if prior != nil {
				req.ID = prior.ID
			}
			sentAt := r.now()
			var attempt idempotency.Attempt
			result, attempt, callErr = r.placeOrderAttempt(ctx, req)
			if outcomeUnknown(callErr) {
				attempt = unknownAttempt(prior, nil, sentAt, r.now())
				result, callErr = nil, errOutcomeUnknown(attempt, "the gateway did not send it again")
				return attempt, nil
			}
			return attempt, callErr
		})
	switch {
	case err != nil && errors.Is(err, callErr):
		return nil, err
	case err != nil:
		return nil, idempotencyError("input.idempotencyKey", err)
	case result != nil:
		return result, nil
	case callErr != nil:
		return nil, callErr // the outcome is unknown; remembered as such
	}
	// A replay: the order an earlier call with this key created, or the one
	// a lost attempt created, found in the listing.
	var o payments.Order
	if err := json.Unmarshal(a.Result, &o); err != nil {
		return nil, gqlerr.InternalError(err)
	}
	return toOrder(&o), nil
}

// orderReference is the order number the gateway gives the order of an
// idempotency key when the client names none: the same for every attempt
// with the key, and no other key's.
func orderReference(scope, key string) string {
	return "fg-" + idempotency.Key(scope, key)[:32]
}

// findOrder reads the orders created between from and to, and returns the
// ones the attempt made: the order with the refused order's id it carried,
// or the orders with its number, customer, currency and total.
func (r *mutationResolver) findOrder(ctx context.Context, id string, req payments.OrderCreatable, from, to time.Time) (match, error) {
	list, err := r.Payments.Orders.List(ctx, from, to)
	if err != nil {
		return nil, err
	}
	var out match
	for i := range list {
		o := &list[i]
		switch {
		case id != "" && o.ID != id:
			continue
		case id == "" && (o.Number != req.Number || o.Currency != req.Currency || o.Customer.ID != req.Customer ||
			o.Items.Total() != req.Items.Total() || o.Created.Before(from) || o.Created.After(to)):
			continue
		}
		b, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		out = append(out, idempotency.Attempt{ID: o.ID, Succeeded: true, Result: b})
	}
	return out, nil
}

// placeOrder places an order with no idempotency key: one attempt, nothing
// remembered.
func (r *mutationResolver) placeOrder(ctx context.Context, req payments.OrderCreatable) (model.CreateOrderResult, error) {
	res, _, err := r.placeOrderAttempt(ctx, req)
	return res, err
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
