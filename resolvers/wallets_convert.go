package resolvers

import (
	"strings"

	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/upstream/banking"
)

// Mapping from banking wallet types to graph models. Amounts stay integer
// minor units from the wire to the graph.

func toWallet(w *banking.Wallet, corporationID string) *model.Wallet {
	if w == nil {
		return nil
	}
	out := &model.Wallet{
		ID:            w.ID,
		Name:          w.Name,
		Currency:      w.Currency,
		Balance:       &model.Money{Amount: w.Amount, Currency: w.Currency},
		Type:          model.WalletTypeReal,
		Purpose:       w.Purpose,
		CreatedAt:     timePtr(w.CreatedAt),
		CorporationID: corporationID,
	}
	if strings.EqualFold(w.Type, banking.WalletTypePending) {
		out.Type = model.WalletTypePending
	}
	if a := model.WalletAdapter(strings.ToUpper(w.Adapter)); a.IsValid() {
		out.Adapter = &a
	}
	if w.Pending != nil && w.Pending.ID != "" {
		out.PendingID = w.Pending.ID
		cur := w.Pending.Currency
		if cur == "" {
			cur = w.Currency
		}
		out.PendingBalance = &model.Money{Amount: w.Pending.Amount, Currency: cur}
	}
	return out
}

// pendingOf is the pending wallet of real as the listing shows it: the spec
// does not show the pending object's shape, so what it lacks is taken from
// its real wallet.
func pendingOf(real *banking.Wallet, corporationID string) *model.Wallet {
	if real == nil || real.Pending == nil || real.Pending.ID == "" {
		return nil
	}
	cur := real.Pending.Currency
	if cur == "" {
		cur = real.Currency
	}
	out := &model.Wallet{
		ID:            real.Pending.ID,
		Name:          real.Name + " (pending)",
		Currency:      cur,
		Balance:       &model.Money{Amount: real.Pending.Amount, Currency: cur},
		Type:          model.WalletTypePending,
		CorporationID: corporationID,
	}
	if a := model.WalletAdapter(strings.ToUpper(real.Adapter)); a.IsValid() {
		out.Adapter = &a
	}
	return out
}

func toWallets(list []*banking.Wallet, corporationID string) []*model.Wallet {
	out := make([]*model.Wallet, 0, len(list))
	for _, w := range list {
		out = append(out, toWallet(w, corporationID))
	}
	return out
}
