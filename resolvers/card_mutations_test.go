package resolvers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

const revealCredentials = `mutation($id: ID!) { revealCardCredentials(input: { cardId: $id }) { cardId pan cvc } }`

type credentialsAnswer struct {
	RevealCardCredentials struct{ CardID, Pan, Cvc string }
}

// A card's number and code are shown to persons of its corporation only,
// from the upstream straight into the answer: never logged. Staff and API
// clients are refused before any call, as is a blank card id; another
// corporation's card is the upstream's NOT_FOUND.
func TestRevealCardCredentials(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withCards(h)
	var got credentialsAnswer
	h.as(person).exec(revealCredentials, map[string]any{"id": walCardGID("card-a")}).decode(t, &got)
	assert.Equal(t, walCardGID("card-a"), got.RevealCardCredentials.CardID)
	assert.Equal(t, "5555444433331111", got.RevealCardCredentials.Pan)
	assert.Equal(t, "123", got.RevealCardCredentials.Cvc)
	assert.False(t, h.logged("5555444433331111"), "a PAN was logged")

	var field struct {
		Card struct{ Credentials struct{ Pan string } }
	}
	h.exec(`{ card(id: "card-a") { credentials { pan } } }`, nil).decode(t, &field)
	assert.Equal(t, "5555444433331111", field.Card.Credentials.Pan, "Card.credentials reads them the same way")

	resp := h.exec(revealCredentials, map[string]any{"id": walCardGID("card-o")})
	assert.Equal(t, "NOT_FOUND", resp.code(t))
	refused(t, h.exec(revealCredentials, map[string]any{"id": " "}), "BAD_USER_INPUT", "cardId")
	calls := h.banking.cards.calls("Credentials")
	assert.Equal(t, 3, calls)

	for _, who := range []principal{staff, apiClient, introducer} {
		resp := h.as(who).exec(revealCredentials, map[string]any{"id": walCardGID("card-a")})
		assert.Equal(t, "FORBIDDEN", resp.code(t), "%s", who.kind)
		assert.NotContains(t, resp.String(), "5555444433331111")
	}
	assert.Equal(t, calls, h.banking.cards.calls("Credentials"))
}

// Credential reads are limited per person, whatever her sessions: past the
// allowance a read is RATE_LIMITED with no upstream call, and another
// person keeps her own allowance.
func TestCredentialReadsAreLimitedPerPerson(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withCards(h)
	for range credentialReadsPerMinute {
		h.as(person) // a new session each time: the allowance is the person's
		h.exec(revealCredentials, map[string]any{"id": walCardGID("card-a")}).noErrors(t)
	}
	e := h.as(person).exec(revealCredentials, map[string]any{"id": walCardGID("card-a")}).only(t)
	assert.Equal(t, "RATE_LIMITED", e.Code())
	assert.Equal(t, credentialReadsPerMinute, h.banking.cards.calls("Credentials"))

	ben := principal{kind: session.Person, id: benPerson, personID: benPerson, corporationID: demoCorp}
	h.as(ben).exec(revealCredentials, map[string]any{"id": walCardGID("card-a")}).noErrors(t)
}

const issueCard = `mutation($in: IssueCardInput!) { issueCard(input: $in) {
  id upstreamId status displayName fundingWalletId fundingWallet { id } cardholder { id firstName } corporation { id } embossedName } }`

type issueAnswer struct {
	IssueCard struct {
		ID, UpstreamID, Status, FundingWalletID string
		DisplayName, EmbossedName               *string
		FundingWallet                           struct{ ID string }
		Cardholder                              struct{ ID, FirstName string }
		Corporation                             struct{ ID string }
	}
}

// issueVars issues a card of the demo corporation for Anna from its CARD
// wallet, with fields changed.
func issueVars(fields map[string]any) map[string]any {
	in := map[string]any{"fundingWalletId": walWalletGID(cardWallet), "cardholderId": relay.ID(relay.Person, demoPerson), "expiryMonth": 12, "expiryYear": 2030}
	for k, v := range fields {
		if v == nil {
			delete(in, k)
		} else {
			in[k] = v
		}
	}
	return map[string]any{"in": in}
}

// Each rule of the spec's issue table the gateway can check is
// BAD_USER_INPUT naming the field, before any upstream call.
func TestIssueCardInputRules(t *testing.T) {
	t.Parallel()
	addr := func(edit func(map[string]any)) map[string]any {
		a := map[string]any{"street": "Brivibas 1", "city": "Riga", "postCode": "LV-1010", "country": "LV"}
		edit(a)
		return a
	}
	for _, tc := range []struct {
		name   string
		fields map[string]any
		field  string
	}{
		{"blank wallet", map[string]any{"fundingWalletId": " "}, "input.fundingWalletId"},
		{"blank cardholder", map[string]any{"cardholderId": ""}, "input.cardholderId"},
		{"a plastic card", map[string]any{"type": "PHYSICAL"}, "input.type"},
		{"a Visa card", map[string]any{"brand": "VISA"}, "input.brand"},
		{"another region", map[string]any{"region": "ASIA"}, "input.region"},
		{"another currency", map[string]any{"currency": "USD"}, "input.currency"},
		{"month 0", map[string]any{"expiryMonth": 0}, "input.expiryMonth"},
		{"month 13", map[string]any{"expiryMonth": 13}, "input.expiryMonth"},
		{"year 2018", map[string]any{"expiryYear": 2018}, "input.expiryYear"},
		{"year 10000", map[string]any{"expiryYear": 10_000}, "input.expiryYear"},
		{"blank display name", map[string]any{"displayName": " "}, "input.displayName"},
		{"long display name", map[string]any{"displayName": strings.Repeat("d", 256)}, "input.displayName"},
		{"blank template", map[string]any{"templateId": ""}, "input.templateId"},
		{"cardholder's bad e-mail", map[string]any{"cardholder": map[string]any{"email": "not-an-address"}}, "input.cardholder.email"},
		{"cardholder's long phone", map[string]any{"cardholder": map[string]any{"phone": strings.Repeat("1", 21)}}, "input.cardholder.phone"},
		{"cardholder's blank name", map[string]any{"cardholder": map[string]any{"firstName": ""}}, "input.cardholder.firstName"},
		{"cardholder's long first name", map[string]any{"cardholder": map[string]any{"firstName": strings.Repeat("x", 256)}}, "input.cardholder.firstName"},
		{"cardholder's long last name", map[string]any{"cardholder": map[string]any{"lastName": strings.Repeat("x", 256)}}, "input.cardholder.lastName"},
		{"cardholder's lower-case country", map[string]any{"cardholder": map[string]any{"address": addr(func(a map[string]any) { a["country"] = "lv" })}},
			"input.cardholder.address.country"},
		{"cardholder's long post code", map[string]any{"cardholder": map[string]any{"address": addr(func(a map[string]any) { a["postCode"] = "12345678901" })}},
			"input.cardholder.address.postCode"},
		{"company's blank street", map[string]any{"company": map[string]any{"address": addr(func(a map[string]any) { a["street"] = " " })}},
			"input.company.address.street"},
		{"company's bad e-mail", map[string]any{"company": map[string]any{"email": "@"}}, "input.company.email"},
		{"company's blank name", map[string]any{"company": map[string]any{"name": ""}}, "input.company.name"},
		{"company's long name", map[string]any{"company": map[string]any{"name": strings.Repeat("x", 256)}}, "input.company.name"},
		{"empty key", map[string]any{"idempotencyKey": ""}, "input.idempotencyKey"},
		{"long key", map[string]any{"idempotencyKey": strings.Repeat("k", 256)}, "input.idempotencyKey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			refused(t, h.as(person).exec(issueCard, issueVars(tc.fields)), "BAD_USER_INPUT", tc.field)
			h.walNoCalls(tc.name)
		})
	}
}

// Which corporation a card is issued for: staff name it (and must),
// persons and API clients issue for their own (naming another is
// forbidden), introducers never; refusals cost no upstream call.
func TestIssueCardActsOnOnesOwnCorporation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		who    principal
		fields map[string]any
		want   string
		field  string
	}{
		{"introducer", introducer, nil, "FORBIDDEN", ""},
		{"person naming another corporation", person, map[string]any{"corporationId": walCorpGID(otherCorp), "fundingWalletId": cardWallet}, "FORBIDDEN", ""},
		{"API client naming another corporation", apiClient, map[string]any{"corporationId": otherCorp, "fundingWalletId": cardWallet}, "FORBIDDEN", ""},
		{"staff naming none", staff, nil, "BAD_USER_INPUT", "input.corporationId"},
		{"payments customer", customer, nil, "FORBIDDEN", ""},
		{"a wallet of another corporation", person, map[string]any{"corporationId": walCorpGID(demoCorp),
			"fundingWalletId": relay.ID(relay.Wallet, otherCorp, otherWallet)}, "NOT_FOUND", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			withCards(h)
			e := h.as(tc.who).exec(issueCard, issueVars(tc.fields)).only(t)
			assert.Equal(t, tc.want, e.Code())
			if tc.field != "" {
				assert.Equal(t, tc.field, e.Extensions["field"])
			}
			h.walNoCalls(tc.name)
		})
	}
}

// A card issued: the upstream gets the cardholder and company details from
// the person and the corporation, with the input's overrides; the answer is
// the card as the upstream now shows it, with its edges; the issue is
// announced once with the card as subject.
func TestIssueCard(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withCards(h)
	h.banking.corporations.data.Lock()
	c := h.banking.corporations.find(demoCorp)
	c.AccountID, c.Email, c.Address, c.Country = "acc-demo", "corp@demo.test", "Brivibas 1", "LV"
	h.banking.corporations.data.Unlock()
	var got issueAnswer
	h.as(person).exec(issueCard, issueVars(map[string]any{"displayName": "Travel", "cardholder": map[string]any{"lastName": "Override"},
		"company": map[string]any{"phone": "+37120000000"}})).decode(t, &got)
	card := got.IssueCard
	assert.Equal(t, walCardGID(card.UpstreamID), card.ID)
	assert.Equal(t, "ACTIVE", card.Status)
	assert.Equal(t, "Travel", *card.DisplayName)
	assert.Equal(t, walWalletGID(cardWallet), card.FundingWalletID)
	assert.Equal(t, walWalletGID(cardWallet), card.FundingWallet.ID)
	assert.Equal(t, "Anna", card.Cardholder.FirstName)
	assert.Equal(t, walCorpGID(demoCorp), card.Corporation.ID)
	assert.Equal(t, "Anna Override", *card.EmbossedName)

	require.Len(t, h.banking.cards.issued, 1)
	req := h.banking.cards.issued[0]
	assert.Equal(t, banking.IssueCardDetails{Expiry: banking.CardExpiry{Month: "12", Year: "2030"}, DisplayName: "Travel", FundingSourceID: cardWallet,
		Type: "VIRTUAL", Brand: "MASTERCARD", Region: "EUROPE", Currency: "EUR"}, req.Card)
	assert.Equal(t, banking.IssueCardCompany{ExternalID: "acc-demo", Name: "Demo Corp", Email: "corp@demo.test", Phone: "+37120000000",
		Address: banking.CardAddress{Street: "Brivibas 1", Country: "LV"}}, req.Company)
	assert.Equal(t, banking.IssueCardholder{ExternalID: demoPerson, Type: "PRIMARY", FirstName: "Anna", LastName: "Override", Email: "anna@demo.test"}, req.Cardholder)

	evs := h.walPublished()
	require.Len(t, evs, 1)
	assert.Equal(t, events.CardIssued, evs[0].Name)
	assert.Equal(t, card.ID, evs[0].Payload["subject"])
	assert.Equal(t, demoCorp, evs[0].Payload["corporation_id"])

	// Staff issue for the corporation they name.
	var byStaff issueAnswer
	h.as(staff).exec(issueCard, issueVars(map[string]any{"corporationId": walCorpGID(otherCorp), "fundingWalletId": relay.ID(relay.Wallet, otherCorp, otherWallet),
		"cardholderId": olgaPerson})).decode(t, &byStaff)
	assert.Equal(t, walCorpGID(otherCorp), byStaff.IssueCard.Corporation.ID)
	assert.Equal(t, otherCorp, h.banking.cards.issued[1].Company.ExternalID, "a corporation without an account id is named by its id")
}

// What the gateway cannot tell on its own is the upstream's to refuse: a
// cardholder the viewer cannot see (unknown, or of another corporation) is
// refused on input.cardholderId before the issue; a blocked one or a wallet
// that funds no cards by the upstream, naming its field; nothing is
// announced.
func TestIssueCardRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withCards(h)
	h.as(person)
	refused(t, h.exec(issueCard, issueVars(map[string]any{"cardholderId": "person-ghost"})), "BAD_USER_INPUT", "input.cardholderId")
	assert.Zero(t, h.banking.cards.calls("Issue"))

	// Another corporation's person is not visible to this person, as the
	// upstream scopes persons: refused on input too, before the issue.
	refused(t, h.exec(issueCard, issueVars(map[string]any{"cardholderId": olgaPerson})), "BAD_USER_INPUT", "input.cardholderId")
	assert.Zero(t, h.banking.cards.calls("Issue"))

	h.banking.persons.data.Lock()
	h.banking.persons.find(benPerson).IsBlocked = true
	h.banking.persons.data.Unlock()
	e := h.exec(issueCard, issueVars(map[string]any{"cardholderId": benPerson})).only(t)
	assert.Equal(t, "UPSTREAM_REJECTED", e.Code())
	assert.Equal(t, "cardholder.external_id", e.Upstream()["field"])

	e = h.exec(issueCard, issueVars(map[string]any{"fundingWalletId": demoWalletEUR})).only(t)
	assert.Equal(t, "UPSTREAM_REJECTED", e.Code())
	assert.Equal(t, "card.funding_source_id", e.Upstream()["field"])
	assert.Empty(t, h.walPublished())
	assert.Empty(t, h.banking.cards.issued)
}

// A card issued under a key is issued once; the key with another card is
// refused naming it; a lost answer is OUTCOME_UNKNOWN with or without a
// key (a card carries money), and never a second card for the key.
func TestIssueCardOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withCards(h)
	h.as(person)
	key := map[string]any{"idempotencyKey": "card-1"}
	var first, retry issueAnswer
	h.exec(issueCard, issueVars(key)).decode(t, &first)
	h.exec(issueCard, issueVars(key)).decode(t, &retry)
	assert.Equal(t, first, retry)
	assert.Equal(t, 1, h.banking.cards.calls("Issue"))
	assert.Len(t, h.walPublished(), 1)
	refused(t, h.exec(issueCard, issueVars(map[string]any{"idempotencyKey": "card-1", "expiryYear": 2031})), "BAD_USER_INPUT", "input.idempotencyKey")

	h.banking.cards.failNext("Issue", unavailable("banking"))
	e := h.exec(issueCard, issueVars(nil)).only(t)
	assert.Equal(t, "OUTCOME_UNKNOWN", e.Code(), "a lost card answer without a key")
	h.banking.cards.failNext("Issue", bankingRejection(http.StatusInternalServerError, 0, "", "boom"))
	lost := map[string]any{"idempotencyKey": "card-lost"}
	for range 2 {
		e := h.exec(issueCard, issueVars(lost)).only(t)
		assert.Equal(t, "OUTCOME_UNKNOWN", e.Code())
		assert.Equal(t, "input.idempotencyKey", e.Extensions["field"])
	}
	assert.Equal(t, 3, h.banking.cards.calls("Issue"), "the retry under the lost key sent nothing")
	assert.Len(t, h.walPublished(), 1)
}

const simulate = `mutation($in: SimulateCardTransactionInput!) { simulateCardTransaction(input: $in) {
  __typename
  ... on CardAuthorised { code name amount { amount currency } card { id availableBalance { amount } fundingWallet { balance { amount } } } }
  ... on CardDeclined { cardId code name card { id status } } } }`

type simulateAnswer struct {
	SimulateCardTransaction struct {
		Typename   string `json:"__typename"`
		Code, Name string
		CardID     string
		Amount     *struct {
			Amount   int64
			Currency string
		}
		Card *struct {
			ID            string
			Status        string
			FundingWallet *struct{ Balance struct{ Amount int64 } }
		}
	}
}

func simulateVars(card string, amount int64, key any) map[string]any {
	in := map[string]any{"cardId": walCardGID(card), "amount": amount}
	if key != nil {
		in["idempotencyKey"] = key
	}
	return map[string]any{"in": in}
}

// A simulated transaction is authorised or declined, both results and not
// errors: the answer carries the card (and its funding wallet after the
// debit), the code and its name in the spec's table, UNKNOWN for a code
// the table lacks. An authorisation is announced.
func TestSimulateCardTransaction(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withCards(h)
	h.as(person)
	var ok simulateAnswer
	h.exec(simulate, simulateVars("card-a", 2_500, nil)).decode(t, &ok)
	s := ok.SimulateCardTransaction
	assert.Equal(t, "CardAuthorised", s.Typename)
	assert.Equal(t, "00", s.Code)
	assert.Equal(t, "APPROVED", s.Name)
	assert.Equal(t, int64(2_500), s.Amount.Amount)
	assert.Equal(t, "EUR", s.Amount.Currency)
	require.NotNil(t, s.Card)
	assert.Equal(t, walCardGID("card-a"), s.Card.ID)
	assert.Equal(t, int64(10_000-2_500), s.Card.FundingWallet.Balance.Amount, "the funding wallet after the debit")
	evs := h.walPublished()
	require.Len(t, evs, 1)
	assert.Equal(t, events.CardTransactionSimulated, evs[0].Name)
	assert.Equal(t, walCardGID("card-a"), evs[0].Payload["subject"])
	assert.Equal(t, demoCorp, evs[0].Payload["corporation_id"])
	assert.Equal(t, true, evs[0].Payload["authorised"])

	var poor simulateAnswer
	h.exec(simulate, simulateVars("card-a", 1_000_000, nil)).decode(t, &poor)
	d := poor.SimulateCardTransaction
	assert.Equal(t, "CardDeclined", d.Typename)
	assert.Equal(t, walCardGID("card-a"), d.CardID)
	assert.Equal(t, "51", d.Code)
	assert.Equal(t, "NOT_SUFFICENT_FUNDS", d.Name, "the spec's own spelling")
	assert.Equal(t, "ACTIVE", d.Card.Status)

	h.banking.cards.decline = "X9"
	var odd simulateAnswer
	h.exec(simulate, simulateVars("card-a", 100, nil)).decode(t, &odd)
	assert.Equal(t, "X9", odd.SimulateCardTransaction.Code)
	assert.Equal(t, "UNKNOWN", odd.SimulateCardTransaction.Name)
	assert.Len(t, h.walPublished(), 3, "declines are announced too")
}

// simulateCardTransaction's inputs, keys and errors: bad input names its
// field with no call; under a key a retry never authorises twice nor
// announces again; another corporation's card is NOT_FOUND; a lost answer
// is OUTCOME_UNKNOWN.
func TestSimulateCardTransactionInputsAndKeys(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withCards(h)
	h.as(person)
	for _, tc := range []struct {
		field string
		in    map[string]any
	}{
		{"input.amount", map[string]any{"cardId": "card-a", "amount": 0}},
		// MinorUnits is bounded to what every client reads exactly.
		{"input.amount", map[string]any{"cardId": "card-a", "amount": int64(1) << 62}},
		{"input.currency", map[string]any{"cardId": "card-a", "amount": 100, "currency": "USD"}},
		{"input.cardId", map[string]any{"cardId": " ", "amount": 100}},
	} {
		refused(t, h.exec(simulate, map[string]any{"in": tc.in}), "BAD_USER_INPUT", tc.field)
	}
	assert.Equal(t, "NOT_FOUND", h.exec(simulate, map[string]any{"in": map[string]any{"cardId": walWalletGID(cardWallet), "amount": 1}}).code(t))
	h.walNoCalls("refused simulations")

	var first, retry simulateAnswer
	h.exec(simulate, simulateVars("card-a", 1_000, "sim-1")).decode(t, &first)
	h.exec(simulate, simulateVars("card-a", 1_000, "sim-1")).decode(t, &retry)
	assert.Equal(t, first.SimulateCardTransaction.Code, retry.SimulateCardTransaction.Code)
	assert.Equal(t, 1, h.banking.cards.calls("Simulate"))
	w, _ := h.banking.wallets.find(cardWallet)
	assert.Equal(t, int64(9_000), w.Amount, "authorised once")
	assert.Len(t, h.walPublished(), 1)
	refused(t, h.exec(simulate, simulateVars("card-a", 2_000, "sim-1")), "BAD_USER_INPUT", "input.idempotencyKey")

	assert.Equal(t, "NOT_FOUND", h.exec(simulate, simulateVars("card-o", 100, nil)).code(t), "another corporation's card")

	h.banking.cards.failNext("Simulate", unavailable("banking"))
	e := h.exec(simulate, simulateVars("card-a", 100, nil)).only(t)
	assert.Equal(t, "OUTCOME_UNKNOWN", e.Code())
	assert.Len(t, h.walPublished(), 1)
}

// A simulation the upstream made stays made when the card cannot be read
// back: the answer is its result with card null, as the schema says, and
// it is announced; an error would invite a retry that authorises again.
func TestSimulationStandsWhenTheCardCannotBeReadBack(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withCards(h)
	h.as(person)
	h.banking.cards.failNext("Get", unavailable("banking"))
	var got simulateAnswer
	h.exec(simulate, simulateVars("card-a", 400, nil)).decode(t, &got)
	s := got.SimulateCardTransaction
	assert.Equal(t, "CardAuthorised", s.Typename)
	assert.Equal(t, "00", s.Code)
	assert.Nil(t, s.Card)
	evs := h.walPublished()
	require.Len(t, evs, 1)
	assert.Equal(t, demoCorp, evs[0].Payload["corporation_id"], "a person's card is of her corporation")
	assert.Equal(t, walCardGID("card-a"), evs[0].Payload["subject"])

	h.banking.cards.decline = "05"
	h.banking.cards.failNext("Get", bankingRejection(http.StatusInternalServerError, 0, "", "boom"))
	h.exec(simulate, simulateVars("card-a", 400, nil)).decode(t, &got)
	assert.Equal(t, "CardDeclined", got.SimulateCardTransaction.Typename)
	assert.Equal(t, walCardGID("card-a"), got.SimulateCardTransaction.CardID)
	assert.Nil(t, got.SimulateCardTransaction.Card)
}
