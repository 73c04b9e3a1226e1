package loaders

import (
	"context"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/fingraph/fingraph/upstream/banking"
)

// CardLoaders holds the card and KYC loaders of one request. Card
// credentials never pass through here: a loader's cache would keep them for
// the rest of the request, and nothing that caches may ever hold a PAN.
type CardLoaders struct {
	// Person loads persons by id (cardholders): one person listing for any
	// number of keys, and a read by id (fanOut at a time) only for a key
	// the listing lacks when the listing has more pages.
	Person Loader[string, *banking.Person]
	// CorporationKYC loads KYC documents by corporation id: one listing
	// per distinct corporation, fanOut at a time.
	CorporationKYC Loader[string, []*banking.KYCDocument]
	// CardTransactions loads a page of a card's transactions: one call per
	// distinct (card, page) in the operation, fanOut at a time. The spec
	// lists transactions per card only, so one call per card is the least a
	// screen of cards can pay; the loader makes a card reached twice (the
	// same page on two paths, or node and a typed field) pay it once, and
	// bounds how many calls a screen of many cards has in flight.
	CardTransactions Loader[CardTransactionsKey, *banking.CardTransactionList]

	cards  memo[[]*banking.Card]
	client *banking.Client
}

func (l *CardLoaders) init(b *banking.Client, wait time.Duration, personsFirst *personsPage) {
	l.Person.init(personBatch(personsFirst), wait)
	// The upstream lists KYC documents per corporation only.
	l.CorporationKYC.init(perCorporation(b.KYC.List), wait)
	l.CardTransactions.init(cardTransactionsBatch(b.Cards.Transactions), wait)
	l.client = b
}

// AllCards reads GET /cards once per request: every card edge (root,
// Corporation.cards, Person.cards, Wallet.cards) filters this one listing.
func (l *CardLoaders) AllCards(ctx context.Context) ([]*banking.Card, error) {
	return l.cards.do(func() ([]*banking.Card, error) { return l.client.Cards.List(ctx) })
}

// ReadPersonsPage reads the first page of the person listing, the one the
// Person loader (cardholders) and PersonsByCorporation share, unless this
// operation already has, and primes the Person loader with its persons. A
// resolver that knows the page will be wanted starts it early, in parallel
// with the reads that come before it (the cards whose cardholders it
// holds); the cardholders found on it are then answered from the cache,
// without waiting for a batch window that would only reread the memo.
func (ls *Loaders) ReadPersonsPage(ctx context.Context) error {
	list, err := ls.personsFirst.get(ctx)
	if err != nil {
		return err
	}
	for _, p := range list.List {
		ls.Person.Prime(ctx, p.ID, p)
	}
	return nil
}

// PersonsOf answers persons by id at once (see batchNow): Card.cardholder,
// a batch resolver, asks for the cardholders of all the cards of a list in
// one call, from the operation's first page of the person listing, which
// the dashboard has already started reading. A person the upstream does not
// have is nil. errs[i] is ids[i]'s error.
func (ls *Loaders) PersonsOf(ctx context.Context, ids []string) (persons []*banking.Person, errs []error) {
	return batchNow(ctx, ls.workers, &ls.Person, ids)
}

// personBatch serves persons from the operation's first page of the person
// listing (memoised: a batch window split in two on a loaded machine, or
// Corporation.persons in the same operation, reuses it instead of listing
// again).
func personBatch(first *personsPage) dataloader.BatchFunc[string, *banking.Person] {
	return func(ctx context.Context, ids []string) []*dataloader.Result[*banking.Person] {
		out := make([]*dataloader.Result[*banking.Person], len(ids))
		byID, list, err := first.byID(ctx)
		each(len(ids), func(i int) {
			p := byID[ids[i]]
			if p == nil && err == nil && list != nil && list.Meta.HasMore {
				// Past the first page: read this one person.
				p, gerr := first.beyond.read(ctx, ids[i])
				out[i] = &dataloader.Result[*banking.Person]{Data: p, Error: gerr}
				return
			}
			out[i] = &dataloader.Result[*banking.Person]{Data: p, Error: err}
		})
		return out
	}
}

// CardTransactionsKey names one page of one card's transactions: the card
// and the page's upstream arguments (size, offset, order). Two fields that
// ask for different pages of one card are two keys, since the upstream
// answers each page with its own call.
type CardTransactionsKey struct {
	CardID  string
	Options banking.ListOptions
}

// cardTransactionsBatch reads each distinct page with its own call (the
// upstream has no read across cards), fanOut at a time; a card whose read
// fails fails alone.
func cardTransactionsBatch(list func(context.Context, string, *banking.ListOptions) (*banking.CardTransactionList, error)) dataloader.BatchFunc[CardTransactionsKey, *banking.CardTransactionList] {
	return perKey(func(ctx context.Context, k CardTransactionsKey) (*banking.CardTransactionList, error) {
		opts := k.Options
		return list(ctx, k.CardID, &opts)
	})
}
