package e2e

import (
	"testing"
)

// Rules of the banking spec that work upstream, each asserted through the
// graph: a corporation that is not onboarded moves no money, and every
// currency's conversion minimum.

func TestCorporationNotOnboardedCannotConvert(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	staff := g.signInStaff(t)
	ben := g.as(g.signInPerson(t, "ben@second.test"))

	in := map[string]any{"sourceWalletId": secondEURWalletID, "amount": 1000, "currency": "USD"}
	before, _ := ben.balance(t, secondCorpID, secondEURWalletID)
	_, r := ben.convert(t, in)
	wantUpstreamCode(t, r, 20003, "WALLET_NOT_FOUND")
	if after, _ := ben.balance(t, secondCorpID, secondEURWalletID); after != before {
		t.Errorf("a refused conversion moved money: %d -> %d", before, after)
	}

	// Onboarded, the same request passes that check and meets the next
	// rule (the second corporation's opening fee is unpaid, 20006): the
	// refusal was the onboarding.
	r = g.queryAs(t, staff, `mutation($input: UpdateCorporationInput!) { updateCorporation(input: $input) { isOnboarded } }`,
		map[string]any{"input": map[string]any{"id": secondCorpID, "isOnboarded": true}})
	var d struct {
		UpdateCorporation struct {
			IsOnboarded bool `json:"isOnboarded"`
		} `json:"updateCorporation"`
	}
	r.decode(t, &d)
	if !d.UpdateCorporation.IsOnboarded {
		t.Fatal("the corporation is still not onboarded")
	}
	res, r := ben.convert(t, in)
	if len(r.Errors) > 0 || res.Typename != "ConversionRefused" || res.Code != 20006 {
		t.Fatalf("after onboarding: %+v %+v", res, r.Errors)
	}
}

func TestConversionMinimumOfEveryCurrency(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	staff := g.signInStaff(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	// Target wallets for the currencies the demo corporation lacks.
	for _, cur := range []string{"SEK", "NOK", "DKK"} {
		g.createWallet(t, staff, map[string]any{"corporationId": demoCorpID, "adapter": "ADAPTER_C", "currencies": []string{cur}})
	}
	cases := []struct {
		currency string
		minimum  int64
		source   string
	}{
		{"EUR", 100, demoUSDWalletID},
		{"USD", 200, demoEURWalletID},
		{"GBP", 100, demoEURWalletID},
		{"SEK", 1500, demoEURWalletID},
		{"NOK", 1500, demoEURWalletID},
		{"DKK", 800, demoEURWalletID},
	}
	for _, tc := range cases {
		t.Run(tc.currency, func(t *testing.T) {
			_, r := anna.convert(t, map[string]any{"sourceWalletId": tc.source, "amount": tc.minimum - 1, "currency": tc.currency})
			wantUpstreamCode(t, r, 20005, "AMOUNT_BELOW_MINIMUM")
			res, r := anna.convert(t, map[string]any{"sourceWalletId": tc.source, "amount": tc.minimum, "currency": tc.currency})
			if len(r.Errors) > 0 || res.Typename != "Conversion" || res.Target.Amount != tc.minimum || res.Target.Currency != tc.currency {
				t.Fatalf("the minimum itself: %+v %+v", res, r.Errors)
			}
		})
	}
}
