package bankpoll

import (
	"context"

	"github.com/fingraph/fingraph/upstream/banking"
)

// Upstream is what the poller asks of the banking upstream: the listings
// that change and the state of its circuit breaker. Each is a small
// interface holding the methods the poller calls, which banking.Client's
// service satisfies as it is (UpstreamOf); tests give fakes. Every call
// carries the credentials of a subscriber's session in its context.
type Upstream struct {
	Wallets CorporationLister[banking.Wallet]
	// Transactions is nil when the upstream shows no transaction listing
	// (the spec shows none: the strict sandbox); wallet transactions are
	// then not polled.
	Transactions TransactionLister
	Cards        CardLister
	KYC          CorporationLister[banking.KYCDocument]
	Limits       CorporationLister[banking.Limit]
	Invoices     CorporationLister[banking.Invoice]
	Persons      PersonLister
	// Breaker is required: every poll asks it first.
	Breaker Breaker
}

// UpstreamOf is the poller's view of a banking client.
func UpstreamOf(c *banking.Client) Upstream {
	u := Upstream{Wallets: c.Wallets, Transactions: c.Transactions, Cards: c.Cards, KYC: c.KYC,
		Limits: c.Limits, Invoices: c.Invoices, Persons: c.Persons, Breaker: c}
	if !c.Offers(banking.WalletTransactionListing) {
		u.Transactions = nil
	}
	return u
}

// CorporationLister lists one kind of a corporation's records: its wallets,
// KYC documents, limits or invoices (banking.Client.Wallets, .KYC, .Limits,
// .Invoices).
type CorporationLister[T any] interface {
	List(ctx context.Context, corporationID string) ([]*T, error)
}

// TransactionLister lists a wallet's transactions, newest first
// (banking.Client.Transactions).
type TransactionLister interface {
	ListByWallet(ctx context.Context, corporationID, walletID string, opts *banking.ListOptions) (*banking.TransactionList, error)
}

// CardLister lists the cards the credentials see and a card's transactions
// (banking.Client.Cards).
type CardLister interface {
	List(ctx context.Context) ([]*banking.Card, error)
	Transactions(ctx context.Context, id string, opts *banking.ListOptions) (*banking.CardTransactionList, error)
}

// PersonLister lists the persons the credentials see
// (banking.Client.Persons).
type PersonLister interface {
	List(ctx context.Context, opts *banking.ListOptions) (*banking.PersonList, error)
}

// Breaker tells the state of the upstream's circuit breakers ("open" when
// any route group's is; banking.Client).
type Breaker interface {
	BreakerState() string
}

var (
	_ CorporationLister[banking.Wallet]      = (*banking.WalletsService)(nil)
	_ TransactionLister                      = (*banking.TransactionsService)(nil)
	_ CardLister                             = (*banking.CardsService)(nil)
	_ CorporationLister[banking.KYCDocument] = (*banking.KYCService)(nil)
	_ CorporationLister[banking.Limit]       = (*banking.LimitsService)(nil)
	_ CorporationLister[banking.Invoice]     = (*banking.InvoicesService)(nil)
	_ PersonLister                           = (*banking.PersonsService)(nil)
	_ Breaker                                = (*banking.Client)(nil)
)
