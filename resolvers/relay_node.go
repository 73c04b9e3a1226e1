package resolvers

import (
	"context"
	"time"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
)

// MaxNodes bounds nodes(ids:): more ids is BAD_USER_INPUT before any
// upstream call.
const MaxNodes = 100

// orderWindowDays is how far back order(id) and node look for an order:
// the upstream lists orders by creation date only (the same window
// OrderChangePayload.order reads).
const orderWindowDays = 90

// nodeRoles is the role each node type's typed fields require: node and
// nodes check the same one, and a caller without it gets NOT_FOUND, so that
// the answer does not tell which types exist.
var nodeRoles = map[relay.Kind]model.Role{
	relay.Customer: model.RoleCustomerOrOperator, relay.Order: model.RolePaymentsOperator,
	relay.Event: model.RoleBanking, relay.Person: model.RoleBanking,
	relay.Corporation: model.RoleBanking, relay.Card: model.RoleBanking,
	relay.Wallet: model.RoleBanking, relay.WalletRequisites: model.RoleBanking,
	relay.KycDocument: model.RoleBanking, relay.Invoice: model.RoleBanking,
	relay.Limit: model.RoleBanking, relay.CardTransaction: model.RoleBanking,
}

// notFoundNode is what a node the caller cannot see gives, whether it does
// not exist, belongs to another tenant or needs another role.
func notFoundNode() error { return gqlerr.NotFoundf("no object has this id") }

// node reads one object by its global id, with the caller's credentials
// and scope: the loaders and checks of the object's typed fields.
func (r *Resolver) node(ctx context.Context, id string) (model.Node, error) {
	ref, err := relay.Decode(id)
	if err != nil {
		return nil, err
	}
	if session.From(ctx) == nil {
		return nil, gqlerr.Unauthenticatedf("sign in first")
	}
	if r.Policy != nil && r.Policy.Allows(ctx, nodeRoles[ref.Kind]) != nil {
		return nil, notFoundNode()
	}
	if !inScope(ctx, ref.Corporation()) {
		return nil, notFoundNode() // another corporation's, read by nobody
	}
	n, err := r.loadNode(ctx, ref)
	if hidesExistence(err) {
		return nil, notFoundNode()
	}
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, notFoundNode()
	}
	return n, nil
}

// loadNode reads a decoded id; nil when the caller's scope holds no such
// object. Each kind is read the way its typed fields read it, so a node in
// nodes(ids:) shares their batches.
func (r *Resolver) loadNode(ctx context.Context, ref relay.Ref) (model.Node, error) {
	id := ref.Upstream()
	ls := loaders.For(ctx)
	switch ref.Kind {
	case relay.Customer:
		c, err := r.customerNode(ctx, id)
		if c == nil || err != nil {
			return nil, err
		}
		return c, nil
	case relay.Order:
		o, err := r.orderByID(ctx, id)
		if o == nil || err != nil {
			return nil, err
		}
		return o, nil
	case relay.Event:
		e, err := (&queryResolver{r}).Event(ctx, id)
		if e == nil || err != nil {
			return nil, err
		}
		return e, nil
	case relay.Person:
		p, err := ls.Person.Get(ctx, id)
		if p == nil || err != nil {
			return nil, err
		}
		return toPerson(p), nil
	case relay.Corporation:
		c, err := ls.Corporation.Get(ctx, id)
		if c == nil || err != nil {
			return nil, err
		}
		return toCorporation(c), nil
	case relay.Card:
		c, err := cardNode(ctx, id)
		if c == nil || err != nil {
			return nil, err
		}
		return c, nil
	case relay.CardTransaction:
		return r.cardTransactionNode(ctx, ref.Parent(), id)
	}
	// The rest live under a corporation the caller must see.
	corp, err := ls.Corporation.Get(ctx, ref.Parent())
	if corp == nil || err != nil {
		return nil, err
	}
	corpID := corp.ID
	switch ref.Kind {
	case relay.Wallet:
		real, owner, err := ls.CorporationWallet(ctx, corpID, id)
		switch {
		case err != nil:
			return nil, err
		case real != nil:
			return toWallet(real, corpID), nil
		case owner != nil:
			return pendingOf(owner, corpID), nil
		}
	case relay.WalletRequisites:
		list, err := ls.CorporationRequisites.Get(ctx, corpID)
		if err != nil {
			return nil, err
		}
		for _, q := range list {
			if q != nil && q.ID == id {
				return toRequisites(q, corpID), nil
			}
		}
	case relay.KycDocument:
		list, err := ls.CorporationKYC.Get(ctx, corpID)
		if err != nil {
			return nil, err
		}
		for _, d := range list {
			if d != nil && d.ID == id {
				return toKYCDocument(d, corpID), nil
			}
		}
	case relay.Invoice:
		list, err := ls.CorporationInvoices.Get(ctx, corpID)
		if err != nil {
			return nil, err
		}
		for _, inv := range list {
			if inv != nil && inv.ID == id {
				return toInvoice(inv, corpID), nil
			}
		}
	case relay.Limit:
		list, err := ls.CorporationLimits.Get(ctx, corpID)
		if err != nil {
			return nil, err
		}
		for _, l := range list {
			if l != nil && l.ID == id {
				return toLimit(l, corpID, corporationCurrency(toCorporation(corp))), nil
			}
		}
	}
	return nil, nil
}

// customerNode is a customer as customer(id) shows it to operators; a
// customer session sees only its own customer (as currentCustomer), and
// any other id is not found.
func (r *Resolver) customerNode(ctx context.Context, id string) (*model.Customer, error) {
	if s := session.From(ctx); s != nil && s.Kind == session.Customer {
		if id != s.PrincipalID {
			return nil, nil
		}
		return (&queryResolver{r}).CurrentCustomer(ctx)
	}
	c, err := loaders.For(ctx).Customer.Get(ctx, id)
	if err != nil || c == nil {
		return nil, err
	}
	return toCustomer(c), nil
}

// orderByID finds an order among those created in the last
// orderWindowDays, from the request's one listing of that window.
func (r *Resolver) orderByID(ctx context.Context, id string) (*model.Order, error) {
	end := r.now().UTC()
	list, err := loaders.For(ctx).Orders.Get(ctx, loaders.WindowOf(end.Add(-orderWindowDays*24*time.Hour), end))
	if err != nil {
		return nil, err
	}
	for i := range list.All {
		if list.All[i].ID == id {
			return toOrder(&list.All[i]), nil
		}
	}
	return nil, nil
}

// cardNode finds a card in the request's one card listing, which holds
// exactly the cards the viewer may see (the scope of cards and card(id)).
func cardNode(ctx context.Context, id string) (*model.Card, error) {
	all, err := loaders.For(ctx).Cards.Get(ctx, loaders.Whole{})
	if err != nil {
		return nil, err
	}
	cards := toCards(ctx, all, func(c *banking.Card) bool { return c.ID == id })
	if len(cards) == 0 {
		return nil, nil
	}
	return cards[0], nil
}

// cardTxPages bounds how many pages of a card's transactions a look-up
// by id reads.
const cardTxPages = 10

// cardTransactionNode finds a transaction of a card the viewer sees: the
// upstream lists transactions per card only, newest first.
func (r *Resolver) cardTransactionNode(ctx context.Context, cardID, id string) (model.Node, error) {
	card, err := cardNode(ctx, cardID)
	if card == nil || err != nil {
		return nil, err
	}
	// Pages go through the loader: nodes of several transactions of one
	// card read each page once.
	opts := banking.ListOptions{Limit: 100, SortBy: "createdAt", SortType: banking.SortDesc}
	for page := 0; page < cardTxPages; page++ {
		list, err := loaders.For(ctx).CardTransactions.Get(ctx, loaders.CardTransactionsKey{CardID: card.ID, Options: opts})
		if err != nil {
			return nil, err
		}
		for _, t := range list.List {
			if t != nil && t.ID == id {
				return toCardTransaction(t, card.ID), nil
			}
		}
		if !list.Meta.HasMore || !r.Banking.Offers(banking.OffsetPaging) || len(list.List) == 0 {
			break
		}
		opts.Offset += len(list.List)
	}
	return nil, nil
}

// hidesExistence reports an upstream answer that means "not yours" or "not
// there" (403, 404): node answers both as NOT_FOUND, so that it never tells
// whether another tenant's object exists.
func hidesExistence(err error) bool {
	if err == nil {
		return false
	}
	if banking.IsForbidden(err) || banking.IsNotFound(err) {
		return true
	}
	return payments.IsForbidden(err) || payments.IsNotFound(err)
}
