package resolvers

import (
	"testing"

	"github.com/fingraph/fingraph/relay"
)

// conversionMutation converts into the demo corporation's USD wallet.
const conversionMutation = `mutation($in: CreateConversionInput!) {
  createConversion(input: $in) {
    __typename
    ... on Conversion { id status target { amount currency } sourceWalletId }
    ... on ConversionRefused { reason code name }
  }
}`

// conversionVars moves amount from the demo EUR wallet into currency,
// under key when it is not nil.
func conversionVars(amount int64, currency string, key *string) map[string]any {
	in := map[string]any{"sourceWalletId": relay.ID(relay.Wallet, demoCorp, demoWalletEUR), "amount": amount, "currency": currency}
	if key != nil {
		in["idempotencyKey"] = *key
	}
	return map[string]any{"in": in}
}

type conversionAnswer struct {
	CreateConversion struct {
		Typename string `json:"__typename"`
		ID       string
		Status   string
		Target   struct {
			Amount   int64
			Currency string
		}
		SourceWalletID string
	} `json:"createConversion"`
}

// A conversion retried with its idempotency key moves money once: the
// retry answers the first conversion, the upstream is asked once, the
// wallet is debited once and the change is announced once. The same key
// with another amount is refused, naming the key, and moves nothing.
func TestConversionWithAKeyMovesMoneyOnce(t *testing.T) {
	h := newHarness(t)
	h.as(person)
	key := "conv-1"

	var first, retry conversionAnswer
	h.exec(conversionMutation, conversionVars(1_500, "USD", &key)).decode(t, &first)
	h.exec(conversionMutation, conversionVars(1_500, "USD", &key)).decode(t, &retry)
	if c := first.CreateConversion; c.Typename != "Conversion" || c.ID == "" || c.Status != "APPROVED" || c.Target.Amount != 1_500 || c.Target.Currency != "USD" {
		t.Fatalf("first call: %+v, want an approved Conversion of 1500 USD", c)
	}
	if retry.CreateConversion != first.CreateConversion {
		t.Fatalf("the retry answered %+v, want the first conversion %+v", retry.CreateConversion, first.CreateConversion)
	}
	if want := relay.ID(relay.Wallet, demoCorp, demoWalletEUR); first.CreateConversion.SourceWalletID != want {
		t.Fatalf("sourceWalletId %s, want the EUR wallet's global id", first.CreateConversion.SourceWalletID)
	}
	if n := h.banking.transactions.calls("CreateConversion"); n != 1 {
		t.Fatalf("the upstream was asked to convert %d times, want once", n)
	}
	if eur, _ := h.banking.wallets.find(demoWalletEUR); eur.Amount != 100_000-1_500 {
		t.Fatalf("the EUR wallet holds %d, want one debit of 1500 from 100000", eur.Amount)
	}
	if got := h.events.names(); len(got) != 1 {
		t.Fatalf("announced %v, want the conversion once", got)
	}

	resp := h.exec(conversionMutation, conversionVars(2_000, "USD", &key))
	e := resp.only(t)
	if e.Code() != "BAD_USER_INPUT" || e.Extensions["field"] != "input.idempotencyKey" {
		t.Fatalf("the key reused for another amount: %s, want BAD_USER_INPUT on input.idempotencyKey", resp)
	}
	if n := h.banking.transactions.calls("CreateConversion"); n != 1 {
		t.Fatalf("a refused key still converted: %d calls", n)
	}
}

// Keys are per principal: another person's conversion with the same key is
// its own.
func TestIdempotencyKeysArePerPrincipal(t *testing.T) {
	h := newHarness(t)
	h.banking.persons.add(demoCorp, &bankingPerson{ID: "person-ben", FirstName: "Ben"})
	key := "same-key"
	var anna, ben conversionAnswer
	h.as(person).exec(conversionMutation, conversionVars(100, "USD", &key)).decode(t, &anna)
	h.as(principal{kind: person.kind, id: "person-ben", personID: "person-ben", corporationID: demoCorp}).
		exec(conversionMutation, conversionVars(100, "USD", &key)).decode(t, &ben)
	if anna.CreateConversion.ID == ben.CreateConversion.ID {
		t.Fatalf("two persons' conversions under one key were answered as one: %s", anna.CreateConversion.ID)
	}
	if n := h.banking.transactions.calls("CreateConversion"); n != 2 {
		t.Fatalf("%d conversions made, want 2", n)
	}
}

// Only persons convert: staff and API clients are refused before any
// upstream call.
func TestOnlyPersonsConvert(t *testing.T) {
	for _, who := range []principal{staff, apiClient} {
		h := newHarness(t)
		if got := h.as(who).exec(conversionMutation, conversionVars(100, "USD", nil)).code(t); got != "FORBIDDEN" {
			t.Fatalf("%s: %s, want FORBIDDEN", who.kind, got)
		}
		if h.banking.total() != 0 {
			t.Fatalf("%s: a refused conversion called the upstream", who.kind)
		}
	}
}
