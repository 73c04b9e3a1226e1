package resolvers

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// Each bad conversion input is BAD_USER_INPUT naming its field, before any
// upstream call and before a key is claimed.
func TestConversionInputRules(t *testing.T) {
	t.Parallel()
	blank := " "
	for _, tc := range []struct {
		name  string
		edit  func(in map[string]any)
		field string
	}{
		{"zero amount", func(in map[string]any) { in["amount"] = 0 }, "input.amount"},
		{"negative amount", func(in map[string]any) { in["amount"] = -5 }, "input.amount"},
		{"an amount past 2^53-1", func(in map[string]any) { in["amount"] = int64(1) << 62 }, "input.amount"},
		{"an amount as a string", func(in map[string]any) { in["amount"] = "1000" }, "input.amount"},
		{"unknown currency", func(in map[string]any) { in["currency"] = "XAU" }, "input.currency"},
		{"lower-case currency", func(in map[string]any) { in["currency"] = "usd" }, "input.currency"},
		{"blank source", func(in map[string]any) { in["sourceWalletId"] = blank }, "input.sourceWalletId"},
		{"blank target", func(in map[string]any) { in["targetWalletId"] = blank }, "input.targetWalletId"},
		{"blank key", func(in map[string]any) { in["idempotencyKey"] = blank }, "input.idempotencyKey"},
		{"long key", func(in map[string]any) { in["idempotencyKey"] = strings.Repeat("k", 256) }, "input.idempotencyKey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			vars := conversionVars(100, "USD", nil)
			tc.edit(vars["in"].(map[string]any))
			refused(t, h.as(person).exec(conversionMutation, vars), "BAD_USER_INPUT", tc.field)
			h.walNoCalls(tc.name)
			assert.Empty(t, h.walPublished())
		})
	}
}

// Who converts: persons only; a payments customer and an anonymous caller
// are refused by the role, an introducer by the resolver, none with an
// upstream call. A wallet id of another type is NOT_FOUND.
func TestWhoConverts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		who  principal
		want string
	}{{introducer, "FORBIDDEN"}, {customer, "FORBIDDEN"}, {anonymous, "UNAUTHENTICATED"}} {
		h := newHarness(t)
		assert.Equal(t, tc.want, h.as(tc.who).exec(conversionMutation, conversionVars(100, "USD", nil)).code(t), "%s", tc.who.kind)
		h.walNoCalls(string(tc.who.kind))
	}
	h := newHarness(t)
	vars := conversionVars(100, "USD", nil)
	vars["in"].(map[string]any)["targetWalletId"] = relay.ID(relay.Card, "card-1")
	assert.Equal(t, "NOT_FOUND", h.as(person).exec(conversionMutation, vars).code(t))
	h.walNoCalls("a card id as the target")
}

// A conversion's answer carries both wallets it changed, read after the
// change, by their ids (a normalized client cache updates both), its
// amounts and equivalents, and it is announced once with the source
// wallet as its subject.
func TestConversionAnswersBothWallets(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var got struct {
		CreateConversion struct {
			Typename               string `json:"__typename"`
			ID, Status             string
			StatusCode             int
			Source, Target, Charge struct {
				Amount   int64
				Currency string
			}
			AmountEquivalents              []struct{ Currency string }
			SourceWalletID, TargetWalletID string
			SourceWallet, TargetWallet     struct {
				ID      string
				Balance struct{ Amount int64 }
			}
			CreatedAt *string
		}
	}
	vars := conversionVars(1_500, "USD", nil)
	vars["in"].(map[string]any)["targetWalletId"] = walWalletGID(demoWalletUSD)
	h.as(person).exec(`mutation($in: CreateConversionInput!) { createConversion(input: $in) { __typename ... on Conversion {
	  id status statusCode source { amount currency } target { amount currency } charge { amount currency }
	  amountEquivalents { currency } sourceWalletId targetWalletId createdAt
	  sourceWallet { id balance { amount } } targetWallet { id balance { amount } } } } }`, vars).decode(t, &got)
	c := got.CreateConversion
	assert.Equal(t, "Conversion", c.Typename)
	assert.Equal(t, "APPROVED", c.Status)
	assert.Equal(t, 0, c.StatusCode)
	assert.Equal(t, int64(1_500), c.Source.Amount)
	assert.Equal(t, "EUR", c.Source.Currency)
	assert.Equal(t, "USD", c.Target.Currency)
	assert.Equal(t, "EUR", c.Charge.Currency, "the charge is in the source currency")
	assert.Len(t, c.AmountEquivalents, 6)
	assert.Equal(t, walWalletGID(demoWalletEUR), c.SourceWalletID)
	assert.Equal(t, walWalletGID(demoWalletUSD), c.TargetWalletID)
	assert.Equal(t, walWalletGID(demoWalletEUR), c.SourceWallet.ID)
	assert.Equal(t, int64(100_000-1_500), c.SourceWallet.Balance.Amount, "the source wallet as it is after the conversion")
	assert.Equal(t, walWalletGID(demoWalletUSD), c.TargetWallet.ID)
	assert.Equal(t, int64(50_000+1_500), c.TargetWallet.Balance.Amount)
	assert.NotNil(t, c.CreatedAt)

	evs := h.walPublished()
	require.Len(t, evs, 1)
	assert.Equal(t, events.ConversionCreated, evs[0].Name)
	assert.Equal(t, walWalletGID(demoWalletEUR), evs[0].Payload["subject"])
	assert.Equal(t, c.ID, evs[0].Payload["transaction_id"])
	assert.Equal(t, "APPROVED", evs[0].Payload["status"])
	assert.Equal(t, string(session.Person), evs[0].Payload["by_kind"])
}

// Every expected refusal of the spec is its typed reason; other refusals
// stay errors with the upstream's code, and none announces anything.
func TestConversionRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for code, reason := range map[int]string{
		banking.CodeInsufficientFunds: "INSUFFICIENT_FUNDS", banking.CodeUnpaidInvoice: "UNPAID_INVOICE",
		banking.CodeCorporationLimitReached: "CORPORATION_LIMIT_REACHED", banking.CodeCorporationVelocityReached: "CORPORATION_VELOCITY_REACHED",
		banking.CodeCorporationAttemptVelocityReached: "CORPORATION_ATTEMPT_VELOCITY_PER_HOUR_REACHED",
		banking.CodeCorporationAmountReached:          "CORPORATION_AMOUNT_REACHED", banking.CodeCorporationAmountBelowMin: "CORPORATION_AMOUNT_BELOW_MIN",
		banking.CodeCorporationAmountAboveMax: "CORPORATION_AMOUNT_ABOVE_MAX",
	} {
		h.banking.transactions.failNext("CreateConversion", bankingRejection(http.StatusBadRequest, code, "", ""))
		var got struct {
			CreateConversion struct {
				Typename     string `json:"__typename"`
				Reason, Name string
				Code         int
				Message      string
			}
		}
		h.as(person).exec(`mutation($in: CreateConversionInput!) { createConversion(input: $in) { __typename ... on ConversionRefused { reason code name message } } }`,
			conversionVars(100, "USD", nil)).decode(t, &got)
		r := got.CreateConversion
		assert.Equal(t, "ConversionRefused", r.Typename, "code %d", code)
		assert.Equal(t, reason, r.Reason)
		assert.Equal(t, code, r.Code)
		assert.NotEmpty(t, r.Name)
		assert.Equal(t, "the conversion was refused", r.Message, "no message upstream: the gateway's own")
	}
	assert.Empty(t, h.walPublished())

	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"not a refusal of the table", bankingRejection(http.StatusBadRequest, banking.CodeConversionNotAllowed, "source.id", "adapter A wallets cannot convert"), "UPSTREAM_REJECTED"},
		{"a table code on a 401", bankingRejection(http.StatusUnauthorized, banking.CodeInsufficientFunds, "", ""), "UNAUTHENTICATED"},
		{"rate limited", bankingRejection(http.StatusTooManyRequests, 0, "", ""), "RATE_LIMITED"},
		{"forbidden", bankingRejection(http.StatusForbidden, 0, "", "not your wallet"), "FORBIDDEN"},
	} {
		h.banking.transactions.failNext("CreateConversion", tc.err)
		e := h.as(person).exec(conversionMutation, conversionVars(100, "USD", nil)).only(t)
		assert.Equal(t, tc.want, e.Code(), tc.name)
	}
	assert.Empty(t, h.walPublished())
	eur, _ := h.banking.wallets.find(demoWalletEUR)
	assert.Equal(t, int64(100_000), eur.Amount, "nothing moved")

	// The upstream's own refusal of another corporation's wallet.
	h.banking.wallets.add(otherCorp, &bankingWallet{ID: "wallet-other", Currency: "EUR", Type: "real", Amount: 1_000})
	h.banking.transactions.failNext("CreateConversion", bankingRejection(http.StatusBadRequest, banking.CodeWalletNotFound, "source.id", "wallet not found"))
	vars := conversionVars(100, "USD", nil)
	vars["in"].(map[string]any)["sourceWalletId"] = "wallet-other"
	e := h.as(person).exec(conversionMutation, vars).only(t)
	assert.Equal(t, "UPSTREAM_REJECTED", e.Code())
	assert.Equal(t, "WALLET_NOT_FOUND", e.Upstream()["name"])
	other, _ := h.banking.wallets.find("wallet-other")
	assert.Equal(t, int64(1_000), other.Amount)
}

// A conversion whose answer was lost after the bank made it: the first
// call is OUTCOME_UNKNOWN (retryable with its key) and moves money once;
// the retry with the key finds that conversion in the wallet's
// transactions and answers it without converting again, announcing it
// once; later retries replay it. Meanwhile the lane is held: another
// conversion of the same movement under another key is refused with
// nothing sent.
func TestLostConversionIsFoundByItsKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(person)
	h.banking.transactions.lose = 1
	key := "lost-1"
	// Look-alikes in the window the lookup reads: a conversion the bank
	// rejected (it moved nothing) and one of another amount. Neither is a
	// candidate: were either taken for one, the lane could not tell which
	// is the key's and the retry would stay unknown.
	now := banking.Timestamp{Time: time.Now().UTC()}
	h.banking.transactions.byWallet[demoWalletEUR] = append(h.banking.transactions.byWallet[demoWalletEUR], []*banking.Transaction{
		{ID: "tx-rejected", Type: "convert", CreatedAt: now, SourceCounterpartyID: demoWalletEUR, TargetCounterpartyID: demoWalletUSD,
			TargetAmount: 700, TargetCurrency: "USD", Status: []byte(`{"code":30}`)},
		{ID: "tx-other", Type: "convert", CreatedAt: now, SourceCounterpartyID: demoWalletEUR, TargetCounterpartyID: demoWalletUSD,
			TargetAmount: 701, TargetCurrency: "USD", Status: []byte(`{"code":0}`)},
		{ID: "tx-old", Type: "convert", CreatedAt: banking.Timestamp{Time: now.Add(-time.Hour)}, SourceCounterpartyID: demoWalletEUR,
			TargetAmount: 700, TargetCurrency: "USD", Status: []byte(`{"code":0}`)},
	}...)

	resp := h.exec(conversionMutation, conversionVars(700, "USD", &key))
	e := resp.only(t)
	require.Equal(t, "OUTCOME_UNKNOWN", e.Code(), resp.String())
	assert.Equal(t, true, e.Extensions["retryable"])
	assert.Equal(t, "input.idempotencyKey", e.Extensions["field"])
	assert.NotEmpty(t, e.Extensions["attemptedAt"])
	assert.Empty(t, h.walPublished(), "nothing known, nothing announced")

	other := "other-key"
	resp = h.exec(conversionMutation, conversionVars(700, "USD", &other))
	e = resp.only(t)
	assert.Equal(t, "RATE_LIMITED", e.Code(), "the same movement waits for the unknown one: %s", resp)
	assert.NotNil(t, e.Extensions["retryAfter"])
	assert.Equal(t, 1, h.banking.transactions.calls("CreateConversion"), "nothing was sent for the other key")

	// A lookup that cannot read the wallet tells nothing: still unknown,
	// still retryable, nothing sent.
	h.banking.transactions.failNext("ListByWallet", unavailable("banking"))
	e = h.exec(conversionMutation, conversionVars(700, "USD", &key)).only(t)
	assert.Equal(t, "OUTCOME_UNKNOWN", e.Code())
	assert.Equal(t, true, e.Extensions["retryable"])

	var found, replay conversionAnswer
	h.exec(conversionMutation, conversionVars(700, "USD", &key)).decode(t, &found)
	assert.Equal(t, "Conversion", found.CreateConversion.Typename)
	assert.Equal(t, "tx-1", found.CreateConversion.ID, "the conversion the lost attempt made")
	assert.Equal(t, 1, h.banking.transactions.calls("CreateConversion"))
	assert.GreaterOrEqual(t, h.banking.transactions.calls("ListByWallet"), 1)
	h.exec(conversionMutation, conversionVars(700, "USD", &key)).decode(t, &replay)
	assert.Equal(t, found, replay)
	eur, _ := h.banking.wallets.find(demoWalletEUR)
	assert.Equal(t, int64(100_000-700), eur.Amount, "money moved once")
	evs := h.walPublished()
	require.Len(t, evs, 1, "announced once, by the call that found it")
	assert.Equal(t, "tx-1", evs[0].Payload["transaction_id"])
}

// Where the upstream lists no wallet transactions (the spec shows none), a
// lost conversion stays OUTCOME_UNKNOWN for good: not retryable, and a
// retry with the key sends nothing. Without a key it is OUTCOME_UNKNOWN
// too, never "unavailable, try again".
func TestLostConversionWithoutALookup(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.banking.specOnly = true
	h.as(person)
	h.banking.transactions.lose = 1
	key := "lost-2"
	for range 2 {
		e := h.exec(conversionMutation, conversionVars(300, "USD", &key)).only(t)
		assert.Equal(t, "OUTCOME_UNKNOWN", e.Code())
		assert.Equal(t, false, e.Extensions["retryable"])
	}
	assert.Equal(t, 1, h.banking.transactions.calls("CreateConversion"))
	assert.Zero(t, h.banking.transactions.calls("ListByWallet"))

	h2 := newHarness(t)
	h2.banking.transactions.failNext("CreateConversion", bankingRejection(http.StatusServiceUnavailable, 0, "", "maintenance"))
	e := h2.as(person).exec(conversionMutation, conversionVars(300, "USD", nil)).only(t)
	assert.Equal(t, "OUTCOME_UNKNOWN", e.Code())
	assert.Equal(t, false, e.Extensions["retryable"])
	assert.Nil(t, e.Extensions["field"], "no key to name")
}
