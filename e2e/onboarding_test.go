package e2e

import (
	"net/http"
	"testing"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// Tests of the banking spec's rules on a corporation's onboarding and its
// persons through the graph: "is_onboarded: when false, all operations with
// its wallets are disabled", a person's type required when both types are
// allowed (10002), and consumers, who have no roles or UBO flags and get no
// invitation.

// TestNotOnboardedCorporationHasItsWalletsDisabled asks, as a person of the
// seeded second corporation (not onboarded), for every operation on its
// wallets the graph has; each is refused by the upstream naming the field,
// nothing changes, and once staff onboard the corporation the same requests
// succeed.
func TestNotOnboardedCorporationHasItsWalletsDisabled(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	staff := g.signInStaff(t)
	ben := g.as(g.signInPerson(t, bankingsim.BenEmail))
	cardWallet := g.createWallet(t, staff, map[string]any{"corporationId": secondCorpID, "adapter": "ADAPTER_A", "purpose": "CARD"})

	// What an onboarding screen shows: the application is in, KYC data is not.
	var progress struct {
		CurrentCorporation struct {
			IsOnboarded                bool `json:"isOnboarded"`
			IsInitialApplicationFilled bool `json:"isInitialApplicationFilled"`
			HasAnotherBankAccount      bool `json:"hasAnotherBankAccount"`
			KycDataProvider            *struct {
				UpstreamID string `json:"upstreamId"`
			} `json:"kycDataProvider"`
			KycDataProvidedByID *string `json:"kycDataProvidedById"`
		} `json:"currentCorporation"`
	}
	ben.query(t, `{ currentCorporation { isOnboarded isInitialApplicationFilled hasAnotherBankAccount kycDataProvider { upstreamId } kycDataProvidedById } }`, nil).decode(t, &progress)
	if p := progress.CurrentCorporation; p.IsOnboarded || !p.IsInitialApplicationFilled || p.HasAnotherBankAccount || p.KycDataProvider != nil || p.KycDataProvidedByID != nil {
		t.Errorf("onboarding progress of the second corporation: %+v", p)
	}

	type op struct {
		name, query string
		vars        map[string]any
		code        int
		codeName    string
		field       string
	}
	ops := []op{
		{"SEPA lookup", `query($w: ID!) { sepaEnabled(sourceWalletId: $w, iban: "DE89370400440532013000") }`,
			map[string]any{"w": secondEURWalletID}, 10001, "INVALID_VALUE", "source_id"},
		{"create requisites", `mutation { createWalletRequisites(input: {corporationId: "` + secondCorpID + `", adapter: ADAPTER_A}) { id } }`,
			nil, 10001, "INVALID_VALUE", "corporation_id"},
		{"attach requisites", `mutation { attachWalletRequisites(input: {corporationId: "` + secondCorpID + `", walletId: "` + secondEURWalletID + `"}) { id } }`,
			nil, 10001, "INVALID_VALUE", "wallet_id"},
		{"delete requisites", `mutation { deleteWalletRequisites(input: {corporationId: "` + secondCorpID + `", id: "` + bankingsim.SecondRequisiteID + `"}) { id } }`,
			nil, 10001, "INVALID_VALUE", "id"},
		{"PDF statement", statementMutation, map[string]any{"input": map[string]any{"format": "PDF", "walletIds": []string{secondEURWalletID}}},
			10001, "INVALID_VALUE", "walletId"},
		{"CSV statement", statementMutation, map[string]any{"input": map[string]any{"format": "CSV", "walletIds": []string{secondEURWalletID}}},
			10001, "INVALID_VALUE", "wallets"},
		{"conversion", conversionMutation, map[string]any{"input": map[string]any{"sourceWalletId": secondEURWalletID, "amount": 1000, "currency": "USD"}},
			20003, "WALLET_NOT_FOUND", "source.id"},
		{"card issue", issueCardMutation, map[string]any{"input": map[string]any{"fundingWalletId": cardWallet, "cardholderId": bankingsim.BenID,
			"expiryMonth": 12, "expiryYear": 2031}}, 10001, "INVALID_VALUE", "card.funding_source_id"},
	}
	requisites := func() int {
		var d struct {
			CurrentCorporation struct {
				WalletRequisites []struct {
					ID string `json:"id"`
				} `json:"walletRequisites"`
			} `json:"currentCorporation"`
		}
		ben.query(t, `{ currentCorporation { walletRequisites { id } } }`, nil).decode(t, &d)
		return len(d.CurrentCorporation.WalletRequisites)
	}
	before := requisites()
	for _, o := range ops {
		r := ben.query(t, o.query, o.vars)
		wantUpstreamCode(t, r, o.code, o.codeName)
		if f := upstreamOf(t, r)["field"]; f != o.field {
			t.Errorf("%s: refused on field %v, want %s", o.name, f, o.field)
		}
	}
	if after := requisites(); after != before {
		t.Errorf("refused requisites operations changed the listing: %d then %d", before, after)
	}
	var cards struct {
		CurrentCorporation struct {
			Cards []struct {
				ID string `json:"id"`
			} `json:"cards"`
		} `json:"currentCorporation"`
	}
	ben.query(t, `{ currentCorporation { cards { id } } }`, nil).decode(t, &cards)
	if len(cards.CurrentCorporation.Cards) != 0 {
		t.Errorf("a refused issue made cards: %+v", cards.CurrentCorporation.Cards)
	}

	// Staff onboard the corporation: the wallet operations open (the
	// conversion is then refused for the unpaid invoice, its next rule).
	g.queryAs(t, staff, `mutation { updateCorporation(input: {id: "`+secondCorpID+`", isOnboarded: true}) { isOnboarded } }`, nil).decode(t, &map[string]any{})
	for _, o := range ops[:6] {
		if r := ben.query(t, o.query, o.vars); len(r.Errors) > 0 {
			t.Errorf("%s once onboarded: %+v", o.name, r.Errors)
		}
	}
	var issued struct {
		IssueCard struct {
			ID string `json:"id"`
		} `json:"issueCard"`
	}
	ben.query(t, ops[7].query, ops[7].vars).decode(t, &issued)
	if issued.IssueCard.ID == "" {
		t.Error("no card issued once onboarded")
	}
}

// TestPersonTypeIsRequiredWhenBothTypesAreAllowed: the second corporation
// allows employees and consumers, so a new person without a type is refused
// by the upstream with 10002 on type; the demo corporation allows employees
// only and takes the same input.
func TestPersonTypeIsRequiredWhenBothTypesAreAllowed(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	const create = `mutation($input: CreatePersonInput!) { createPerson(input: $input) { id type } }`
	in := func() map[string]any {
		return map[string]any{"firstName": "Tiit", "lastName": "Typeless", "email": uniq("typeless") + "@second.test", "gender": "UNKNOWN"}
	}
	ben := g.as(g.signInPerson(t, bankingsim.BenEmail))
	r := ben.query(t, create, map[string]any{"input": in()})
	wantUpstreamCode(t, r, 10002, "REQUIRED")
	if f := upstreamOf(t, r)["field"]; f != "type" {
		t.Errorf("10002 names %v, want type", f)
	}
	withType := in()
	withType["type"] = "EMPLOYEE"
	var d struct {
		CreatePerson struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"createPerson"`
	}
	ben.query(t, create, map[string]any{"input": withType}).decode(t, &d)
	if d.CreatePerson.ID == "" || d.CreatePerson.Type != "EMPLOYEE" {
		t.Errorf("with a type: %+v", d.CreatePerson)
	}
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	anna.query(t, create, map[string]any{"input": in()}).decode(t, &d)
	if d.CreatePerson.ID == "" || d.CreatePerson.Type != "EMPLOYEE" {
		t.Errorf("one type allowed, none given: %+v", d.CreatePerson)
	}
}

// TestConsumersHaveNoRolesAndGetNoInvitation: a consumer created with UBO
// and director flags and roles has none of them, and no invitation is
// e-mailed, while an employee created the same way gets all and an
// invitation.
func TestConsumersHaveNoRolesAndGetNoInvitation(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	ben := g.as(g.signInPerson(t, bankingsim.BenEmail))
	type created struct {
		CreatePerson struct {
			ID         string   `json:"id"`
			Type       string   `json:"type"`
			IsUbo      bool     `json:"isUbo"`
			IsDirector bool     `json:"isDirector"`
			Roles      []string `json:"roles"`
		} `json:"createPerson"`
	}
	create := func(typ, email string) created {
		var d created
		ben.query(t, `mutation($input: CreatePersonInput!) { createPerson(input: $input) { id type isUbo isDirector roles } }`,
			map[string]any{"input": map[string]any{"firstName": "Kai", "lastName": "Klient", "email": email, "gender": "UNKNOWN",
				"type": typ, "isUbo": true, "isDirector": true, "roles": []string{"role-director"}}}).decode(t, &d)
		return d
	}
	consumerEmail, employeeEmail := uniq("consumer")+"@second.test", uniq("employee")+"@second.test"
	c := create("CONSUMER", consumerEmail).CreatePerson
	if c.ID == "" || c.Type != "CONSUMER" || c.IsUbo || c.IsDirector || len(c.Roles) != 0 {
		t.Errorf("consumer = %+v, want no UBO, director or roles", c)
	}
	e := create("EMPLOYEE", employeeEmail).CreatePerson
	if e.ID == "" || e.Type != "EMPLOYEE" || !e.IsUbo || !e.IsDirector || len(e.Roles) != 1 {
		t.Errorf("employee = %+v, want UBO, director and the role", e)
	}
	var mail []struct {
		To string `json:"to"`
	}
	g.sandbox(t, http.MethodGet, "/_sandbox/email", nil, &mail)
	invited := map[string]bool{}
	for _, m := range mail {
		invited[m.To] = true
	}
	if invited[consumerEmail] || !invited[employeeEmail] {
		t.Errorf("invitations: consumer %v (want none), employee %v (want one)", invited[consumerEmail], invited[employeeEmail])
	}
}
