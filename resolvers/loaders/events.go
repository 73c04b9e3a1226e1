package loaders

import (
	"context"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/fingraph/fingraph/upstream/payments"
)

// pendingActionBatch reads each event's pending action. The upstream has no
// batch read, so one call per distinct event, fanOut at a time; an event
// with no pending action (404) loads as nil.
func pendingActionBatch(p *payments.Client) dataloader.BatchFunc[string, *payments.PendingAction] {
	return perKey(func(ctx context.Context, id string) (*payments.PendingAction, error) {
		pa, err := p.PendingActions.ByEvent(ctx, id)
		if payments.IsNotFound(err) {
			return nil, nil
		}
		return pa, err
	})
}
