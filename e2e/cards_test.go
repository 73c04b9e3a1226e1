package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// Tests of cards through the gateway and the banking sandbox over real
// HTTP: the issue rules, simulations, credentials and their scope, and what
// a card listing costs upstream.

const cardFields = `id status type brand region currency displayName expiryMonth expiryYear
  availableBalance { amount currency } maskedPan { bin lastFour } fundingWalletId cardholderId`

const issueCardMutation = `mutation($input: IssueCardInput!) { issueCard(input: $input) { ` + cardFields + ` } }`

type cardData struct {
	ID               string `json:"id"`
	Status           string `json:"status"`
	ExpiryYear       int    `json:"expiryYear"`
	AvailableBalance struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
	} `json:"availableBalance"`
	MaskedPan struct {
		Bin      string `json:"bin"`
		LastFour string `json:"lastFour"`
	} `json:"maskedPan"`
	FundingWalletID string `json:"fundingWalletId"`
	CardholderID    string `json:"cardholderId"`
}

// issueInput is a valid issueCard input for Dace on the demo card wallet.
func issueInput() map[string]any {
	return map[string]any{
		"fundingWalletId": bankingsim.DemoCardWalletID,
		"cardholderId":    bankingsim.DaceID,
		"expiryMonth":     12,
		"expiryYear":      2031,
		"displayName":     "e2e card",
	}
}

func (g *testGateway) issueCard(t *testing.T, input map[string]any) cardData {
	t.Helper()
	var d struct {
		IssueCard cardData `json:"issueCard"`
	}
	g.query(t, issueCardMutation, map[string]any{"input": input}).decode(t, &d)
	if d.IssueCard.ID == "" || d.IssueCard.Status != "ACTIVE" {
		t.Fatalf("issued card: %+v", d.IssueCard)
	}
	return d.IssueCard
}

// errField is the field an error names: the gateway's own check
// (extensions.field) or the upstream's (extensions.upstream.field).
func errField(r gqlResponse) (code, field string) {
	if len(r.Errors) == 0 {
		return "", ""
	}
	e := r.Errors[0].Extensions
	code, _ = e["code"].(string)
	if f, ok := e["field"].(string); ok {
		return code, f
	}
	if u, ok := e["upstream"].(map[string]any); ok {
		f, _ := u["field"].(string)
		return code, f
	}
	return code, ""
}

func TestCardIssueRulesAreRefusedNamingTheirField(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	// The spec's static rules, which the gateway checks before any upstream
	// call, and the corporation a principal acts on are proven in
	// resolvers/card_mutations_test.go (TestIssueCardInputRules,
	// TestIssueCardActsOnOnesOwnCorporation). Here: the rules that depend
	// on upstream state are the upstream's, and its refusal names the field
	// of its issue table.
	cases := []struct {
		name, code, field string
		change            map[string]any
	}{
		{"wallet without CARD purpose", "UPSTREAM_REJECTED", "card.funding_source_id", map[string]any{"fundingWalletId": bankingsim.DemoEURWalletID}},
		{"wallet of another corporation", "UPSTREAM_REJECTED", "card.funding_source_id", map[string]any{"fundingWalletId": bankingsim.SecondEURWalletID}},
		{"unknown wallet", "UPSTREAM_REJECTED", "card.funding_source_id", map[string]any{"fundingWalletId": "b0000000-0000-4000-8000-000000000999"}},
		{"cardholder not visible", "BAD_USER_INPUT", "input.cardholderId", map[string]any{"cardholderId": bankingsim.BenID}},
		{"blocked cardholder", "UPSTREAM_REJECTED", "cardholder.external_id", map[string]any{"cardholderId": "e0000000-0000-4000-8000-000000000004"}},
		{"template", "UPSTREAM_REJECTED", "template_id", map[string]any{"templateId": "my-template"}},
		{"cardholder phone", "UPSTREAM_REJECTED", "cardholder.phone", map[string]any{"cardholder": map[string]any{"phone": "call me"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := issueInput()
			for k, v := range c.change {
				in[k] = v
			}
			g.resetStats(t)
			r := anna.query(t, issueCardMutation, map[string]any{"input": in})
			code, field := errField(r)
			if code != c.code || field != c.field {
				t.Fatalf("got %s %q, want %s %q: %+v", code, field, c.code, c.field, r.Errors)
			}
			st := g.stats(t)
			if st.Routes["POST /banking/v2/cards/issue"] > 0 && c.code == "BAD_USER_INPUT" {
				t.Errorf("a gateway-side refusal still called the upstream: %v", st.Routes)
			}
		})
	}
	// Staff see every person: a person of another corporation reaches the
	// upstream, which refuses it.
	staff := g.as(g.signInStaff(t))
	in := issueInput()
	in["corporationId"], in["cardholderId"] = bankingsim.DemoCorporationID, bankingsim.BenID
	r := staff.query(t, issueCardMutation, map[string]any{"input": in})
	if code, field := errField(r); code != "UPSTREAM_REJECTED" || field != "cardholder.external_id" {
		t.Fatalf("staff, cardholder of another corporation: %+v", r.Errors)
	}
	// Nothing of the above issued a card: the demo's two remain.
	var d struct {
		Cards []cardData `json:"cards"`
	}
	anna.query(t, `{ cards { id } }`, nil).decode(t, &d)
	if len(d.Cards) != 2 {
		t.Fatalf("refused issues left cards behind: %+v", d.Cards)
	}
	// And a valid one passes, for staff as for a person.
	in = issueInput()
	in["corporationId"] = bankingsim.DemoCorporationID
	if c := staff.issueCard(t, in); rawID(c.CardholderID) != bankingsim.DaceID || c.MaskedPan.Bin != bankingsim.CardTestBIN {
		t.Fatalf("staff's card: %+v", c)
	}
}

// TestCardListCostsAFixedNumberOfUpstreamCalls: cards with their
// cardholder, funding wallet and corporation cost the same upstream calls
// for the demo's two cards and for five.
func TestCardListCostsAFixedNumberOfUpstreamCalls(t *testing.T) {
	g := startGateway(t)
	for _, who := range []string{"person", "staff"} {
		t.Run(who, func(t *testing.T) {
			var gw *testGateway
			if who == "staff" {
				gw = g.as(g.signInStaff(t))
			} else {
				gw = g.as(g.signInPerson(t, "anna@demo.test"))
			}
			const q = `{ cards { id cardholder { id firstName } fundingWallet { id name balance { amount } } corporation { id name } } }`
			type result struct {
				Cards []struct {
					ID         string `json:"id"`
					Cardholder struct {
						ID string `json:"id"`
					} `json:"cardholder"`
					FundingWallet *struct {
						ID string `json:"id"`
					} `json:"fundingWallet"`
					Corporation *struct {
						ID string `json:"id"`
					} `json:"corporation"`
				} `json:"cards"`
			}
			measure := func() (int, int, map[string]int) {
				g.resetStats(t)
				var d result
				gw.query(t, q, nil).decode(t, &d)
				for _, c := range d.Cards {
					if c.Cardholder.ID == "" || c.FundingWallet == nil || rawID(c.FundingWallet.ID) != bankingsim.DemoCardWalletID ||
						c.Corporation == nil || rawID(c.Corporation.ID) != bankingsim.DemoCorporationID {
						t.Fatalf("card edges not resolved: %+v", c)
					}
				}
				st := g.stats(t)
				return len(d.Cards), bankingCalls(st), st.Routes
			}
			n0, calls0, routes0 := measure()
			in := issueInput()
			if who == "staff" {
				in["corporationId"] = bankingsim.DemoCorporationID
			}
			for range 3 {
				gw.issueCard(t, in)
			}
			n1, calls1, routes1 := measure()
			if n1 != n0+3 {
				t.Fatalf("cards: %d then %d", n0, n1)
			}
			if calls0 != calls1 {
				t.Fatalf("upstream calls grew with the cards: %d for %d cards (%v), %d for %d (%v)", calls0, n0, routes0, calls1, n1, routes1)
			}
			// One card listing, one person listing, one wallet listing of
			// the one corporation, one corporation listing.
			if calls1 != 4 || routes1["GET /banking/v2/cards"] != 1 || routes1["GET /banking/v2/persons"] != 1 ||
				routes1["GET /banking/v2/corporations/{id}/wallets"] != 1 || routes1["GET /banking/v2/corporations"] != 1 {
				t.Fatalf("want 4 calls, got %d: %v", calls1, routes1)
			}
			t.Logf("%s: %d cards with cardholder, wallet and corporation: %d upstream calls", who, n1, calls1)
		})
	}
}

func TestCardEdgesFromPersonWalletAndCorporation(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	var d struct {
		CurrentCorporation struct {
			Cards   []cardData `json:"cards"`
			Wallets []struct {
				ID    string     `json:"id"`
				Cards []cardData `json:"cards"`
			} `json:"wallets"`
			Persons []struct {
				ID    string     `json:"id"`
				Cards []cardData `json:"cards"`
			} `json:"persons"`
		} `json:"currentCorporation"`
		Card struct {
			ID           string `json:"id"`
			Transactions struct {
				Edges []struct {
					Node struct {
						Amount struct {
							Amount int64 `json:"amount"`
						} `json:"amount"`
						Status *string `json:"status"`
					} `json:"node"`
				} `json:"edges"`
				TotalCount int `json:"totalCount"`
				PageInfo   struct {
					HasNextPage bool `json:"hasNextPage"`
				} `json:"pageInfo"`
			} `json:"transactions"`
		} `json:"card"`
	}
	anna.query(t, `query($id: ID!) {
	  currentCorporation { cards { id } wallets { id cards { id } } persons { id cards { id } } }
	  card(id: $id) { id transactions(first: 2) { edges { node { amount { amount } status } } totalCount pageInfo { hasNextPage } } }
	}`, map[string]any{"id": bankingsim.DemoCardAnnaID}).decode(t, &d)
	c := d.CurrentCorporation
	if len(c.Cards) != 2 {
		t.Fatalf("corporation cards: %+v", c.Cards)
	}
	for _, w := range c.Wallets {
		want := 0
		if rawID(w.ID) == bankingsim.DemoCardWalletID {
			want = 2
		}
		if len(w.Cards) != want {
			t.Errorf("wallet %s has %d cards, want %d", w.ID, len(w.Cards), want)
		}
	}
	for _, p := range c.Persons {
		want := 0
		if rawID(p.ID) == annaID || rawID(p.ID) == daceID {
			want = 1
		}
		if len(p.Cards) != want {
			t.Errorf("person %s has %d cards, want %d", p.ID, len(p.Cards), want)
		}
	}
	tx := d.Card.Transactions
	if tx.TotalCount != 3 || !tx.PageInfo.HasNextPage || len(tx.Edges) != 2 || tx.Edges[0].Node.Amount.Amount == 0 {
		t.Fatalf("seeded transactions: %+v", tx)
	}
	// Another corporation sees none of these cards.
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	var b struct {
		Cards []cardData `json:"cards"`
		Card  *cardData  `json:"card"`
	}
	ben.query(t, `query($id: ID!) { cards { id } card(id: $id) { id } }`, map[string]any{"id": bankingsim.DemoCardAnnaID}).decode(t, &b)
	if len(b.Cards) != 0 || b.Card != nil {
		t.Fatalf("another corporation sees the demo cards: %+v", b)
	}
}

const simulateMutation = `mutation($input: SimulateCardTransactionInput!) { simulateCardTransaction(input: $input) {
  __typename
  ... on CardAuthorised { code name amount { amount currency } card { id availableBalance { amount } } }
  ... on CardDeclined { cardId code name }
} }`

type simResult struct {
	Typename string `json:"__typename"`
	Code     string `json:"code"`
	Name     string `json:"name"`
	CardID   string `json:"cardId"`
	Card     *struct {
		AvailableBalance struct {
			Amount int64 `json:"amount"`
		} `json:"availableBalance"`
	} `json:"card"`
}

func (g *testGateway) simulate(t *testing.T, cardID string, amount int64) simResult {
	t.Helper()
	var d struct {
		Sim simResult `json:"simulateCardTransaction"`
	}
	g.query(t, simulateMutation, map[string]any{"input": map[string]any{"cardId": cardID, "amount": amount}}).decode(t, &d)
	return d.Sim
}

func (g *testGateway) walletBalance(t *testing.T, id string) int64 {
	t.Helper()
	var d struct {
		CurrentCorporation struct {
			Wallet struct {
				Balance struct {
					Amount int64 `json:"amount"`
				} `json:"balance"`
			} `json:"wallet"`
		} `json:"currentCorporation"`
	}
	g.query(t, `query($id: ID!) { currentCorporation { wallet(id: $id) { balance { amount } } } }`, map[string]any{"id": id}).decode(t, &d)
	return d.CurrentCorporation.Wallet.Balance.Amount
}

func TestCardSimulationApprovedAndEachDecline(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	card := anna.issueCard(t, issueInput())

	before := anna.walletBalance(t, bankingsim.DemoCardWalletID)
	s := anna.simulate(t, card.ID, 2500)
	if s.Typename != "CardAuthorised" || s.Code != "00" || s.Name != "APPROVED" || s.Card == nil ||
		s.Card.AvailableBalance.Amount != bankingsim.DefaultCardLimit-2500 {
		t.Fatalf("approved simulation: %+v", s)
	}
	if after := anna.walletBalance(t, bankingsim.DemoCardWalletID); after != before-2500 {
		t.Fatalf("funding wallet: %d before, %d after an approved 2500", before, after)
	}
	var tx struct {
		Card struct {
			Transactions struct {
				Edges []struct {
					Node struct {
						Type   string `json:"type"`
						Amount struct {
							Amount   int64  `json:"amount"`
							Currency string `json:"currency"`
						} `json:"amount"`
					} `json:"node"`
				} `json:"edges"`
			} `json:"transactions"`
		} `json:"card"`
	}
	anna.query(t, `query($id: ID!) { card(id: $id) { transactions { edges { node { type amount { amount currency } } } } } }`,
		map[string]any{"id": card.ID}).decode(t, &tx)
	if edges := tx.Card.Transactions.Edges; len(edges) != 1 || edges[0].Node.Amount.Amount != 2500 || edges[0].Node.Amount.Currency != "EUR" {
		t.Fatalf("the approved simulation is not the card's transaction: %+v", edges)
	}

	declined := func(name, cardID string, amount int64, code, codeName string) {
		t.Helper()
		s := anna.simulate(t, cardID, amount)
		if s.Typename != "CardDeclined" || s.Code != code || s.Name != codeName || s.CardID != cardID {
			t.Errorf("%s: got %+v, want CardDeclined %s %s", name, s, code, codeName)
		}
	}
	// Limit: the card's monthly limit, within the wallet's funds.
	declined("over the limit", card.ID, bankingsim.DefaultCardLimit, "61", "EXCEEDS_WITHDRAWAL_AMOUNT_LIMIT")
	// Funds: a limit above the balance lets the balance decide.
	g.sandbox(t, http.MethodPost, "/_sandbox/cards/"+rawID(card.ID)+"/limit", map[string]any{"limit": 1e13}, nil)
	declined("over the balance", card.ID, 1e12, "51", "NOT_SUFFICENT_FUNDS")
	// Expiry: a card that expired in 2019.
	in := issueInput()
	in["expiryYear"] = 2019
	declined("expired", anna.issueCard(t, in).ID, 100, "54", "EXPIRED_CARD")
	// Statuses (the spec shows no transitions; the control API sets them).
	for status, want := range map[string][2]string{
		"LOST": {"41", "LOSR_CARD_PICK_UP"}, "STOLEN": {"43", "STOLEN_CARD_PICK_UP"},
		"CANCELED": {"04", "PICK_UP_CARD"}, "INACTIVE": {"62", "RESTRICTED_CARD"}, "PENDING": {"62", "RESTRICTED_CARD"},
	} {
		c := anna.issueCard(t, issueInput())
		g.sandbox(t, http.MethodPost, "/_sandbox/cards/"+rawID(c.ID)+"/status", map[string]any{"status": status}, nil)
		declined(status, c.ID, 100, want[0], want[1])
	}
	// Cardholder: a blocked person's card.
	blocked := anna.issueCard(t, issueInput())
	anna.query(t, `mutation { blockPerson(input: {id: "`+bankingsim.DaceID+`"}) { id } }`, nil).decode(t, &map[string]any{})
	declined("blocked cardholder", blocked.ID, 100, "57", "TRANSACTION_NOT_ALLOWED_FOR_CARDHOLDER")

	// Declines changed nothing: the wallet still holds what it held after
	// the one approval.
	if after := anna.walletBalance(t, bankingsim.DemoCardWalletID); after != before-2500 {
		t.Fatalf("a decline moved money: %d, want %d", after, before-2500)
	}
	// Invalid input (an amount of 0, a currency but EUR) is refused before
	// the upstream: resolvers' TestSimulateCardTransactionInputsAndKeys.
	// A card of another corporation is not found for ben.
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	if r := ben.query(t, simulateMutation, map[string]any{"input": map[string]any{"cardId": card.ID, "amount": 100}}); r.code() != "NOT_FOUND" {
		t.Errorf("ben simulating anna's card: %+v", r.Errors)
	}
}

const revealMutation = `mutation($id: ID!) { revealCardCredentials(input: {cardId: $id}) { cardId pan cvc } }`

func luhn(pan string) bool {
	sum := 0
	for i := len(pan) - 1; i >= 0; i-- {
		d := int(pan[i] - '0')
		if d < 0 || d > 9 {
			return false
		}
		if (len(pan)-1-i)%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// TestCardCredentialsOnlyForTheCardsCorporation: persons of the card's
// corporation read the PAN and CVC, with no-store, a few times a minute;
// another corporation, staff and API clients cannot. Then the bus carries no
// PAN or CVC (the log scan at the end of the suite covers the logs).
func TestCardCredentialsOnlyForTheCardsCorporation(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	staff := g.as(g.signInStaff(t))
	ws := staff.dialWS(t, nil, nil)
	ws.subscribeFromNow(staff, "1", `subscription($after: String) { events(names: ["CardIssued", "CardTransactionSimulated"], after: $after) `+liveFields+` }`, nil)

	card := anna.issueCard(t, issueInput())
	r, resp := anna.post(t, http.Header{"Authorization": {"Bearer " + anna.bearer}}, revealMutation, map[string]any{"id": card.ID})
	var d struct {
		Reveal struct {
			CardID string `json:"cardId"`
			PAN    string `json:"pan"`
			CVC    string `json:"cvc"`
		} `json:"revealCardCredentials"`
	}
	r.decode(t, &d)
	pan, cvc := d.Reveal.PAN, d.Reveal.CVC
	seenSecrets.add("card PAN", pan)
	seenSecrets.add("card CVC", `"`+cvc+`"`)
	if len(pan) != 16 || !luhn(pan) || !strings.HasPrefix(pan, card.MaskedPan.Bin) || !strings.HasSuffix(pan, card.MaskedPan.LastFour) || len(cvc) != 3 {
		t.Fatalf("credentials: pan %d digits (luhn %v), cvc %d digits, masked %+v", len(pan), luhn(pan), len(cvc), card.MaskedPan)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("credentials answered with Cache-Control %q", cc)
	}
	// The field asked for on purpose is the same read, with the same header.
	r, resp = anna.post(t, http.Header{"Authorization": {"Bearer " + anna.bearer}},
		`query($id: ID!) { card(id: $id) { credentials { pan } } }`, map[string]any{"id": card.ID})
	if len(r.Errors) > 0 || !strings.Contains(string(r.Data), pan) || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("Card.credentials: %s %+v %q", r.Data, r.Errors, resp.Header.Get("Cache-Control"))
	}
	// A card query without credentials stays cacheable by the client.
	_, resp = anna.post(t, http.Header{"Authorization": {"Bearer " + anna.bearer}}, `{ cards { id } }`, nil)
	if resp.Header.Get("Cache-Control") == "no-store" {
		t.Error("no-store on a response without card data")
	}

	// Refused: another corporation, for which the card does not exist.
	// (Staff and API clients are refused by policy before any credential
	// read: resolvers' TestRevealCardCredentials.)
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	if r := ben.query(t, revealMutation, map[string]any{"id": card.ID}); r.code() != "NOT_FOUND" || strings.Contains(string(r.Data), pan) {
		t.Errorf("ben reading anna's card: %+v", r.Errors)
	}

	// Rate limit per person: five reads a minute; two are spent.
	for i := 3; i <= 6; i++ {
		r := anna.query(t, revealMutation, map[string]any{"id": card.ID})
		if i <= 5 && len(r.Errors) > 0 {
			t.Fatalf("read %d refused: %+v", i, r.Errors)
		}
		if i == 6 && r.code() != "RATE_LIMITED" {
			t.Fatalf("read 6: want RATE_LIMITED, got %+v", r.Errors)
		}
	}
	// The allowance is the person's: a fresh session has none left.
	anna2 := g.as(g.signInPerson(t, "anna@demo.test"))
	if r := anna2.query(t, revealMutation, map[string]any{"id": card.ID}); r.code() != "RATE_LIMITED" {
		t.Fatalf("a fresh session of the same person: %+v", r.Errors)
	}

	// The bus: the card's events carry ids, never the card's secrets.
	anna.simulate(t, card.ID, 100)
	for _, want := range []string{"CardIssued", "CardTransactionSimulated"} {
		e := ws.next("1", "events")
		raw, _ := json.Marshal(e)
		if e.Event.Name != want || e.Source != "gateway" || e.Event.Payload["card_id"] != rawID(card.ID) ||
			e.Event.Payload["corporation_id"] != bankingsim.DemoCorporationID {
			t.Fatalf("event %s: %s", want, raw)
		}
		if strings.Contains(string(raw), pan) || strings.Contains(string(raw), pan[6:12]) || strings.Contains(string(raw), `"`+cvc+`"`) {
			t.Fatalf("event %s carries card data: %s", want, raw)
		}
	}
	if strings.Contains(g.Logs.String(), pan) {
		t.Fatal("the PAN reached the log")
	}
}
