package resolvers

import (
	"context"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/session"
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

// idempotencyScope keeps idempotency keys apart per principal: two API
// clients, or two customers, choosing the same key never share an attempt.
func idempotencyScope(ctx context.Context) string {
	s := session.From(ctx)
	if s == nil {
		return "signed-out"
	}
	return string(s.Kind) + "|" + s.PrincipalID + "|" + s.CorporationID
}
