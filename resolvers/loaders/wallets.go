package loaders

import (
	"context"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/fingraph/fingraph/upstream/banking"
)

// Money is the set of loaders of wallets and money movement of one request.
type Money struct {
	// CorporationWallets loads the wallets of corporations by corporation
	// id: one GET /corporations/:id/wallets per distinct corporation (the
	// upstream lists per corporation only), the listings of one batch
	// fanOut at a time. wallet(id) is served from the same listing.
	CorporationWallets Loader[string, []*banking.Wallet]
	// CorporationRequisites loads the requisites of corporations: one
	// GET .../wallet-requisites per distinct corporation.
	CorporationRequisites Loader[string, []*banking.Requisites]
	// CorporationInvoices loads invoices, one listing per corporation.
	CorporationInvoices Loader[string, []*banking.Invoice]
	// CorporationLimits loads limits, one listing per corporation.
	CorporationLimits Loader[string, []*banking.Limit]

	wallets *ahead[[]*banking.Wallet]
}

func (m *Money) init(b *banking.Client, wait time.Duration) {
	m.wallets = newAhead(b.Wallets.List)
	m.CorporationWallets.init(perCorporation(m.wallets.read), wait)
	m.CorporationRequisites.init(perCorporation(b.Requisites.List), wait)
	m.CorporationInvoices.init(perCorporation(b.Invoices.List), wait)
	m.CorporationLimits.init(perCorporation(b.Limits.List), wait)
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

// perCorporation is the batch of a loader of one per-corporation upstream
// listing: the upstream has no batch route, so each distinct corporation
// costs one call, fanOut in flight at a time, and repeated keys within an
// operation cost nothing (the loader's cache). One corporation's failure is
// its own key's error.
func perCorporation[T any](list func(ctx context.Context, corporationID string) ([]T, error)) dataloader.BatchFunc[string, []T] {
	return perKey(list)
}
