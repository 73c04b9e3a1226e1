package resolvers

import (
	"context"

	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/relay"
)

// Reference fields (an ID that names another node) answer the global id of
// that node, so a client passes them back as they are; the models keep the
// raw ids, which is what the resolvers and loaders work with.

// globalRef is the global id of a node of kind k with the one-part raw id.
func globalRef(k relay.Kind, raw string) string {
	if raw == "" {
		return ""
	}
	return relay.ID(k, raw)
}

// globalRefPtr is globalRef of an optional reference.
func globalRefPtr(k relay.Kind, raw *string) *string {
	if raw == nil || *raw == "" {
		return nil
	}
	id := globalRef(k, *raw)
	return &id
}

// cardFundingWallet is Card.fundingWalletId: a wallet's global id names its
// corporation, found as Card.fundingWallet finds it (the viewer's own, or
// for staff the cardholder's, batched). When no corporation can be found
// the raw id is answered, which every wallet argument still accepts.
func cardFundingWallet(ctx context.Context, c *model.Card) (string, error) {
	corpID, err := cardCorporation(ctx, c)
	if err != nil {
		return "", err
	}
	if corpID == "" || c.FundingWalletID == "" {
		return c.FundingWalletID, nil
	}
	return relay.ID(relay.Wallet, corpID, c.FundingWalletID), nil
}
