package loaders

import (
	"context"
	"net/http"
	"sync"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/fingraph/fingraph/upstream/payments"
)

// pendingActionBatch reads each event's pending action. The upstream has no
// batch read, so the batch runs its requests concurrently; an event with no
// pending action (404) loads as nil.
func pendingActionBatch(p *payments.Client) dataloader.BatchFunc[string, *payments.PendingAction] {
	return func(ctx context.Context, ids []string) []*dataloader.Result[*payments.PendingAction] {
		out := make([]*dataloader.Result[*payments.PendingAction], len(ids))
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		for i, id := range ids {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				pa, err := p.PendingActions.ByEvent(ctx, id)
				if pe, ok := payments.AsError(err); ok && pe.StatusCode == http.StatusNotFound {
					pa, err = nil, nil
				}
				out[i] = &dataloader.Result[*payments.PendingAction]{Data: pa, Error: err}
			}()
		}
		wg.Wait()
		return out
	}
}
