package bankingsim

import (
	"sort"
	"time"
)

// Demo wallet ids, the same on every start. The card-funding wallet is the
// one with purpose CARD.
var (
	DemoCardWalletID     = seedID("b0000000", 1)
	DemoEURWalletID      = seedID("b0000000", 2)
	DemoUSDWalletID      = seedID("b0000000", 3)
	DemoGBPWalletID      = seedID("b0000000", 4)
	SecondEURWalletID    = seedID("b0000000", 11)
	DemoRequisiteID      = seedID("b1000000", 1)
	SecondRequisiteID    = seedID("b1000000", 11)
	DemoEURRequisiteID   = seedID("b1000000", 2)
	DemoPaidInvoiceID    = seedID("b2000000", 1)
	SecondInvoiceID      = seedID("b2000000", 11)
	DemoTransferLimitID  = seedID("b3000000", 1)
	DemoConvertLimitID   = seedID("b3000000", 2)
	SecondConvertLimitID = seedID("b3000000", 11)
)

// seedMovement is one movement of the demo history.
type seedMovement struct {
	day    int // days after seedBase
	typ    string
	desc   string
	amount int64
}

// seedWalletsLocked loads the demo wallets with a history of movements; each
// balance is the sum of its history, so statements add up.
func (s *Sim) seedWalletsLocked() {
	staffActor := &actor{ID: StaffID, Type: "staff", FullName: "Sandra Staff"}
	card := PurposeCard
	mk := func(id, corp, name, currency, adapter string, purpose *string, created time.Time, hist []seedMovement) *wallet {
		wl := &wallet{ID: id, CorpID: corp, Name: name, Currency: currency, Adapter: adapter, Purpose: purpose,
			Type: WalletReal, CreatedBy: staffActor, CreatedByLoginID: seedID("10000000", 900), CreatedAt: created,
			UpdatedAt: created, setUp: true}
		for i, m := range hist {
			at := seedBase.Add(time.Duration(m.day)*24*time.Hour + time.Duration(i+1)*time.Hour)
			txID := seedID("b4000000", len(s.wallets)*100+i+1)
			wl.postLocked(at, txID, m.typ, m.desc, m.amount)
			s.seedTransferLocked(txID, at, wl, m)
		}
		s.wallets[id] = wl
		return wl
	}
	day := 24 * time.Hour
	mk(DemoCardWalletID, DemoCorporationID, "Cards", "EUR", AdapterA, &card, seedBase.Add(3*time.Hour), []seedMovement{
		{5, "transfer-incoming", "Funding from Demo Trading SIA", 300000},
		{20, "transfer-outgoing", "Card settlements January", -42500},
		{48, "transfer-outgoing", "Card settlements February", -7500},
	})
	mk(DemoEURWalletID, DemoCorporationID, "Operating EUR", "EUR", AdapterC, nil, seedBase.Add(4*time.Hour), []seedMovement{
		{3, "transfer-incoming", "Invoice 2024-001 paid by Nordic Retail AB", 1000000},
		{3, "invoice-payment", "Opening fee invoice repaid", -50000},
		{9, "transfer-incoming", "Invoice 2024-002 paid by Baltic Foods UAB", 450000},
		{15, "transfer-outgoing", "Office rent January", -120000},
		{30, "transfer-outgoing", "Salaries January", -300000},
		{38, "transfer-incoming", "Invoice 2024-003 paid by Nordic Retail AB", 250000},
		{45, "transfer-outgoing", "Office rent February", -120000},
		{60, "transfer-incoming", "Invoice 2024-004 paid by Alpine Goods GmbH", 290000},
	})
	mk(DemoUSDWalletID, DemoCorporationID, "USD", "USD", AdapterC, nil, seedBase.Add(5*time.Hour), []seedMovement{
		{10, "transfer-incoming", "Payment by Acme Corp (US)", 650000},
		{40, "transfer-outgoing", "Cloud services", -150000},
	})
	mk(DemoGBPWalletID, DemoCorporationID, "GBP", "GBP", AdapterC, nil, seedBase.Add(6*time.Hour), []seedMovement{
		{12, "transfer-incoming", "Payment by Thames Trading Ltd", 300000},
	})
	mk(SecondEURWalletID, SecondCorporationID, "Main", "EUR", AdapterA, nil, seedBase.Add(day), []seedMovement{
		{2, "transfer-incoming", "Share capital", 5000},
	})

	// One approved conversion in the history, so statements show one and
	// the introducer fee report has a charge to share.
	s.seedConversionLocked(seedID("b4000000", 9100), seedBase.Add(50*day+10*time.Hour),
		s.wallets[DemoUSDWalletID], s.wallets[DemoEURWalletID], 100000)

	// The seed books out of date order; put each ledger in order and
	// recompute the running balances.
	for _, wl := range s.wallets {
		sort.SliceStable(wl.ledger, func(i, j int) bool { return wl.ledger[i].At.Before(wl.ledger[j].At) })
		var bal int64
		for i := range wl.ledger {
			bal += wl.ledger[i].Amount
			wl.ledger[i].Balance = bal
		}
	}

	req := func(id, corp, walletID, iban, bic string, created time.Time) {
		s.requisites[id] = &requisite{ID: id, CorpID: corp, Number: iban, Code: bic, Type: "sepa", Adapter: AdapterA,
			WalletID: walletID, CreatedAt: created, UpdatedAt: created}
		if wl := s.wallets[walletID]; wl != nil {
			wl.RequisiteIDs = append(wl.RequisiteIDs, id)
		}
	}
	req(DemoRequisiteID, DemoCorporationID, DemoCardWalletID, makeIBAN("LV", "SAND0000000000001"), "SANDLV22", seedBase.Add(3*time.Hour))
	req(DemoEURRequisiteID, DemoCorporationID, DemoEURWalletID, makeIBAN("LT", "7000000000000002"), "SANDLT2X", seedBase.Add(4*time.Hour))
	req(SecondRequisiteID, SecondCorporationID, SecondEURWalletID, makeIBAN("EE", "7700000000000011"), "SANDEE2X", seedBase.Add(day))

	s.seedInvoicesAndLimitsLocked()
}

// seedTransferLocked keeps a seeded transfer as the approved transaction
// the wallet's listing shows: incoming from, or outgoing to, an account
// outside the bank (a Payment Account, not a wallet), made by the demo
// corporation's director for outgoing ones. Other movements (the invoice
// payment) have records of their own.
func (s *Sim) seedTransferLocked(id string, at time.Time, wl *wallet, m seedMovement) {
	t := &transaction{ID: id, CorpID: wl.CorpID, Type: m.typ, Code: StatusApproved, CreatedAt: at, UpdatedAt: at}
	switch m.typ {
	case "transfer-incoming":
		t.TargetWalletID, t.TargetCurrency, t.TargetAmount = wl.ID, wl.Currency, m.amount
	case "transfer-outgoing":
		t.SourceWalletID, t.SourceCurrency, t.SourceAmount = wl.ID, wl.Currency, -m.amount
		t.TargetCurrency, t.TargetAmount = wl.Currency, -m.amount
		if wl.CorpID == DemoCorporationID {
			t.CreatedBy = &actor{ID: AnnaID, Type: "person", FullName: "Anna Berzina"}
		}
	default:
		return
	}
	t.AmountEUR = convertMinor(t.TargetAmount, t.TargetCurrency, "EUR")
	s.transactions[id] = t
}

func i64(v int64) *int64 { return &v }

// seedInvoicesAndLimitsLocked loads a paid opening fee of the demo
// corporation, an unpaid monthly fee of the second one (it blocks its
// conversions with 20006 until money arrives), and limits.
func (s *Sim) seedInvoicesAndLimitsLocked() {
	paidAt := seedBase.Add(3 * 24 * time.Hour)
	payTx := seedID("b4000000", 9001)
	s.transactions[payTx] = &transaction{ID: payTx, CorpID: DemoCorporationID, Type: "invoice-payment",
		SourceWalletID: DemoEURWalletID, SourceCurrency: "EUR", TargetCurrency: "EUR", TargetAmount: 50000,
		AmountEUR: 50000, Code: StatusApproved, CreatedAt: seedBase, UpdatedAt: paidAt}
	s.invoices[DemoPaidInvoiceID] = &invoice{ID: DemoPaidInvoiceID, CorpID: DemoCorporationID, Type: "opening-fee",
		Currency: "EUR", Amount: 50000, PaymentTxID: payTx, CreatedAt: seedBase, UpdatedAt: paidAt,
		Repayments: []repayment{{ID: seedID("b5000000", 1), Amount: 50000, Type: "balance"}}}
	unpaidTx := seedID("b4000000", 9011)
	s.transactions[unpaidTx] = &transaction{ID: unpaidTx, CorpID: SecondCorporationID, Type: "invoice-payment",
		SourceCurrency: "EUR", TargetCurrency: "EUR", TargetAmount: 9900, AmountEUR: 9900, Code: StatusInitialized,
		CreatedAt: seedBase.Add(30 * 24 * time.Hour), UpdatedAt: seedBase.Add(30 * 24 * time.Hour)}
	s.invoices[SecondInvoiceID] = &invoice{ID: SecondInvoiceID, CorpID: SecondCorporationID, Type: "monthly-service-fee",
		Currency: "EUR", Amount: 9900, Unpaid: 9900, PaymentTxID: unpaidTx,
		CreatedAt: seedBase.Add(30 * 24 * time.Hour), UpdatedAt: seedBase.Add(30 * 24 * time.Hour)}

	mk := func(id, corp, method, typ string, set map[string]*int64) {
		s.limits[id] = &limit{ID: id, CorpID: corp, PaymentMethod: method, TransactionType: typ, Set: set,
			SetID: "set-" + id, CreatedAt: seedBase, UpdatedAt: seedBase, SetCreatedAt: seedBase, SetUpdatedAt: seedBase}
	}
	convert := func() map[string]*int64 {
		return map[string]*int64{"dailySuccessfulVelocity": i64(50), "weeklySuccessfulVelocity": i64(200),
			"monthlySuccessfulVelocity": i64(500), "attemptVelocityPerHour": i64(60), "minimumAmount": i64(100),
			"maximumAmount": i64(5_000_000), "dailyLimitAmount": i64(10_000_000), "weeklyLimitAmount": i64(30_000_000),
			"monthlyLimitAmount": i64(100_000_000)}
	}
	mk(DemoTransferLimitID, DemoCorporationID, "bank-transfer", "transfer-outgoing", map[string]*int64{
		"dailySuccessfulVelocity": i64(20), "weeklySuccessfulVelocity": i64(100), "monthlySuccessfulVelocity": i64(300),
		"attemptVelocityPerHour": i64(30), "minimumAmount": i64(100), "maximumAmount": i64(2_000_000),
		"dailyLimitAmount": i64(5_000_000), "weeklyLimitAmount": i64(15_000_000), "monthlyLimitAmount": i64(50_000_000)})
	mk(DemoConvertLimitID, DemoCorporationID, ConvertPaymentMethod, "convert", convert())
	mk(SecondConvertLimitID, SecondCorporationID, ConvertPaymentMethod, "convert", convert())
}

// seedConversionLocked books an approved conversion of amount (in the
// target's currency) the way a live one settles.
func (s *Sim) seedConversionLocked(id string, at time.Time, src, dst *wallet, amount int64) {
	t := &transaction{ID: id, CorpID: src.CorpID, Type: "convert", SourceWalletID: src.ID, TargetWalletID: dst.ID,
		SourceCurrency: src.Currency, TargetCurrency: dst.Currency, TargetAmount: amount,
		SourceAmount: convertMinorUp(amount, dst.Currency, src.Currency), AmountEUR: convertMinor(amount, dst.Currency, "EUR"),
		Code: StatusApproved, CreatedAt: at, UpdatedAt: at, PaymentMethod: ConvertPaymentMethod, TransactionTypeLm: "convert",
		CreatedBy: &actor{ID: AnnaID, Type: "person", FullName: "Anna Berzina"}}
	t.Charge = (t.SourceAmount*ChargePermille + 999) / 1000
	s.transactions[id] = t
	src.postLocked(at, id, "convert", "Conversion to "+dst.Currency, -t.reserved())
	dst.postLocked(at, id, "convert", "Conversion from "+src.Currency, amount)
	s.pendingWalletLocked(src).CreatedAt = at
	s.pendingWalletLocked(dst).CreatedAt = at
}
