package e2e

import (
	"fmt"
	"testing"
)

// Tests of wallets and money movement through the gateway and the banking
// sandbox over real HTTP.

// Demo wallets of the banking sandbox (docs/sandbox-wallets.md, "Demo wallets").
const (
	demoCardWalletID  = "b0000000-0000-4000-8000-000000000001"
	demoEURWalletID   = "b0000000-0000-4000-8000-000000000002"
	demoUSDWalletID   = "b0000000-0000-4000-8000-000000000003"
	demoGBPWalletID   = "b0000000-0000-4000-8000-000000000004"
	secondEURWalletID = "b0000000-0000-4000-8000-000000000011"
)

type walletData struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Currency string `json:"currency"`
	Balance  struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
	} `json:"balance"`
	Type        string  `json:"type"`
	Purpose     *string `json:"purpose"`
	Adapter     *string `json:"adapter"`
	Corporation *struct {
		ID string `json:"id"`
	} `json:"corporation"`
}

const walletFields = `id name currency balance { amount currency } type purpose adapter`

func TestDemoCorporationWallets(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))

	var d struct {
		CurrentCorporation struct {
			ID      string       `json:"id"`
			Wallets []walletData `json:"wallets"`
			Card    *walletData  `json:"card"`
			Missing *walletData  `json:"missing"`
		} `json:"currentCorporation"`
	}
	anna.query(t, `query($card: ID!) { currentCorporation { id
		wallets { `+walletFields+` corporation { id } }
		card: wallet(id: $card) { `+walletFields+` }
		missing: wallet(id: "`+secondEURWalletID+`") { id }
	} }`, map[string]any{"card": demoCardWalletID}).decode(t, &d)

	c := d.CurrentCorporation
	if rawID(c.ID) != demoCorpID {
		t.Fatalf("current corporation = %s", c.ID)
	}
	got := map[string]walletData{}
	for _, w := range c.Wallets {
		got[rawID(w.ID)] = w
		if w.Type != "REAL" || w.Balance.Currency != w.Currency || w.Balance.Amount <= 0 {
			t.Errorf("wallet %+v: want a REAL wallet with a positive balance in its currency", w)
		}
		if w.Corporation == nil || rawID(w.Corporation.ID) != demoCorpID {
			t.Errorf("wallet %s corporation = %+v", w.ID, w.Corporation)
		}
	}
	for id, cur := range map[string]string{demoCardWalletID: "EUR", demoEURWalletID: "EUR", demoUSDWalletID: "USD", demoGBPWalletID: "GBP"} {
		if got[id].Currency != cur {
			t.Errorf("wallet %s: currency %q, want %s (all: %+v)", id, got[id].Currency, cur, c.Wallets)
		}
	}
	if _, ok := got[secondEURWalletID]; ok || len(c.Wallets) != 4 {
		t.Errorf("wallets = %+v, want the demo corporation's four", c.Wallets)
	}
	if c.Card == nil || c.Card.Purpose == nil || *c.Card.Purpose != "CARD" || c.Card.Adapter == nil || *c.Card.Adapter != "ADAPTER_A" {
		t.Errorf("card wallet = %+v", c.Card)
	}
	// The card wallet's history: +3000.00 -425.00 -75.00.
	if c.Card != nil && c.Card.Balance.Amount != 250000 {
		t.Errorf("card wallet balance = %d, want 250000", c.Card.Balance.Amount)
	}
	if c.Missing != nil {
		t.Errorf("another corporation's wallet through this one: %+v", c.Missing)
	}
}

// ibanWithChecksum builds an IBAN with correct check digits from a country
// and BBAN (the test's own ISO 13616 arithmetic), for IBANs of a wrong
// length whose checksum is still right.
func ibanWithChecksum(country, bban string) string {
	digits := ""
	for _, r := range bban + country + "00" {
		if r >= 'A' && r <= 'Z' {
			digits += fmt.Sprint(int(r-'A') + 10)
		} else {
			digits += string(r)
		}
	}
	rem := 0
	for _, r := range digits {
		rem = (rem*10 + int(r-'0')) % 97
	}
	return fmt.Sprintf("%s%02d%s", country, 98-rem, bban)
}

func TestSEPAEnabledChecksIBANsForReal(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	q := `query($w: ID!, $iban: String!) { sepaEnabled(sourceWalletId: $w, iban: $iban) }`
	ask := func(wallet, iban string) (bool, gqlResponse) {
		r := anna.query(t, q, map[string]any{"w": wallet, "iban": iban})
		var d struct {
			SepaEnabled bool `json:"sepaEnabled"`
		}
		if len(r.Errors) == 0 {
			r.decode(t, &d)
		}
		return d.SepaEnabled, r
	}
	for _, iban := range []string{
		"DE89 3704 0044 0532 0130 00",       // Germany
		"FR14 2004 1010 0505 0001 3M02 606", // France
		"NL91ABNA0417164300",                // Netherlands
		"NO9386011117947",                   // Norway (EEA)
		"CH9300762011623852957",             // Switzerland
		"GB29NWBK60161331926819",            // United Kingdom
		"LV80BANK0000435195001",             // Latvia
	} {
		ok, r := ask(demoEURWalletID, iban)
		if len(r.Errors) > 0 || !ok {
			t.Errorf("%s from the EUR wallet: %v %+v", iban, ok, r.Errors)
		}
	}
	// Valid, but outside the SEPA area.
	if ok, r := ask(demoEURWalletID, "TR330006100519786457841326"); len(r.Errors) > 0 || ok {
		t.Errorf("Turkish IBAN: %v %+v", ok, r.Errors)
	}
	// SEPA is a EUR scheme: not from a USD wallet.
	if ok, r := ask(demoUSDWalletID, "DE89370400440532013000"); len(r.Errors) > 0 || ok {
		t.Errorf("from the USD wallet: %v %+v", ok, r.Errors)
	}
	// A wrong checksum or format is caught by the gateway, before the
	// upstream: resolvers' TestSepaEnabledChecksTheIBANFirst.
	// A German IBAN one digit short, with a checksum that fits: only the
	// upstream knows Germany's length.
	short := ibanWithChecksum("DE", "370400440532013")
	_, r := ask(demoEURWalletID, short)
	wantUpstreamCode(t, r, 10001, "INVALID_VALUE")
	if u := upstreamOf(t, r); u["field"] != "iban" {
		t.Errorf("wrong length: upstream %v", u)
	}
	// Another corporation's wallet is not found.
	if _, r := ask(secondEURWalletID, "DE89370400440532013000"); r.code() != "NOT_FOUND" {
		t.Errorf("another corporation's wallet: %+v", r.Errors)
	}
}

// TestCorporationScreenUpstreamCalls counts the upstream calls of a
// corporation screen with wallets, their requisites and pending wallets,
// one wallet by id, and the corporation's requisites.
func TestCorporationScreenUpstreamCalls(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	g.resetStats(t)
	var d struct {
		CurrentCorporation struct {
			Wallets []struct {
				ID         string `json:"id"`
				Requisites []struct {
					Number string `json:"number"`
					Type   string `json:"type"`
				} `json:"requisites"`
			} `json:"wallets"`
			Card struct {
				ID string `json:"id"`
			} `json:"card"`
			WalletRequisites []struct {
				ID     string `json:"id"`
				Number string `json:"number"`
			} `json:"walletRequisites"`
		} `json:"currentCorporation"`
	}
	anna.query(t, `query($card: ID!) { currentCorporation { id name
		wallets { id name balance { amount currency } requisites { id number code type } pending { id balance { amount } } corporation { id } }
		card: wallet(id: $card) { id balance { amount } }
		walletRequisites { id number code }
	} }`, map[string]any{"card": demoCardWalletID}).decode(t, &d)
	c := d.CurrentCorporation
	if len(c.Wallets) != 4 || rawID(c.Card.ID) != demoCardWalletID || len(c.WalletRequisites) != 2 {
		t.Fatalf("screen = %+v", c)
	}
	s := g.stats(t)
	// The minimum: the current corporation (1); the wallet listing (1),
	// which also answers wallet(id) and carries every wallet's requisites
	// and pending wallet; and the requisites listing (1), the only route
	// that shows requisites not attached to a wallet. Wallet.corporation
	// is the corporation the wallets were reached from: no call. The
	// upstream has no route that answers two of these at once.
	want := map[string]int{
		"GET /banking/v2/corporations/current":                            1,
		"GET /banking/v2/corporations/{id}/wallets":                       1,
		"GET /banking/v2/corporations/{corporation_id}/wallet-requisites": 1,
	}
	for route, n := range want {
		if s.Routes[route] != n {
			t.Errorf("%s: %d calls, want %d (all: %v)", route, s.Routes[route], n, s.Routes)
		}
	}
	if got := bankingCalls(s); got != 3 {
		t.Errorf("banking calls = %d, want 3: %v", got, s.Routes)
	}
}

const requisitesFields = `id number code type`

func TestStaffCreatesWalletsAndPersonsManageRequisites(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	staff := g.as(g.signInStaff(t))
	create := `mutation($input: CreateWalletInput!) { createWallet(input: $input) { wallets { ` + walletFields + ` requisites { ` + requisitesFields + ` } } } }`
	type created struct {
		CreateWallet struct {
			Wallets []struct {
				walletData
				Requisites []struct {
					ID     string `json:"id"`
					Number string `json:"number"`
					Code   string `json:"code"`
					Type   string `json:"type"`
				} `json:"requisites"`
			} `json:"wallets"`
		} `json:"createWallet"`
	}

	// Adapter A, CARD, automatic requisites: a EUR wallet with a fresh IBAN.
	var a created
	staff.query(t, create, map[string]any{"input": map[string]any{"corporationId": demoCorpID, "adapter": "ADAPTER_A",
		"purpose": "CARD", "name": "Travel cards"}}).decode(t, &a)
	w := a.CreateWallet.Wallets
	if len(w) != 1 || w[0].Currency != "EUR" || w[0].Purpose == nil || *w[0].Purpose != "CARD" || w[0].Balance.Amount != 0 ||
		len(w[0].Requisites) != 1 || w[0].Requisites[0].Type != "SEPA" {
		t.Fatalf("adapter A wallet = %+v", w)
	}
	// The IBAN the bank issued is a valid one: the look-up accepts it.
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	var s struct {
		SepaEnabled bool `json:"sepaEnabled"`
	}
	anna.query(t, `query($w: ID!, $i: String!) { sepaEnabled(sourceWalletId: $w, iban: $i) }`,
		map[string]any{"w": w[0].ID, "i": w[0].Requisites[0].Number}).decode(t, &s)
	if !s.SepaEnabled {
		t.Errorf("issued IBAN %s is not SEPA-reachable", w[0].Requisites[0].Number)
	}

	// Adapter C: one wallet per currency.
	var c created
	staff.query(t, create, map[string]any{"input": map[string]any{"corporationId": demoCorpID, "adapter": "ADAPTER_C",
		"currencies": []string{"SEK", "NOK"}}}).decode(t, &c)
	if len(c.CreateWallet.Wallets) != 2 || c.CreateWallet.Wallets[0].Currency != "SEK" || c.CreateWallet.Wallets[1].Currency != "NOK" {
		t.Fatalf("adapter C wallets = %+v", c.CreateWallet.Wallets)
	}

	// The adapter rules, checked before the upstream, and that only staff
	// create wallets: resolvers' TestCreateWalletInputRules and
	// TestOnlyStaffCreateWallets.

	// A manual adapter A wallet has no requisites until some are attached.
	manual := g.createWallet(t, staff.bearer, map[string]any{"corporationId": demoCorpID, "adapter": "ADAPTER_A", "requisitesMode": "MANUAL"})
	var att struct {
		AttachWalletRequisites []struct {
			ID     string `json:"id"`
			Number string `json:"number"`
			Code   string `json:"code"`
		} `json:"attachWalletRequisites"`
	}
	anna.query(t, `mutation($input: AttachWalletRequisitesInput!) { attachWalletRequisites(input: $input) { `+requisitesFields+` } }`,
		map[string]any{"input": map[string]any{"corporationId": demoCorpID, "walletId": manual, "mode": "MANUAL",
			"sepa": map[string]any{"iban": "FR14 2004 1010 0505 0001 3M02 606", "bic": "PSSTFRPPXXX"}}}).decode(t, &att)
	if len(att.AttachWalletRequisites) != 1 || att.AttachWalletRequisites[0].Number != "FR1420041010050500013M02606" {
		t.Fatalf("attached = %+v", att.AttachWalletRequisites)
	}
	// Unattached requisites, listed on the corporation, then deleted.
	var cr struct {
		CreateWalletRequisites []struct {
			ID string `json:"id"`
		} `json:"createWalletRequisites"`
	}
	anna.query(t, `mutation { createWalletRequisites(input: {corporationId: "`+demoCorpID+`", adapter: ADAPTER_A}) { id } }`, nil).decode(t, &cr)
	if len(cr.CreateWalletRequisites) != 1 {
		t.Fatalf("created requisites = %+v", cr)
	}
	listed := func() map[string]bool {
		var d struct {
			Corporation struct {
				WalletRequisites []struct {
					ID string `json:"id"`
				} `json:"walletRequisites"`
			} `json:"corporation"`
		}
		anna.query(t, `{ corporation(id: "`+demoCorpID+`") { walletRequisites { id } } }`, nil).decode(t, &d)
		out := map[string]bool{}
		for _, q := range d.Corporation.WalletRequisites {
			out[q.ID] = true
		}
		return out
	}
	id := cr.CreateWalletRequisites[0].ID
	if !listed()[id] || !listed()[att.AttachWalletRequisites[0].ID] {
		t.Fatalf("requisites missing from the corporation's list")
	}
	var del struct {
		DeleteWalletRequisites struct {
			ID string `json:"id"`
		} `json:"deleteWalletRequisites"`
	}
	anna.query(t, `mutation { deleteWalletRequisites(input: {corporationId: "`+demoCorpID+`", id: "`+id+`"}) { id } }`, nil).decode(t, &del)
	if del.DeleteWalletRequisites.ID != id || listed()[id] {
		t.Fatalf("delete: %+v", del)
	}
}

func TestMoneyEventsReachTheirCorporationOnly(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	api := g.as(g.signInAPI(t)) // the demo corporation's API client
	ws := api.dialWS(t, nil, nil)
	defer ws.close()
	ws.subscribeFromNow(api, "1", `subscription($after: String) { events(names: ["WalletCreated", "ConversionCreated", "LimitUpdated"], after: $after) `+liveFields+` }`, nil)

	staff := g.signInStaff(t)
	// The second corporation's wallet must not reach the demo corporation.
	g.createWallet(t, staff, map[string]any{"corporationId": secondCorpID, "adapter": "ADAPTER_C", "currencies": []string{"USD"}})
	mine := g.createWallet(t, staff, map[string]any{"corporationId": demoCorpID, "adapter": "ADAPTER_C", "currencies": []string{"DKK"}})
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	conv, _ := anna.convert(t, map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 1000, "currency": "EUR"})
	g.queryAs(t, staff, `mutation { updateLimit(input: {corporationId: "`+demoCorpID+`", id: "b3000000-0000-4000-8000-000000000002", limitSet: {maximumAmount: 900000}}) { id } }`, nil).decode(t, &struct{}{})

	e := ws.next("1", "events")
	if e.Event.Name != "WalletCreated" || e.Source != "gateway" || fmt.Sprint(e.Event.Payload["wallet_ids"]) != "["+rawID(mine)+"]" {
		t.Fatalf("first event = %+v, want the demo corporation's WalletCreated", e)
	}
	e = ws.next("1", "events")
	if e.Event.Name != "ConversionCreated" || e.Event.Payload["transaction_id"] != conv.ID || e.Event.Payload["corporation_id"] != demoCorpID {
		t.Fatalf("second event = %+v", e)
	}
	e = ws.next("1", "events")
	if e.Event.Name != "LimitUpdated" || e.Event.Payload["limit_id"] != "b3000000-0000-4000-8000-000000000002" {
		t.Fatalf("third event = %+v", e)
	}
}
