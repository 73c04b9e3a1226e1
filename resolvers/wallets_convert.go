package resolvers

import (
	"strings"
	"time"

	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/banking"
)

// Mapping from banking wallet types to graph models. Amounts stay integer
// minor units from the wire to the graph.

func toWallet(w *banking.Wallet, corporationID string) *model.Wallet {
	if w == nil {
		return nil
	}
	// One allocation for the wallet and what it points to.
	b := new(struct {
		wallet  model.Wallet
		balance model.Money
		adapter model.WalletAdapter
		created time.Time
	})
	b.balance = model.Money{Amount: w.Amount, Currency: w.Currency}
	b.wallet = model.Wallet{
		ID:                w.ID,
		Name:              w.Name,
		Currency:          w.Currency,
		Balance:           &b.balance,
		Type:              model.WalletTypeReal,
		Purpose:           w.Purpose,
		CreatedAt:         timeIn(&b.created, w.CreatedAt),
		CorporationID:     corporationID,
		PartialRequisites: toRequisitesList(w.Requisites, corporationID),
	}
	out := &b.wallet
	if a, ok := enumOf(model.AllWalletAdapter, w.Adapter); ok {
		b.adapter = a
		out.Adapter = &b.adapter
	}
	if strings.EqualFold(w.Type, banking.WalletTypePending) {
		out.Type = model.WalletTypePending
	}
	out.PendingWallet = pendingOf(w, corporationID)
	addWalletDetails(out, w)
	return out
}

func toAdapter(s string) *model.WalletAdapter {
	if a, ok := enumOf(model.AllWalletAdapter, s); ok {
		return &a
	}
	return nil
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
	return &model.Wallet{
		ID:                real.Pending.ID,
		Name:              real.Name + " (pending)",
		Currency:          cur,
		Balance:           &model.Money{Amount: real.Pending.Amount, Currency: cur},
		Type:              model.WalletTypePending,
		Adapter:           toAdapter(real.Adapter),
		CorporationID:     corporationID,
		PartialRequisites: []*model.WalletRequisites{},
	}
}

func toWallets(list []*banking.Wallet, corporationID string) []*model.Wallet {
	out := make([]*model.Wallet, 0, len(list))
	for _, w := range list {
		out = append(out, toWallet(w, corporationID))
	}
	return out
}

// toRequisites maps a requisites record of a corporation: the upstream lists
// requisites per corporation, so the corporation is part of the global id.
func toRequisites(q *banking.Requisites, corporationID string) *model.WalletRequisites {
	return new(requisitesBlock).fill(q, corporationID)
}

// requisitesBlock is a requisites record with its creation time.
type requisitesBlock struct {
	requisites model.WalletRequisites
	created    time.Time
}

func (b *requisitesBlock) fill(q *banking.Requisites, corporationID string) *model.WalletRequisites {
	t := model.RequisitesTypeOther
	switch strings.ToLower(q.Type) {
	case "sepa":
		t = model.RequisitesTypeSepa
	case "cross-border":
		t = model.RequisitesTypeCrossBorder
	case "uk-local":
		t = model.RequisitesTypeUkLocal
	}
	b.requisites = model.WalletRequisites{GlobalID: relay.ID(relay.WalletRequisites, corporationID, q.ID), ID: q.ID, Number: q.Number, Code: q.Code, Type: t, CreatedAt: timeIn(&b.created, q.CreatedAt),
		UpdatedAt: timePtr(q.UpdatedAt)}
	return &b.requisites
}

// toRequisitesList converts a wallet's requisites with one allocation for
// all the records (and one global id each).
func toRequisitesList(list []*banking.Requisites, corporationID string) []*model.WalletRequisites {
	blocks := make([]requisitesBlock, len(list))
	out := make([]*model.WalletRequisites, 0, len(list))
	for i, q := range list {
		if q != nil {
			out = append(out, blocks[i].fill(q, corporationID))
		}
	}
	return out
}

func toInvoice(inv *banking.Invoice, corporationID string) *model.Invoice {
	t := model.InvoiceTypeOther
	switch inv.Type {
	case "opening-fee":
		t = model.InvoiceTypeOpeningFee
	case "monthly-service-fee":
		t = model.InvoiceTypeMonthlyServiceFee
	}
	out := &model.Invoice{
		GlobalID: relay.ID(relay.Invoice, corporationID, inv.ID),
		ID:       inv.ID, Type: t, IsPaid: inv.IsPaid,
		Amount:               &model.Money{Amount: inv.Amount, Currency: inv.Currency},
		UnpaidAmount:         &model.Money{Amount: inv.UnpaidAmount, Currency: inv.Currency},
		PaymentTransactionID: strPtr(inv.InvoicePaymentTransactionID),
		Repayments:           []*model.InvoiceRepayment{},
		CreatedAt:            timePtr(inv.CreatedAt),
		UpdatedAt:            timePtr(inv.UpdatedAt),
	}
	for _, rp := range inv.Repayments {
		out.Repayments = append(out.Repayments, &model.InvoiceRepayment{ID: rp.ID, Type: rp.Type,
			Amount: &model.Money{Amount: rp.Amount, Currency: inv.Currency}})
	}
	return out
}

// toLimit maps a limit of a corporation; its amounts are in the
// corporation's currency.
func toLimit(l *banking.Limit, corporationID, currency string) *model.Limit {
	money := func(v *int64) *model.Money {
		if v == nil {
			return nil
		}
		return &model.Money{Amount: *v, Currency: currency}
	}
	s := l.LimitSet
	return &model.Limit{
		GlobalID: relay.ID(relay.Limit, corporationID, l.ID),
		ID:       l.ID, PaymentMethod: l.PaymentMethod, TransactionType: l.TransactionType,
		DailySuccessfulVelocity:   s.DailySuccessfulVelocity,
		WeeklySuccessfulVelocity:  s.WeeklySuccessfulVelocity,
		MonthlySuccessfulVelocity: s.MonthlySuccessfulVelocity,
		AttemptVelocityPerHour:    s.AttemptVelocityPerHour,
		MinimumAmount:             money(s.MinimumAmount),
		MaximumAmount:             money(s.MaximumAmount),
		DailyLimitAmount:          money(s.DailyLimitAmount),
		WeeklyLimitAmount:         money(s.WeeklyLimitAmount),
		MonthlyLimitAmount:        money(s.MonthlyLimitAmount),
		UpdatedAt:                 timePtr(l.UpdatedAt),
		CreatedAt:                 timePtr(l.CreatedAt),
	}
}

var sixCurrencies = []string{"DKK", "EUR", "GBP", "NOK", "SEK", "USD"}

func toConversion(t *banking.Transaction, corporationID, sourceWalletID string) *model.Conversion {
	code, ok := t.StatusCode()
	status := model.TransactionStatusUnknown
	if ok {
		if s := model.TransactionStatus(banking.TransactionStatusName(code)); s.IsValid() {
			status = s
		}
	}
	amounts := map[string]int64{"DKK": t.AmountDKK, "EUR": t.AmountEUR, "GBP": t.AmountGBP, "NOK": t.AmountNOK, "SEK": t.AmountSEK, "USD": t.AmountUSD}
	charges := map[string]int64{"DKK": t.ChargeDKK, "EUR": t.ChargeEUR, "GBP": t.ChargeGBP, "NOK": t.ChargeNOK, "SEK": t.ChargeSEK, "USD": t.ChargeUSD}
	out := &model.Conversion{
		ID: t.ID, Status: status, StatusCode: int64(code),
		Source:         &model.Money{Amount: t.SourceAmount, Currency: t.SourceCurrency},
		Target:         &model.Money{Amount: t.TargetAmount, Currency: t.TargetCurrency},
		ExchangeRate:   t.ExchangeRate,
		SourceWalletID: sourceWalletID,
		TargetWalletID: strPtr(t.TargetCounterpartyID),
		CreatedAt:      timePtr(t.CreatedAt),
		CorporationID:  corporationID,
	}
	if t.SourceCounterpartyID != "" {
		out.SourceWalletID = t.SourceCounterpartyID
	}
	for _, cur := range sixCurrencies {
		out.AmountEquivalents = append(out.AmountEquivalents, &model.Money{Amount: amounts[cur], Currency: cur})
		out.ChargeEquivalents = append(out.ChargeEquivalents, &model.Money{Amount: charges[cur], Currency: cur})
	}
	// The charge in the source currency: the equivalent in that currency
	// when it is one of the six.
	if c, ok := charges[t.SourceCurrency]; ok {
		out.Charge = &model.Money{Amount: c, Currency: t.SourceCurrency}
	} else {
		out.Charge = &model.Money{Amount: 0, Currency: t.SourceCurrency}
	}
	return out
}
