package bankingsim

import (
	"time"
)

// Demo wallet ids, the same on every start. The card-funding wallet is the
// one with purpose CARD.
var (
	DemoCardWalletID   = seedID("b0000000", 1)
	DemoEURWalletID    = seedID("b0000000", 2)
	DemoUSDWalletID    = seedID("b0000000", 3)
	DemoGBPWalletID    = seedID("b0000000", 4)
	SecondEURWalletID  = seedID("b0000000", 11)
	DemoRequisiteID    = seedID("b1000000", 1)
	SecondRequisiteID  = seedID("b1000000", 11)
	DemoEURRequisiteID = seedID("b1000000", 2)
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
			wl.postLocked(seedBase.Add(time.Duration(m.day)*24*time.Hour+time.Duration(i+1)*time.Hour),
				seedID("b4000000", len(s.wallets)*100+i+1), m.typ, m.desc, m.amount)
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
}
