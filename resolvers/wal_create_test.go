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

const createWallet = `mutation($in: CreateWalletInput!) { createWallet(input: $in) {
  wallets { id upstreamId name currency type adapter purpose corporation { id } requisites { number code type } } } }`

type createWalletAnswer struct {
	CreateWallet struct {
		Wallets []struct {
			ID, UpstreamID, Name, Currency, Type string
			Adapter, Purpose                     *string
			Corporation                          struct{ ID string }
			Requisites                           []struct{ Number, Code, Type string }
		}
	}
}

// walletInput is a createWallet input for the demo corporation, with
// fields added over an adapter C wallet in USD.
func walletInput(fields map[string]any) map[string]any {
	in := map[string]any{"corporationId": walCorpGID(demoCorp), "adapter": "ADAPTER_C", "currencies": []string{"USD"}}
	for k, v := range fields {
		if v == nil {
			delete(in, k)
		} else {
			in[k] = v
		}
	}
	return map[string]any{"in": in}
}

const walValidIBAN = "LV80BANK0000435195001"

// Only staff create wallets: anyone else is refused before any upstream
// call.
func TestOnlyStaffCreateWallets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		who  principal
		want string
	}{{person, "FORBIDDEN"}, {apiClient, "FORBIDDEN"}, {introducer, "FORBIDDEN"}, {customer, "FORBIDDEN"}, {anonymous, "UNAUTHENTICATED"}} {
		h := newHarness(t)
		resp := h.as(tc.who).exec(createWallet, walletInput(nil))
		assert.Equal(t, tc.want, resp.code(t), "%s", tc.who.kind)
		h.walNoCalls(string(tc.who.kind))
		assert.Empty(t, h.walPublished())
	}
}

// Each rule of the spec's create-wallet field list the gateway can check is
// BAD_USER_INPUT naming the field, before any upstream call.
func TestCreateWalletInputRules(t *testing.T) {
	t.Parallel()
	manual := "MANUAL"
	for _, tc := range []struct {
		name   string
		fields map[string]any
		field  string
	}{
		{"blank corporation", map[string]any{"corporationId": " "}, "input.corporationId"},
		{"blank name", map[string]any{"name": "  "}, "input.name"},
		{"long name", map[string]any{"name": strings.Repeat("n", 101)}, "input.name"},
		{"purpose off adapter A", map[string]any{"purpose": "CARD"}, "input.purpose"},
		{"requisites mode off adapter A", map[string]any{"requisitesMode": manual}, "input.requisitesMode"},
		{"sepa on adapter C", map[string]any{"sepa": map[string]any{"iban": walValidIBAN}}, "input.sepa"},
		{"uk local off adapter B", map[string]any{"ukLocal": map[string]any{"accountNumber": "31926819", "sortCode": "601613"}}, "input.ukLocal"},
		{"cross-border off adapter B", map[string]any{"crossBorder": map[string]any{"accountNumber": "12345678", "bic": "SANDGB2L"}}, "input.crossBorder"},
		{"currencies off adapter C", map[string]any{"adapter": "ADAPTER_A"}, "input.currencies"},
		{"no currencies on adapter C", map[string]any{"currencies": []string{}}, "input.currencies"},
		{"currencies left out on adapter C", map[string]any{"currencies": nil}, "input.currencies"},
		{"unknown currency", map[string]any{"currencies": []string{"USD", "XAU"}}, "input.currencies"},
		{"currency twice", map[string]any{"currencies": []string{"USD", "USD"}}, "input.currencies"},
		{"adapter A sepa without manual mode", map[string]any{"adapter": "ADAPTER_A", "currencies": nil, "sepa": map[string]any{"iban": walValidIBAN}}, "input.sepa"},
		{"adapter A sepa with a BIC", map[string]any{"adapter": "ADAPTER_A", "currencies": nil, "requisitesMode": manual,
			"sepa": map[string]any{"iban": walValidIBAN, "bic": "SANDLV22"}}, "input.sepa.bic"},
		{"adapter A sepa with a bad IBAN", map[string]any{"adapter": "ADAPTER_A", "currencies": nil, "requisitesMode": manual,
			"sepa": map[string]any{"iban": "LV00BANK0000435195001"}}, "input.sepa.iban"},
		{"adapter B sepa without a BIC", map[string]any{"adapter": "ADAPTER_B", "currencies": nil, "sepa": map[string]any{"iban": walValidIBAN}}, "input.sepa.bic"},
		{"adapter B sepa with a bad BIC", map[string]any{"adapter": "ADAPTER_B", "currencies": nil, "sepa": map[string]any{"iban": walValidIBAN, "bic": "SAND"}}, "input.sepa.bic"},
		{"uk account of 7 digits", map[string]any{"adapter": "ADAPTER_B", "currencies": nil,
			"ukLocal": map[string]any{"accountNumber": "3192681", "sortCode": "601613"}}, "input.ukLocal.accountNumber"},
		{"uk sort code of letters", map[string]any{"adapter": "ADAPTER_B", "currencies": nil,
			"ukLocal": map[string]any{"accountNumber": "31926819", "sortCode": "60-AB-13"}}, "input.ukLocal.sortCode"},
		{"cross-border without an account", map[string]any{"adapter": "ADAPTER_B", "currencies": nil,
			"crossBorder": map[string]any{"accountNumber": " ", "bic": "SANDGB2L"}}, "input.crossBorder.accountNumber"},
		{"cross-border with a bad BIC", map[string]any{"adapter": "ADAPTER_B", "currencies": nil,
			"crossBorder": map[string]any{"accountNumber": "12345678", "bic": "X"}}, "input.crossBorder.bic"},
		{"empty idempotency key", map[string]any{"idempotencyKey": ""}, "input.idempotencyKey"},
		{"long idempotency key", map[string]any{"idempotencyKey": strings.Repeat("k", 256)}, "input.idempotencyKey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			refused(t, h.as(staff).exec(createWallet, walletInput(tc.fields)), "BAD_USER_INPUT", tc.field)
			h.walNoCalls(tc.name)
			assert.Empty(t, h.walPublished())
		})
	}
}

// Adapter C makes one wallet per currency: the payload holds them all, by
// global ids of the corporation, they are in the corporation's listing
// after, and their creation is announced once, with the first wallet as
// its subject.
func TestCreateWalletOnePerCurrency(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(staff)
	var got createWalletAnswer
	h.exec(createWallet, walletInput(map[string]any{"currencies": []string{"GBP", "SEK"}, "name": " Ops "})).decode(t, &got)
	ws := got.CreateWallet.Wallets
	require.Len(t, ws, 2)
	for i, cur := range []string{"GBP", "SEK"} {
		assert.Equal(t, cur, ws[i].Currency)
		assert.Equal(t, relay.ID(relay.Wallet, demoCorp, ws[i].UpstreamID), ws[i].ID)
		assert.Equal(t, "ADAPTER_C", *ws[i].Adapter)
		assert.Equal(t, "REAL", ws[i].Type)
		assert.Equal(t, "Ops", ws[i].Name, "the name is sent trimmed")
		assert.Equal(t, walCorpGID(demoCorp), ws[i].Corporation.ID)
	}
	require.Len(t, h.banking.wallets.asked, 1)
	assert.Equal(t, banking.WalletCreateRequest{Adapter: "adapter_c", Currencies: []string{"GBP", "SEK"}, Name: "Ops"}, h.banking.wallets.asked[0])

	evs := h.walPublished()
	require.Len(t, evs, 1)
	assert.Equal(t, events.WalletCreated, evs[0].Name)
	assert.Equal(t, ws[0].ID, evs[0].Payload["subject"])
	assert.Equal(t, demoCorp, evs[0].Payload["corporation_id"])
	assert.Equal(t, []any{ws[0].UpstreamID, ws[1].UpstreamID}, evs[0].Payload["wallet_ids"])

	var list struct {
		Corporation struct{ Wallets []struct{ UpstreamID string } }
	}
	h.exec(`query($c: ID!) { corporation(id: $c) { wallets { upstreamId } } }`, map[string]any{"c": walCorpGID(demoCorp)}).decode(t, &list)
	assert.Len(t, list.Corporation.Wallets, 4)
}

// Adapter A takes a manual IBAN as printed (spaces, lower case) and sends it
// normalised; adapter B's sort code is sent without dashes, and the spec's
// wire values are sent for adapter and mode.
func TestCreateWalletSendsTheWireForm(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(staff)
	var a createWalletAnswer
	h.exec(createWallet, walletInput(map[string]any{"adapter": "ADAPTER_A", "currencies": nil, "purpose": "CARD", "requisitesMode": "MANUAL",
		"sepa": map[string]any{"iban": "lv80 bank 0000 4351 9500 1"}})).decode(t, &a)
	require.Len(t, a.CreateWallet.Wallets, 1)
	w := a.CreateWallet.Wallets[0]
	assert.Equal(t, "EUR", w.Currency)
	assert.Equal(t, "CARD", *w.Purpose)
	require.Len(t, w.Requisites, 1)
	assert.Equal(t, walValidIBAN, w.Requisites[0].Number)
	assert.Equal(t, "SEPA", w.Requisites[0].Type)

	var b createWalletAnswer
	h.exec(createWallet, walletInput(map[string]any{"adapter": "ADAPTER_B", "currencies": nil,
		"ukLocal": map[string]any{"accountNumber": " 31926819 ", "sortCode": "60-16-13"}, "crossBorder": map[string]any{"accountNumber": "GB123456", "bic": "sandgb2l"}})).decode(t, &b)
	assert.Equal(t, "GBP", b.CreateWallet.Wallets[0].Currency)

	asked := h.banking.wallets.asked
	require.Len(t, asked, 2)
	assert.Equal(t, banking.WalletCreateRequest{Adapter: "adapter_a", ManualOrAutomatic: "manual", Purpose: "CARD",
		SEPA: &banking.RequisitesInput{Number: walValidIBAN}}, asked[0])
	assert.Equal(t, banking.WalletCreateRequest{Adapter: "adapter_b", UKLocal: &banking.RequisitesInput{Number: "31926819", Code: "601613"},
		CrossBorder: &banking.RequisitesInput{Number: "GB123456", Code: "SANDGB2L"}}, asked[1])
}

// A wallet created under an idempotency key is created once: the retry
// answers the same wallets without an upstream call or a second
// announcement, the key with another request is refused naming it, and
// another principal's same key is its own.
func TestCreateWalletWithAKeyCreatesOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(staff)
	key := map[string]any{"idempotencyKey": "w-1"}
	var first, retry createWalletAnswer
	h.exec(createWallet, walletInput(key)).decode(t, &first)
	h.exec(createWallet, walletInput(key)).decode(t, &retry)
	assert.Equal(t, first, retry)
	assert.Equal(t, 1, h.banking.wallets.calls("Create"))
	assert.Len(t, h.walPublished(), 1, "a replay is not announced again")

	refused(t, h.exec(createWallet, walletInput(map[string]any{"idempotencyKey": "w-1", "currencies": []string{"NOK"}})), "BAD_USER_INPUT", "input.idempotencyKey")
	assert.Equal(t, 1, h.banking.wallets.calls("Create"))

	var other createWalletAnswer
	h.as(principal{kind: session.Staff, id: "staff-2"}).exec(createWallet, walletInput(key)).decode(t, &other)
	assert.NotEqual(t, first.CreateWallet.Wallets[0].UpstreamID, other.CreateWallet.Wallets[0].UpstreamID)
	assert.Equal(t, 2, h.banking.wallets.calls("Create"))
}

// A lost answer: without a key the transport's error stands (nothing was
// promised); with one it is OUTCOME_UNKNOWN, and a retry with the key never
// creates a second wallet (the upstream keeps no reference to find the
// first by). A refusal is UPSTREAM_REJECTED with the upstream's field.
func TestCreateWalletErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(staff)
	h.banking.wallets.failNext("Create", unavailable("banking"))
	assert.Equal(t, "UPSTREAM_UNAVAILABLE", h.exec(createWallet, walletInput(nil)).code(t))

	h.banking.wallets.failNext("Create", bankingRejection(http.StatusBadGateway, 0, "", "bad gateway"))
	resp := h.exec(createWallet, walletInput(map[string]any{"idempotencyKey": "lost"}))
	e := resp.only(t)
	assert.Equal(t, "OUTCOME_UNKNOWN", e.Code(), resp.String())
	assert.Equal(t, "input.idempotencyKey", e.Extensions["field"])
	assert.Equal(t, false, e.Extensions["retryable"], "no retry with the key can tell")
	resp = h.exec(createWallet, walletInput(map[string]any{"idempotencyKey": "lost"}))
	assert.Equal(t, "OUTCOME_UNKNOWN", resp.code(t))
	assert.Equal(t, 2, h.banking.wallets.calls("Create"), "the retry sent nothing")

	h.banking.wallets.failNext("Create", bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "currencies", "currencies holds USD, EUR, GBP, SEK, DKK or NOK"))
	e = h.exec(createWallet, walletInput(nil)).only(t)
	assert.Equal(t, "UPSTREAM_REJECTED", e.Code())
	assert.Equal(t, "currencies", e.Upstream()["field"])
	assert.Equal(t, float64(banking.CodeInvalidValue), e.Upstream()["code"])

	e = h.exec(createWallet, map[string]any{"in": map[string]any{"corporationId": "corp-none", "adapter": "ADAPTER_C", "currencies": []string{"USD"}}}).only(t)
	assert.Equal(t, "NOT_FOUND", e.Code(), "a corporation the upstream does not have")
	assert.Empty(t, h.walPublished(), "nothing was created, nothing announced")
}

const createRequisites = `mutation($in: CreateWalletRequisitesInput!) { createWalletRequisites(input: $in) { id upstreamId number code type } }`
const attachRequisites = `mutation($in: AttachWalletRequisitesInput!) { attachWalletRequisites(input: $in) { id upstreamId number code type } }`
const deleteRequisites = `mutation($in: DeleteWalletRequisitesInput!) { deleteWalletRequisites(input: $in) { id } }`

type requisitesAnswer []struct{ ID, UpstreamID, Number, Code, Type string }

// Requisites are created (unattached) and attached for adapter A and B by
// the rules of mode and sepa, each bad input naming its field with no
// upstream call.
func TestRequisitesInputRules(t *testing.T) {
	t.Parallel()
	sepa := map[string]any{"iban": walValidIBAN, "bic": "SANDLV22"}
	for _, tc := range []struct {
		name, query string
		in          map[string]any
		field       string
	}{
		{"create: adapter C", createRequisites, map[string]any{"adapter": "ADAPTER_C"}, "input.adapter"},
		{"create: blank corporation", createRequisites, map[string]any{"corporationId": "", "adapter": "ADAPTER_A"}, "input.corporationId"},
		{"create: manual without sepa", createRequisites, map[string]any{"adapter": "ADAPTER_A", "mode": "MANUAL"}, "input.sepa"},
		{"create: automatic with sepa", createRequisites, map[string]any{"adapter": "ADAPTER_A", "sepa": sepa}, "input.sepa"},
		{"create: manual without a BIC", createRequisites, map[string]any{"adapter": "ADAPTER_B", "mode": "MANUAL", "sepa": map[string]any{"iban": walValidIBAN}}, "input.sepa.bic"},
		{"create: manual with a bad IBAN", createRequisites, map[string]any{"adapter": "ADAPTER_B", "mode": "MANUAL",
			"sepa": map[string]any{"iban": "LV80 BANK", "bic": "SANDLV22"}}, "input.sepa.iban"},
		{"create: empty key", createRequisites, map[string]any{"adapter": "ADAPTER_A", "idempotencyKey": " "}, "input.idempotencyKey"},
		{"attach: blank wallet", attachRequisites, map[string]any{"walletId": " "}, "input.walletId"},
		{"attach: manual without sepa", attachRequisites, map[string]any{"walletId": demoWalletEUR, "mode": "MANUAL"}, "input.sepa"},
		{"attach: bad BIC", attachRequisites, map[string]any{"walletId": demoWalletEUR, "mode": "MANUAL", "sepa": map[string]any{"iban": walValidIBAN, "bic": "12"}}, "input.sepa.bic"},
		{"delete: blank id", deleteRequisites, map[string]any{"id": ""}, "input.id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := map[string]any{"corporationId": walCorpGID(demoCorp)}
			for k, v := range tc.in {
				in[k] = v
			}
			h := newHarness(t)
			refused(t, h.as(staff).exec(tc.query, map[string]any{"in": in}), "BAD_USER_INPUT", tc.field)
			h.walNoCalls(tc.name)
		})
	}
}

// Requisites made, attached and deleted: each answer carries the records
// by their global ids; a manual IBAN is sent normalised, automatic ones
// are the bank's; an attached record shows under its wallet, and a deleted
// one leaves it.
func TestRequisitesLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.banking.wallets.add(demoCorp, &bankingWallet{ID: "wallet-a", Name: "A", Currency: "EUR", Type: "real", Adapter: "adapter_a"})
	h.as(person)

	var made struct{ CreateWalletRequisites requisitesAnswer }
	h.exec(createRequisites, map[string]any{"in": map[string]any{"corporationId": walCorpGID(demoCorp), "adapter": "ADAPTER_B", "mode": "MANUAL",
		"sepa": map[string]any{"iban": "lv80bank0000435195001", "bic": "sandlv22"}}}).decode(t, &made)
	require.Len(t, made.CreateWalletRequisites, 1)
	q := made.CreateWalletRequisites[0]
	assert.Equal(t, relay.ID(relay.WalletRequisites, demoCorp, q.UpstreamID), q.ID)
	assert.Equal(t, walValidIBAN, q.Number)
	assert.Equal(t, "SANDLV22", q.Code)
	assert.Equal(t, "SEPA", q.Type)

	var attached struct{ AttachWalletRequisites requisitesAnswer }
	h.exec(attachRequisites, map[string]any{"in": map[string]any{"corporationId": walCorpGID(demoCorp), "walletId": walWalletGID("wallet-a")}}).decode(t, &attached)
	require.Len(t, attached.AttachWalletRequisites, 1)
	auto := attached.AttachWalletRequisites[0]
	assert.True(t, ibanChecksumOK(auto.Number), "the bank's IBAN %s", auto.Number)

	var w struct {
		Corporation struct {
			Wallet struct{ Requisites []struct{ ID string } }
		}
	}
	walletReqs := `query($c: ID!, $w: ID!) { corporation(id: $c) { wallet(id: $w) { requisites { id } } } }`
	vars := map[string]any{"c": walCorpGID(demoCorp), "w": walWalletGID("wallet-a")}
	h.exec(walletReqs, vars).decode(t, &w)
	require.Len(t, w.Corporation.Wallet.Requisites, 1)
	assert.Equal(t, auto.ID, w.Corporation.Wallet.Requisites[0].ID)

	var del struct{ DeleteWalletRequisites struct{ ID string } }
	h.exec(deleteRequisites, map[string]any{"in": map[string]any{"corporationId": walCorpGID(demoCorp), "id": auto.ID}}).decode(t, &del)
	assert.Equal(t, auto.ID, del.DeleteWalletRequisites.ID)
	h.exec(walletReqs, vars).decode(t, &w)
	assert.Empty(t, w.Corporation.Wallet.Requisites)

	e := h.exec(deleteRequisites, map[string]any{"in": map[string]any{"corporationId": walCorpGID(demoCorp), "id": auto.ID}}).only(t)
	assert.Equal(t, "NOT_FOUND", e.Code(), "deleted twice")

	// The upstream's refusal of a wallet that is not adapter A.
	e = h.exec(attachRequisites, map[string]any{"in": map[string]any{"corporationId": walCorpGID(demoCorp), "walletId": walWalletGID(demoWalletUSD)}}).only(t)
	assert.Equal(t, "UPSTREAM_REJECTED", e.Code())
	assert.Equal(t, "wallet_id", e.Upstream()["field"])
}

// Requisites under a key are made once per principal.
func TestRequisitesWithAKeyAreMadeOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.banking.wallets.add(demoCorp, &bankingWallet{ID: "wallet-a", Name: "A", Currency: "EUR", Type: "real", Adapter: "adapter_a"})
	h.as(apiClient)
	create := map[string]any{"in": map[string]any{"corporationId": walCorpGID(demoCorp), "adapter": "ADAPTER_A", "idempotencyKey": "rq"}}
	attach := map[string]any{"in": map[string]any{"corporationId": walCorpGID(demoCorp), "walletId": walWalletGID("wallet-a"), "idempotencyKey": "rq"}}
	var a1, a2 struct{ CreateWalletRequisites requisitesAnswer }
	h.exec(createRequisites, create).decode(t, &a1)
	h.exec(createRequisites, create).decode(t, &a2)
	assert.Equal(t, a1, a2)
	var b1, b2 struct{ AttachWalletRequisites requisitesAnswer }
	h.exec(attachRequisites, attach).decode(t, &b1)
	h.exec(attachRequisites, attach).decode(t, &b2)
	assert.Equal(t, b1, b2)
	assert.Equal(t, 1, h.banking.requisites.calls("Create"))
	assert.Equal(t, 1, h.banking.requisites.calls("Attach"), "a key of create and one of attach are apart")
}

// A principal acts on its own corporation's requisites only: naming another
// corporation is FORBIDDEN and a requisites id of another corporation under
// one's own is NOT_FOUND, both before any call, nothing of theirs shown.
func TestRequisitesOfAnotherCorporation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.banking.requisites.add(otherCorp, &banking.Requisites{ID: "rq-other", Number: walValidIBAN, Type: "sepa"})
	h.as(person)
	for _, tc := range []struct {
		query string
		in    map[string]any
	}{
		{createRequisites, map[string]any{"corporationId": walCorpGID(otherCorp), "adapter": "ADAPTER_A"}},
		{deleteRequisites, map[string]any{"corporationId": walCorpGID(otherCorp), "id": relay.ID(relay.WalletRequisites, otherCorp, "rq-other")}},
	} {
		before := h.banking.total()
		resp := h.exec(tc.query, map[string]any{"in": tc.in})
		assert.Equal(t, "FORBIDDEN", resp.code(t))
		assert.NotContains(t, resp.String(), walValidIBAN)
		assert.Equal(t, before, h.banking.total(), "another corporation is refused before any call")
	}
	h.banking.requisites.data.Lock()
	assert.Len(t, h.banking.requisites.byCorp[otherCorp], 1, "their requisites stay")
	h.banking.requisites.data.Unlock()

	before := h.banking.total()
	resp := h.exec(deleteRequisites, map[string]any{"in": map[string]any{"corporationId": walCorpGID(demoCorp), "id": relay.ID(relay.WalletRequisites, otherCorp, "rq-other")}})
	assert.Equal(t, "NOT_FOUND", resp.code(t))
	assert.Equal(t, before, h.banking.total(), "a mismatched id is refused before any call")
}
