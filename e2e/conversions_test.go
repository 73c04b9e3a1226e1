package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// Conversions through createConversion: each upstream code the spec places,
// the corporation limits, and idempotent retries, checked on balances.

const conversionMutation = `mutation($input: CreateConversionInput!) { createConversion(input: $input) {
  __typename
  ... on Conversion { id status statusCode source { amount currency } target { amount currency }
    charge { amount currency } sourceWalletId targetWalletId
    amountEquivalents { amount currency } chargeEquivalents { amount currency }
    sourceWallet { id balance { amount } pending { id balance { amount } } } }
  ... on ConversionRefused { reason code name message }
} }`

type conversionResult struct {
	Typename   string `json:"__typename"`
	ID         string `json:"id"`
	Status     string `json:"status"`
	StatusCode int    `json:"statusCode"`
	Source     struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
	} `json:"source"`
	Target struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
	} `json:"target"`
	Charge struct {
		Amount int64 `json:"amount"`
	} `json:"charge"`
	TargetWalletID    string `json:"targetWalletId"`
	AmountEquivalents []struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
	} `json:"amountEquivalents"`
	SourceWallet *struct {
		Balance struct {
			Amount int64 `json:"amount"`
		} `json:"balance"`
		Pending *struct {
			ID      string `json:"id"`
			Balance struct {
				Amount int64 `json:"amount"`
			} `json:"balance"`
		} `json:"pending"`
	} `json:"sourceWallet"`
	Reason  string `json:"reason"`
	Code    int    `json:"code"`
	Name    string `json:"name"`
	Message string `json:"message"`
}

// convert runs createConversion and returns the result and the raw answer.
func (g *testGateway) convert(t *testing.T, input map[string]any) (conversionResult, gqlResponse) {
	t.Helper()
	r := g.query(t, conversionMutation, map[string]any{"input": input})
	var d struct {
		CreateConversion conversionResult `json:"createConversion"`
	}
	if len(r.Errors) == 0 {
		r.decode(t, &d)
	}
	return d.CreateConversion, r
}

// balance reads a wallet's balance and its pending wallet's balance.
func (g *testGateway) balance(t *testing.T, corpID, walletID string) (available, pending int64) {
	t.Helper()
	var d struct {
		Corporation *struct {
			Wallet *struct {
				Balance struct {
					Amount int64 `json:"amount"`
				} `json:"balance"`
				Pending *struct {
					Balance struct {
						Amount int64 `json:"amount"`
					} `json:"balance"`
				} `json:"pending"`
			} `json:"wallet"`
		} `json:"corporation"`
	}
	g.query(t, `query($c: ID!, $w: ID!) { corporation(id: $c) { wallet(id: $w) { balance { amount } pending { balance { amount } } } } }`,
		map[string]any{"c": corpID, "w": walletID}).decode(t, &d)
	if d.Corporation == nil || d.Corporation.Wallet == nil {
		t.Fatalf("wallet %s of %s not found", walletID, corpID)
	}
	w := d.Corporation.Wallet
	if w.Pending != nil {
		pending = w.Pending.Balance.Amount
	}
	return w.Balance.Amount, pending
}

// wantUpstreamCode checks an UPSTREAM_REJECTED error with the code and name.
func wantUpstreamCode(t *testing.T, r gqlResponse, code int, name string) {
	t.Helper()
	if r.code() != "UPSTREAM_REJECTED" {
		t.Fatalf("want UPSTREAM_REJECTED %d, got data %s errors %+v", code, r.Data, r.Errors)
	}
	u := upstreamOf(t, r)
	if fmt.Sprint(u["code"]) != fmt.Sprint(code) || u["name"] != name {
		t.Fatalf("upstream = %v, want code %d name %s", u, code, name)
	}
}

// createWallet makes a wallet as staff and returns its id.
func (g *testGateway) createWallet(t *testing.T, staff string, input map[string]any) string {
	t.Helper()
	var d struct {
		CreateWallet struct {
			Wallets []struct {
				ID string `json:"id"`
			} `json:"wallets"`
		} `json:"createWallet"`
	}
	g.queryAs(t, staff, `mutation($input: CreateWalletInput!) { createWallet(input: $input) { wallets { id } } }`,
		map[string]any{"input": input}).decode(t, &d)
	if len(d.CreateWallet.Wallets) == 0 {
		t.Fatal("createWallet made no wallet")
	}
	return d.CreateWallet.Wallets[0].ID
}

func TestConversionErrorCodes(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	staff := g.signInStaff(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))

	// Wallets for the adapter B rules: one with no requisites (not set up),
	// one with SEPA requisites.
	bare := g.createWallet(t, staff, map[string]any{"corporationId": demoCorpID, "adapter": "ADAPTER_B", "name": "Bare B"})
	sepaB := g.createWallet(t, staff, map[string]any{"corporationId": demoCorpID, "adapter": "ADAPTER_B", "name": "SEPA B",
		"sepa": map[string]any{"iban": "DE89 3704 0044 0532 0130 00", "bic": "COBADEFFXXX"}})

	usdBefore, _ := anna.balance(t, demoCorpID, demoUSDWalletID)
	cases := []struct {
		name  string
		input map[string]any
		code  int
		cname string
	}{
		{"20003 source of another corporation", map[string]any{"sourceWalletId": secondEURWalletID, "amount": 1000, "currency": "USD"}, 20003, "WALLET_NOT_FOUND"},
		{"20003 no target wallet in the currency", map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 5000, "currency": "SEK"}, 20003, "WALLET_NOT_FOUND"},
		{"20004 wallet not set up", map[string]any{"sourceWalletId": bare, "amount": 1000, "currency": "USD"}, 20004, "WALLET_NOT_SET_UP"},
		{"20005 below the USD minimum", map[string]any{"sourceWalletId": demoEURWalletID, "amount": 199, "currency": "USD"}, 20005, "AMOUNT_BELOW_MINIMUM"},
		{"20009 adapter A source", map[string]any{"sourceWalletId": demoCardWalletID, "amount": 1000, "currency": "USD"}, 20009, "CONVERSION_NOT_ALLOWED"},
		{"20010 same currency", map[string]any{"sourceWalletId": demoEURWalletID, "amount": 1000, "currency": "EUR"}, 20010, "CURRENCY_NOT_ALLOWED"},
		{"20011 adapter B converts into EUR only", map[string]any{"sourceWalletId": sepaB, "amount": 1000, "currency": "USD"}, 20011, "TARGET_ONLY_EUR"},
		{"20012 source is target", map[string]any{"sourceWalletId": demoUSDWalletID, "targetWalletId": demoUSDWalletID, "amount": 1000, "currency": "USD"}, 20012, "SAME_ACCOUNT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, r := anna.convert(t, tc.input)
			wantUpstreamCode(t, r, tc.code, tc.cname)
		})
	}
	t.Run("20002 insufficient funds is a typed refusal", func(t *testing.T) {
		res, r := anna.convert(t, map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 100_000_00, "currency": "EUR"})
		if len(r.Errors) > 0 || res.Typename != "ConversionRefused" || res.Reason != "INSUFFICIENT_FUNDS" || res.Code != 20002 || res.Name != "INSUFFICIENT_FUNDS" {
			t.Fatalf("got %+v %+v", res, r.Errors)
		}
	})
	if after, _ := anna.balance(t, demoCorpID, demoUSDWalletID); after != usdBefore {
		t.Errorf("refused conversions moved money: USD %d -> %d", usdBefore, after)
	}
	// The gateway always sends type convert, so 20001 (unknown type)
	// cannot arise through the graph; bankingsim's TestConversionRules
	// covers it. An unknown currency is refused before the upstream, and
	// only persons convert: resolvers' TestConversionInputRules and
	// TestWhoConverts.
}

func TestUnpaidInvoiceBlocksConversionsUntilRepaid(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	staff := g.signInStaff(t)
	// The second corporation must be onboarded for its wallets to work.
	if r := g.queryAs(t, staff, `mutation { updateCorporation(input: {id: "`+secondCorpID+`", isOnboarded: true}) { id } }`, nil); len(r.Errors) > 0 {
		t.Fatalf("onboard: %+v", r.Errors)
	}
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	invoices := func() (paid bool, unpaid int64) {
		var d struct {
			CurrentCorporation struct {
				Invoices []struct {
					IsPaid       bool `json:"isPaid"`
					UnpaidAmount struct {
						Amount int64 `json:"amount"`
					} `json:"unpaidAmount"`
					Repayments []struct {
						Type string `json:"type"`
					} `json:"repayments"`
				} `json:"invoices"`
			} `json:"currentCorporation"`
		}
		ben.query(t, `{ currentCorporation { invoices { isPaid unpaidAmount { amount } repayments { type } } } }`, nil).decode(t, &d)
		if len(d.CurrentCorporation.Invoices) != 1 {
			t.Fatalf("invoices = %+v", d.CurrentCorporation.Invoices)
		}
		inv := d.CurrentCorporation.Invoices[0]
		return inv.IsPaid, inv.UnpaidAmount.Amount
	}
	if paid, unpaid := invoices(); paid || unpaid != 9900 {
		t.Fatalf("seeded invoice: paid %v unpaid %d", paid, unpaid)
	}
	in := map[string]any{"sourceWalletId": secondEURWalletID, "amount": 1000, "currency": "USD"}
	res, r := ben.convert(t, in)
	if len(r.Errors) > 0 || res.Typename != "ConversionRefused" || res.Reason != "UNPAID_INVOICE" || res.Code != 20006 || res.Name != "UNPAID_INVOICE" {
		t.Fatalf("20006: %+v %+v", res, r.Errors)
	}
	// Money arrives: the invoice is repaid from the balance.
	g.sandbox(t, http.MethodPost, "/_sandbox/banking/wallets/"+secondEURWalletID+"/credit", map[string]any{"amount": 10000}, nil)
	if paid, unpaid := invoices(); !paid || unpaid != 0 {
		t.Fatalf("after the credit: paid %v unpaid %d", paid, unpaid)
	}
	if bal, _ := ben.balance(t, secondCorpID, secondEURWalletID); bal != 5000+10000-9900 {
		t.Errorf("balance after repayment = %d, want 5100", bal)
	}
	// No longer blocked: the next rule that applies is the adapter's.
	_, r = ben.convert(t, in)
	wantUpstreamCode(t, r, 20009, "CONVERSION_NOT_ALLOWED")
}

func TestConversionReservesThenSettles(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	usd0, _ := anna.balance(t, demoCorpID, demoUSDWalletID)
	eur0, _ := anna.balance(t, demoCorpID, demoEURWalletID)

	res, r := anna.convert(t, map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 10000, "currency": "EUR"})
	if len(r.Errors) > 0 || res.Typename != "Conversion" {
		t.Fatalf("conversion: %+v %+v", res, r.Errors)
	}
	// 100.00 EUR at 1.08 USD/EUR is 108.00 USD, plus the 0.5% charge 0.54.
	if res.Status != "PENDING" || res.StatusCode != 40 || res.Source.Amount != 10854 || res.Source.Currency != "USD" ||
		res.Target.Amount != 10000 || res.Target.Currency != "EUR" || res.Charge.Amount != 54 || rawID(res.TargetWalletID) != demoEURWalletID {
		t.Fatalf("conversion = %+v", res)
	}
	if len(res.AmountEquivalents) != 6 {
		t.Errorf("amount equivalents = %+v", res.AmountEquivalents)
	}
	for _, m := range res.AmountEquivalents {
		if m.Currency == "EUR" && m.Amount != 10000 || m.Currency == "USD" && m.Amount != 10800 {
			t.Errorf("equivalent %+v", m)
		}
	}
	if res.SourceWallet == nil || res.SourceWallet.Balance.Amount != usd0-10854 || res.SourceWallet.Pending == nil || res.SourceWallet.Pending.Balance.Amount != 10854 {
		t.Fatalf("source wallet after reservation = %+v", res.SourceWallet)
	}
	if eur, _ := anna.balance(t, demoCorpID, demoEURWalletID); eur != eur0 {
		t.Errorf("target credited before settlement: %d -> %d", eur0, eur)
	}
	g.sandbox(t, http.MethodPost, "/_sandbox/banking/transactions/"+res.ID+"/settle", map[string]any{"code": 0}, nil)
	usd, pending := anna.balance(t, demoCorpID, demoUSDWalletID)
	eur, _ := anna.balance(t, demoCorpID, demoEURWalletID)
	if usd != usd0-10854 || pending != 0 || eur != eur0+10000 {
		t.Fatalf("after settlement: USD %d pending %d EUR %d", usd, pending, eur)
	}

	// A declined conversion gives the reserved funds back.
	res, _ = anna.convert(t, map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 5000, "currency": "GBP"})
	g.sandbox(t, http.MethodPost, "/_sandbox/banking/transactions/"+res.ID+"/settle", map[string]any{"code": 10}, nil)
	if back, pending := anna.balance(t, demoCorpID, demoUSDWalletID); back != usd || pending != 0 {
		t.Fatalf("after decline: USD %d (want %d) pending %d", back, usd, pending)
	}
}

func TestConversionIdempotentRetryConvertsOnce(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	usd0, _ := anna.balance(t, demoCorpID, demoUSDWalletID)
	in := map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 2000, "currency": "GBP", "idempotencyKey": uniq("conv-")}

	// The same request three times at once, then once more.
	ids := make([]string, 4)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			res, r := anna.convert(t, in)
			if len(r.Errors) > 0 {
				t.Errorf("attempt %d: %+v", i, r.Errors)
			}
			ids[i] = res.ID
		})
	}
	wg.Wait()
	res, _ := anna.convert(t, in)
	ids[3] = res.ID
	for _, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("retries answered different conversions: %v", ids)
		}
	}
	usd, pending := anna.balance(t, demoCorpID, demoUSDWalletID)
	// 20.00 GBP at 0.85 GBP/EUR and 1.08 USD/EUR is 25.42 USD (rounded up), charge 0.13.
	if usd != usd0-2542-13 || pending != 2542+13 {
		t.Fatalf("USD %d -> %d (pending %d): want one conversion of 2555", usd0, usd, pending)
	}
	in["amount"] = 3000
	if _, r := anna.convert(t, in); r.code() != "BAD_USER_INPUT" {
		t.Fatalf("a key reused for another conversion: %+v", r.Errors)
	}
	// Without a key, a repeat converts again.
	delete(in, "idempotencyKey")
	in["amount"] = 2000
	a, _ := anna.convert(t, in)
	b, _ := anna.convert(t, in)
	if a.ID == "" || a.ID == b.ID {
		t.Fatalf("two conversions without a key: %s %s", a.ID, b.ID)
	}
}

func TestConversionLimitCodes(t *testing.T) {
	t.Parallel()
	const limitID = "b3000000-0000-4000-8000-000000000002" // the demo corporation's convert limit
	cases := []struct {
		name    string
		set     map[string]any
		amounts []int64 // EUR cents converted from USD; all but the last succeed
		code    int
		reason  string
	}{
		{"-118 below the minimum", map[string]any{"minimumAmount": 50000}, []int64{1000}, -118, "CORPORATION_AMOUNT_BELOW_MIN"},
		{"-119 above the maximum", map[string]any{"maximumAmount": 1500}, []int64{1000, 2000}, -119, "CORPORATION_AMOUNT_ABOVE_MAX"},
		{"-116 attempts per hour", map[string]any{"attemptVelocityPerHour": 2}, []int64{1000, 1000, 1000}, -116, "CORPORATION_ATTEMPT_VELOCITY_PER_HOUR_REACHED"},
		{"-115 successful per day", map[string]any{"dailySuccessfulVelocity": 1}, []int64{1000, 1000}, -115, "CORPORATION_VELOCITY_REACHED"},
		{"-117 daily amount", map[string]any{"dailyLimitAmount": 5000}, []int64{3000, 3000}, -117, "CORPORATION_AMOUNT_REACHED"},
		{"-114 weekly amount", map[string]any{"weeklyLimitAmount": 5000}, []int64{3000, 3000}, -114, "CORPORATION_LIMIT_REACHED"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := startGateway(t)
			staff := g.as(g.signInStaff(t))
			var d struct {
				UpdateLimit struct {
					ID string `json:"id"`
				} `json:"updateLimit"`
			}
			staff.query(t, `mutation($input: UpdateLimitInput!) { updateLimit(input: $input) { id } }`, map[string]any{"input": map[string]any{
				"corporationId": demoCorpID, "id": limitID, "limitSet": tc.set}}).decode(t, &d)
			anna := g.as(g.signInPerson(t, "anna@demo.test"))
			for i, a := range tc.amounts {
				res, r := anna.convert(t, map[string]any{"sourceWalletId": demoUSDWalletID, "amount": a, "currency": "EUR"})
				if len(r.Errors) > 0 {
					t.Fatalf("conversion %d: %+v", i, r.Errors)
				}
				last := i == len(tc.amounts)-1
				switch {
				case !last && res.Typename != "Conversion":
					t.Fatalf("conversion %d within the limit refused: %+v", i, res)
				case last && (res.Typename != "ConversionRefused" || res.Code != tc.code || res.Reason != tc.reason || res.Name != tc.reason):
					t.Fatalf("conversion %d: %+v, want %d %s", i, res, tc.code, tc.reason)
				}
			}
		})
	}
}

func TestLimitsAndInvoicesOfACorporation(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	var d struct {
		CurrentCorporation struct {
			Limits []struct {
				ID              string `json:"id"`
				PaymentMethod   string `json:"paymentMethod"`
				TransactionType string `json:"transactionType"`
				MaximumAmount   *struct {
					Amount   int64  `json:"amount"`
					Currency string `json:"currency"`
				} `json:"maximumAmount"`
				AttemptVelocityPerHour *int `json:"attemptVelocityPerHour"`
			} `json:"limits"`
			Invoices []struct {
				Type   string `json:"type"`
				IsPaid bool   `json:"isPaid"`
				Amount struct {
					Amount int64 `json:"amount"`
				} `json:"amount"`
			} `json:"invoices"`
		} `json:"currentCorporation"`
	}
	anna.query(t, `{ currentCorporation { limits { id paymentMethod transactionType maximumAmount { amount currency } attemptVelocityPerHour }
		invoices { type isPaid amount { amount } } } }`, nil).decode(t, &d)
	c := d.CurrentCorporation
	if len(c.Limits) != 2 || c.Limits[1].TransactionType != "convert" || c.Limits[1].MaximumAmount == nil ||
		c.Limits[1].MaximumAmount.Amount != 5_000_000 || c.Limits[1].MaximumAmount.Currency != "EUR" {
		t.Fatalf("limits = %+v", c.Limits)
	}
	if len(c.Invoices) != 1 || c.Invoices[0].Type != "OPENING_FEE" || !c.Invoices[0].IsPaid || c.Invoices[0].Amount.Amount != 50000 {
		t.Fatalf("invoices = %+v", c.Invoices)
	}
	id := c.Limits[1].ID
	upd := `mutation($input: UpdateLimitInput!) { updateLimit(input: $input) { id maximumAmount { amount } attemptVelocityPerHour } }`
	in := map[string]any{"corporationId": demoCorpID, "id": id, "limitSet": map[string]any{"attemptVelocityPerHour": 7}}
	// Only staff change limits, and a minimum above the maximum is refused
	// before the upstream: resolvers' TestOnlyStaffChangeLimits and
	// TestLimitInputRules.
	staff := g.as(g.signInStaff(t))
	var u struct {
		UpdateLimit struct {
			MaximumAmount struct {
				Amount int64 `json:"amount"`
			} `json:"maximumAmount"`
			AttemptVelocityPerHour int `json:"attemptVelocityPerHour"`
		} `json:"updateLimit"`
	}
	staff.query(t, upd, map[string]any{"input": in}).decode(t, &u)
	if u.UpdateLimit.AttemptVelocityPerHour != 7 || u.UpdateLimit.MaximumAmount.Amount != 5_000_000 {
		t.Errorf("absent fields must stay: %+v", u.UpdateLimit)
	}
	var del struct {
		DeleteLimit struct {
			ID string `json:"id"`
		} `json:"deleteLimit"`
	}
	staff.query(t, `mutation { deleteLimit(input: {corporationId: "`+demoCorpID+`", id: "`+id+`"}) { id } }`, nil).decode(t, &del)
	if del.DeleteLimit.ID != id {
		t.Fatalf("deleteLimit = %+v", del)
	}
	if r := staff.query(t, `mutation { deleteLimit(input: {corporationId: "`+demoCorpID+`", id: "`+id+`"}) { id } }`, nil); r.code() != "NOT_FOUND" {
		t.Errorf("deleting twice: %+v", r.Errors)
	}
}
