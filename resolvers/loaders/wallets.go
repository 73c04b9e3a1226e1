package loaders

import (
	"context"

	"github.com/fingraph/fingraph/upstream/banking"
)

// Money is the wallet and money movement reads of one operation. The
// upstream lists each per corporation only: one call per corporation.
type Money struct {
	// CorporationWallets reads a corporation's wallets: one
	// GET /corporations/:id/wallets; wallet(id) is served from the same
	// listing.
	CorporationWallets Read[string, []*banking.Wallet]
	// CorporationRequisites reads a corporation's wallet requisites.
	CorporationRequisites Read[string, []*banking.Requisites]
	// CorporationInvoices reads a corporation's invoices.
	CorporationInvoices Read[string, []*banking.Invoice]
	// CorporationLimits reads a corporation's limits.
	CorporationLimits Read[string, []*banking.Limit]
	// WalletTransactions reads a page of a wallet's transactions: one call
	// per distinct (wallet, page), as CardTransactions does for cards; a
	// wallet reached twice with the same page pays it once.
	WalletTransactions Read[WalletTransactionsKey, *banking.TransactionList]
}

// WalletTransactionsKey names one page of one wallet's transactions: the
// corporation, the wallet and the page's upstream arguments.
type WalletTransactionsKey struct {
	CorporationID, WalletID string
	Options                 banking.ListOptions
}

func (m *Money) init(b BankingSource, w *Workers) {
	m.CorporationWallets.init(b.Wallets.List, w)
	m.CorporationRequisites.init(b.Requisites.List, w)
	m.CorporationInvoices.init(b.Invoices.List, w)
	m.CorporationLimits.init(b.Limits.List, w)
	m.WalletTransactions.init(func(ctx context.Context, k WalletTransactionsKey) (*banking.TransactionList, error) {
		opts := k.Options
		return b.Transactions.ListByWallet(ctx, k.CorporationID, k.WalletID, &opts)
	}, w)
}

// CorporationWallet finds one wallet of a corporation in the corporation's
// wallet listing: a real wallet by its id, or a pending wallet by the id its
// real wallet names. Nil when the corporation has no such wallet.
func (m *Money) CorporationWallet(ctx context.Context, corporationID, walletID string) (*banking.Wallet, *banking.Wallet, error) {
	list, err := m.CorporationWallets.Get(ctx, corporationID)
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
