package loaders

import (
	"context"

	"github.com/fingraph/fingraph/upstream/banking"
)

// CardLoaders holds the card and KYC reads of one operation. Card
// credentials never pass through here: a cache would keep them for the rest
// of the operation, and nothing that caches may ever hold a PAN.
type CardLoaders struct {
	// Cards reads GET /cards: every card edge (root, Corporation.cards,
	// Person.cards, Wallet.cards) filters this one listing.
	Cards Read[Whole, []*banking.Card]
	// Person finds persons by id (cardholders) on the first page of the
	// person listing (PersonsPage), and reads by id only a person the page
	// lacks when the listing has more pages (there is no read by ids).
	Person Read[string, *banking.Person]
	// CorporationKYC reads KYC documents by corporation id: one listing per
	// corporation.
	CorporationKYC Read[string, []*banking.KYCDocument]
	// CardTransactions reads a page of a card's transactions: one call per
	// distinct (card, page). The spec lists transactions per card only, so
	// one call per card is the least a screen of cards can pay; a card
	// reached twice (the same page on two paths, or node and a typed field)
	// pays it once.
	CardTransactions Read[CardTransactionsKey, *banking.CardTransactionList]
}

func (l *CardLoaders) init(b BankingSource, w *Workers, bl *Banking) {
	l.Cards.init(func(ctx context.Context, _ Whole) ([]*banking.Card, error) { return b.Cards.List(ctx) }, w)
	l.Person.init(func(ctx context.Context, id string) (*banking.Person, error) {
		page, err := bl.PersonsPage.Get(ctx, Whole{})
		if err != nil || page == nil {
			return nil, err
		}
		if p := page.byID[id]; p != nil || !page.Meta.HasMore {
			return p, nil
		}
		p, err := b.Persons.Get(ctx, id) // past the first page
		if banking.IsNotFound(err) {
			return nil, nil // a missing person is null, not an error
		}
		return p, err
	}, w)
	// The upstream lists KYC documents per corporation only.
	l.CorporationKYC.init(b.KYC.List, w)
	l.CardTransactions.init(cardTransactions(b.Cards.Transactions), w)
}

// PersonsOf answers persons by id for a gqlgen batch resolver
// (Card.cardholder gets all the cards of a list in one call), from the first
// page of the person listing; the persons the page lacks, when the listing
// has more pages, are read side by side. A person the upstream does not
// have is nil. errs[i] is ids[i]'s error.
func (ls *Loaders) PersonsOf(ctx context.Context, ids []string) (persons []*banking.Person, errs []error) {
	if page, err := ls.PersonsPage.Get(ctx, Whole{}); err == nil && page != nil && page.Meta.HasMore {
		for _, id := range ids {
			if page.byID[id] == nil {
				ls.Person.Start(ctx, id)
			}
		}
	}
	persons, errs = make([]*banking.Person, len(ids)), make([]error, len(ids))
	for i, id := range ids {
		persons[i], errs[i] = ls.Person.Get(ctx, id)
	}
	return persons, errs
}

// CardTransactionsKey names one page of one card's transactions: the card
// and the page's upstream arguments (size, offset, order). Two fields that
// ask for different pages of one card are two keys, since the upstream
// answers each page with its own call.
type CardTransactionsKey struct {
	CardID  string
	Options banking.ListOptions
}

// cardTransactions reads one key's page with the key's own copy of its
// arguments.
func cardTransactions(list func(context.Context, string, *banking.ListOptions) (*banking.CardTransactionList, error)) func(context.Context, CardTransactionsKey) (*banking.CardTransactionList, error) {
	return func(ctx context.Context, k CardTransactionsKey) (*banking.CardTransactionList, error) {
		opts := k.Options
		return list(ctx, k.CardID, &opts)
	}
}
