package e2e

import (
	"fmt"
	"testing"
)

// Tests of wallets and money movement through the gateway and the banking
// sandbox over real HTTP.

// Demo wallets of the banking sandbox (docs/sandbox.md, "Wallets").
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
	if c.ID != demoCorpID {
		t.Fatalf("current corporation = %s", c.ID)
	}
	got := map[string]walletData{}
	for _, w := range c.Wallets {
		got[w.ID] = w
		if w.Type != "REAL" || w.Balance.Currency != w.Currency || w.Balance.Amount <= 0 {
			t.Errorf("wallet %+v: want a REAL wallet with a positive balance in its currency", w)
		}
		if w.Corporation == nil || w.Corporation.ID != demoCorpID {
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

func TestWalletsFollowCorporationScope(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	q := `query($id: ID!) { corporation(id: $id) { id wallets { id currency } } }`

	// Staff see every corporation's wallets.
	staff := g.as(g.signInStaff(t))
	var d struct {
		Corporation *struct {
			Wallets []walletData `json:"wallets"`
		} `json:"corporation"`
	}
	staff.query(t, q, map[string]any{"id": secondCorpID}).decode(t, &d)
	if d.Corporation == nil || len(d.Corporation.Wallets) != 1 || d.Corporation.Wallets[0].ID != secondEURWalletID {
		t.Fatalf("staff view of the second corporation's wallets: %+v", d.Corporation)
	}

	// A person of the demo corporation does not see the second one at all.
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	r := anna.query(t, q, map[string]any{"id": secondCorpID})
	if len(r.Errors) == 0 && string(r.Data) != `{"corporation":null}` {
		t.Fatalf("person reads another corporation's wallets: %s", r.Data)
	}

	// The API client sees its own corporation's wallets.
	api := g.as(g.signInAPI(t))
	d.Corporation = nil
	api.query(t, q, map[string]any{"id": demoCorpID}).decode(t, &d)
	if d.Corporation == nil || len(d.Corporation.Wallets) != 4 {
		t.Fatalf("API client view of its wallets: %+v", d.Corporation)
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
	// A wrong checksum is caught by the gateway, before the upstream.
	g.resetStats(t)
	if _, r := ask(demoEURWalletID, "DE89370400440532013001"); r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "iban" {
		t.Errorf("bad checksum: %+v", r.Errors)
	}
	if _, r := ask(demoEURWalletID, "not an iban"); r.code() != "BAD_USER_INPUT" {
		t.Errorf("garbage: %+v", r.Errors)
	}
	if n := bankingCalls(g.stats(t)); n != 0 {
		t.Errorf("bad IBANs cost %d upstream calls", n)
	}
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
	if len(c.Wallets) != 4 || c.Card.ID != demoCardWalletID || len(c.WalletRequisites) != 2 {
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
