package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// POST /sandbox/credit books an incoming transfer on a wallet through the
// sandbox's control API, outside the gateway, for the dashboard's "Credit"
// button. It takes a wallet of the signed-in principal's own corporation
// only: another corporation's wallet is NOT_FOUND whether its id names the
// other corporation or is forged to name the caller's own (the upstream,
// asked with the caller's credentials, refuses it), and its balance does
// not move. Bad input is a 4xx with BAD_USER_INPUT, never a 5xx.
func TestSandboxCreditRoute(t *testing.T) {
	g := startGateway(t)
	post := func(token, ct, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/sandbox/credit", bytes.NewBufferString(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := g.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Errors []struct {
				Extensions struct {
					Code string `json:"code"`
				} `json:"extensions"`
			} `json:"errors"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if len(out.Errors) == 0 {
			return resp.StatusCode, ""
		}
		return resp.StatusCode, out.Errors[0].Extensions.Code
	}
	body := func(walletID string, amount any) string {
		b, _ := json.Marshal(map[string]any{"walletId": walletID, "amount": amount})
		return string(b)
	}
	balance := func(token, walletID string) int64 {
		t.Helper()
		var d struct {
			Node *struct {
				Balance struct {
					Amount int64 `json:"amount"`
				} `json:"balance"`
			} `json:"node"`
		}
		g.queryAs(t, token, `query($id: ID!) { node(id: $id) { ... on Wallet { balance { amount } } } }`,
			map[string]any{"id": walletID}).decode(t, &d)
		if d.Node == nil {
			t.Fatalf("wallet %s not readable", walletID)
		}
		return d.Node.Balance.Amount
	}

	own := relay.ID(relay.Wallet, bankingsim.DemoCorporationID, bankingsim.DemoUSDWalletID)
	other := relay.ID(relay.Wallet, bankingsim.SecondCorporationID, bankingsim.SecondEURWalletID)
	forged := relay.ID(relay.Wallet, bankingsim.DemoCorporationID, bankingsim.SecondEURWalletID)

	if resp, err := g.http.Get(g.URL + "/sandbox/credit"); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /sandbox/credit: %v %v, want 405", err, resp.StatusCode)
	} else {
		resp.Body.Close()
	}
	if s, c := post("", "application/json", body(own, 1000)); s != http.StatusUnauthorized || c != "UNAUTHENTICATED" {
		t.Errorf("signed out: %d %s", s, c)
	}
	if s, c := post(g.signInStaff(t), "application/json", body(own, 1000)); s != http.StatusForbidden || c != "FORBIDDEN" {
		t.Errorf("staff, who belong to no corporation: %d %s", s, c)
	}

	anna := g.signInPerson(t, bankingsim.AnnaEmail)
	ben := g.signInPerson(t, bankingsim.BenEmail)
	before, otherBefore := balance(anna, own), balance(ben, other)

	// Allowed: Anna credits her own corporation's wallet; the upstream's
	// balance moves by the amount.
	if s, c := post(anna, "application/json; charset=utf-8", body(own, 1000)); s != http.StatusOK {
		t.Fatalf("credit of an own wallet: %d %s", s, c)
	}
	if got := balance(anna, own); got != before+1000 {
		t.Errorf("balance after a credit of 1000: %d, want %d", got, before+1000)
	}
	// The answer is what Anna may see of the wallet, its id and balance,
	// not the sandbox's raw wallet (its creator, internal ids).
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/sandbox/credit", bytes.NewBufferString(body(own, 1)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+anna)
	resp, err := g.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answer map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	if len(answer) != 2 || answer["walletId"] != own {
		t.Errorf("the credit's answer: %v, want only walletId %s and balance", answer, own)
	}
	if b, _ := answer["balance"].(map[string]any); b["amount"] != float64(before+1001) || b["currency"] != "USD" {
		t.Errorf("the credit's balance: %v, want %d USD", answer["balance"], before+1001)
	}
	before++

	// Refused: another corporation's wallet, by its true id and by an id
	// forged to name Anna's corporation.
	for name, id := range map[string]string{"other corporation's wallet": other, "forged id": forged} {
		if s, c := post(anna, "application/json", body(id, 1000)); s != http.StatusNotFound || c != "NOT_FOUND" {
			t.Errorf("%s: %d %s, want 404 NOT_FOUND", name, s, c)
		}
	}
	if got := balance(ben, other); got != otherBefore {
		t.Errorf("the other corporation's balance moved: %d, was %d", got, otherBefore)
	}

	// Bad input: every one a 4xx with BAD_USER_INPUT.
	if s, c := post(anna, "application/x-www-form-urlencoded", "walletId=x&amount=1"); s != http.StatusUnsupportedMediaType || c != "BAD_USER_INPUT" {
		t.Errorf("form body: %d %s", s, c)
	}
	card := relay.ID(relay.Card, bankingsim.DemoCardAnnaID)
	for _, b := range []string{
		`not json`,
		`{"amount": 1000}`,
		body("", 1000),
		body("not-an-id", 1000),
		body(card, 1000),
		body(own, 0),
		body(own, -5),
		body(own, 10.5),
		body(own, "1000"),
		body(own, 100_000_01),
		`{"walletId": ["x"], "amount": 1}`,
	} {
		if s, c := post(anna, "application/json", b); s != http.StatusBadRequest || c != "BAD_USER_INPUT" {
			t.Errorf("%s: %d %s, want 400 BAD_USER_INPUT", b, s, c)
		}
	}
	if got := balance(anna, own); got != before+1000 {
		t.Errorf("refused requests moved the balance: %d, want %d", got, before+1000)
	}
}
