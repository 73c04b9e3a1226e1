package loaders

import (
	"context"
	"time"

	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
)

// The read cache reads the upstreams through the interfaces below, each
// holding exactly the reads it makes: the real clients' services fit them
// unchanged (app wires them in), and tests put small fakes in their place.

// PaymentsSource is the payments upstream as the read cache reads it.
type PaymentsSource struct {
	Customers      CustomerSource
	Orders         OrderSource
	PendingActions PendingActionSource
}

// CustomerSource reads customers: one by id, or the merchant's listing.
type CustomerSource interface {
	Get(ctx context.Context, id string) (*payments.Customer, error)
	List(ctx context.Context) ([]payments.Customer, error)
}

// OrderSource lists the orders created in a window of days.
type OrderSource interface {
	List(ctx context.Context, start, end time.Time) ([]payments.Order, error)
}

// PendingActionSource reads the pending action tied to an event.
type PendingActionSource interface {
	ByEvent(ctx context.Context, eventID string) (*payments.PendingAction, error)
}

// BankingSource is the banking upstream as the read cache reads it.
type BankingSource struct {
	Persons      PersonSource
	Corporations CorporationSource
	Cards        CardSource
	Transactions TransactionSource
	APIKeys      CorporationLister[banking.APIKey]
	KYC          CorporationLister[banking.KYCDocument]
	Wallets      CorporationLister[banking.Wallet]
	Requisites   CorporationLister[banking.Requisites]
	Invoices     CorporationLister[banking.Invoice]
	Limits       CorporationLister[banking.Limit]
}

// PersonSource reads persons: the signed-in one, a page, one by id.
type PersonSource interface {
	Me(ctx context.Context) (*banking.Person, error)
	List(ctx context.Context, opts *banking.ListOptions) (*banking.PersonList, error)
	Get(ctx context.Context, id string) (*banking.Person, error)
}

// CorporationSource reads corporations and their settings.
type CorporationSource interface {
	Current(ctx context.Context) (*banking.Corporation, error)
	List(ctx context.Context, opts *banking.ListOptions) (*banking.CorporationList, error)
	Settings(ctx context.Context, id string) (*banking.CorporationSettings, error)
}

// CardSource lists the cards the session sees and a card's transactions.
type CardSource interface {
	List(ctx context.Context) ([]*banking.Card, error)
	Transactions(ctx context.Context, id string, opts *banking.ListOptions) (*banking.CardTransactionList, error)
}

// TransactionSource lists a wallet's transactions.
type TransactionSource interface {
	ListByWallet(ctx context.Context, corporationID, walletID string, opts *banking.ListOptions) (*banking.TransactionList, error)
}

// CorporationLister lists one kind of record of a corporation (its wallets,
// requisites, invoices, limits, KYC documents, API keys).
type CorporationLister[T any] interface {
	List(ctx context.Context, corporationID string) ([]*T, error)
}
