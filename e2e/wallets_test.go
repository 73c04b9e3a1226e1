package e2e

import (
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
