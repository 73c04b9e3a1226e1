package loaders

import (
	"context"
	"sync"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/fingraph/fingraph/upstream/banking"
)

// Money is the set of loaders of wallets and money movement of one request.
type Money struct {
	// CorporationWallets loads the wallets of corporations by corporation
	// id: one GET /corporations/:id/wallets per distinct corporation (the
	// upstream lists per corporation only), the listings of one batch in
	// parallel. wallet(id) is served from the same listing.
	CorporationWallets *dataloader.Loader[string, []*banking.Wallet]
}

func newMoney(b *banking.Client) Money {
	return Money{
		CorporationWallets: dataloader.NewBatchedLoader(corporationWalletsBatch(b),
			dataloader.WithWait[string, []*banking.Wallet](Wait)),
	}
}

func corporationWalletsBatch(b *banking.Client) dataloader.BatchFunc[string, []*banking.Wallet] {
	return func(ctx context.Context, ids []string) []*dataloader.Result[[]*banking.Wallet] {
		out := make([]*dataloader.Result[[]*banking.Wallet], len(ids))
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				list, err := b.Wallets.List(ctx, id)
				out[i] = &dataloader.Result[[]*banking.Wallet]{Data: list, Error: err}
			}()
		}
		wg.Wait()
		return out
	}
}

// CorporationWallet finds one wallet of a corporation in the corporation's
// wallet listing: a real wallet by its id, or a pending wallet by the id its
// real wallet names. Nil when the corporation has no such wallet.
func (m *Money) CorporationWallet(ctx context.Context, corporationID, walletID string) (*banking.Wallet, *banking.Wallet, error) {
	list, err := m.CorporationWallets.Load(ctx, corporationID)()
	if err != nil {
		return nil, nil, err
	}
	for _, w := range list {
		if w.ID == walletID {
			return w, nil, nil
		}
		if w.Pending != nil && w.Pending.ID == walletID {
			return nil, w, nil
		}
	}
	return nil, nil, nil
}
