package model

import "time"

// Wallet is a corporation wallet. It is written by hand because it carries
// the ids its edges resolve from (corporation, pending wallet), which the
// schema does not show.
type Wallet struct {
	ID        string
	Name      string
	Currency  string
	Balance   *Money
	Type      WalletType
	Purpose   *string
	Adapter   *WalletAdapter
	CreatedAt *time.Time

	// CorporationID is the owner, for Wallet.corporation.
	CorporationID string
	// PendingID is the pending wallet, for Wallet.pending; "" when none.
	PendingID string
	// PendingBalance is the pending wallet's amount as the listing gave it.
	PendingBalance *Money
}
