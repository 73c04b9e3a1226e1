package resolvers

import (
	"context"
	"errors"
	"net/http"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/upstream/banking"
)

// reasonNotOffered is extensions.reason of Wallet.transactions with an
// upstream that serves no wallet transaction listing.
const reasonNotOffered = "NOT_OFFERED"

// errWalletTransactionsNotOffered answers Wallet.transactions where the
// upstream lists no wallet transactions: the banking spec shows no such
// listing (the sandbox serves one as an addition), and an empty page would
// say the wallet never moved money.
func errWalletTransactionsNotOffered(cause error) *gqlerr.Error {
	return &gqlerr.Error{Code: gqlerr.UpstreamUnavailable, Cause: cause,
		Message:    "the banking upstream does not list a wallet's transactions (the spec shows no such listing; strict mode), so they cannot be shown",
		Extensions: map[string]any{"reason": reasonNotOffered}}
}

// walletTransactions pages a wallet's transactions, offset-paged as card
// transactions are (docs/relay-connections.md).
func (r *Resolver) walletTransactions(ctx context.Context, w *model.Wallet, first *int64, after *string, dir *model.SortDirection) (*model.WalletTransactionConnection, error) {
	pg, err := pageRequest(first, after, listingFingerprint("wallet-transactions", w.CorporationID, w.ID, "createdAt", orDefault(dir, "DESC")))
	if err != nil {
		return nil, err
	}
	if !r.Banking.Offers(banking.WalletTransactionListing) {
		return nil, errWalletTransactionsNotOffered(nil)
	}
	page, err := loaders.For(ctx).WalletTransactions.Get(ctx, loaders.WalletTransactionsKey{CorporationID: w.CorporationID, WalletID: w.ID, Options: *pg.options("createdAt", dir)})
	if err != nil {
		var be *banking.ErrorResponse
		if errors.As(err, &be) && (be.StatusCode == http.StatusNotFound || be.StatusCode == http.StatusMethodNotAllowed) {
			// The wallet was just read: a 404 here is the route's.
			return nil, errWalletTransactionsNotOffered(err)
		}
		return nil, err
	}
	staff := isStaff(ctx)
	cursors, info := pg.cursors(len(page.List), page.Meta)
	edges := make([]*model.WalletTransactionEdge, 0, len(page.List))
	for i, t := range page.List {
		if t == nil {
			continue
		}
		edges = append(edges, &model.WalletTransactionEdge{Cursor: cursors[i], Node: toWalletTransaction(t, w.CorporationID, w.ID, staff)})
	}
	return &model.WalletTransactionConnection{Edges: edges, PageInfo: info, TotalCount: int64(page.Meta.NumberOfRecords)}, nil
}
