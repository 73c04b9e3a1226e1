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
	// UpdatedAt, BankAddress, CreatedBy and CreatedByLoginID are the
	// details of schema/details.graphqls.
	UpdatedAt        *time.Time
	BankAddress      *BankAddress
	CreatedBy        *Actor
	CreatedByLoginID *string

	// CorporationID is the owner, for Wallet.corporation.
	CorporationID string
	// Owner is the owning corporation when the wallet was reached from it,
	// so Wallet.corporation costs no upstream call.
	Owner *Corporation
	// PendingWallet is the pending wallet as the listing gave it, for
	// Wallet.pending; nil when none.
	PendingWallet *Wallet
	// PartialRequisites are the attached requisites the listing carried,
	// for Wallet.requisites.
	PartialRequisites []*WalletRequisites
}

// Conversion is a conversion transaction. Written by hand for the
// corporation its sourceWallet edge resolves in.
type Conversion struct {
	ID                string
	Status            TransactionStatus
	StatusCode        int64
	Source            *Money
	Target            *Money
	Charge            *Money
	ExchangeRate      *float64
	AmountEquivalents []*Money
	ChargeEquivalents []*Money
	SourceWalletID    string
	TargetWalletID    *string
	CreatedAt         *time.Time

	// CorporationID is the corporation of the wallets.
	CorporationID string
}

// IsCreateConversionResult marks Conversion as a member of the union.
func (Conversion) IsCreateConversionResult() {}
