package resolvers

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/banking"
)

const updateLimit = `mutation($in: UpdateLimitInput!) { updateLimit(input: $in) {
  id upstreamId paymentMethod transactionType dailySuccessfulVelocity weeklySuccessfulVelocity
  minimumAmount { amount currency } maximumAmount { amount currency } updatedAt } }`

const deleteLimit = `mutation($in: DeleteLimitInput!) { deleteLimit(input: $in) { id upstreamId paymentMethod maximumAmount { amount currency } } }`

type limitAnswer struct {
	ID, UpstreamID, PaymentMethod, TransactionType string
	DailySuccessfulVelocity                        *int64
	WeeklySuccessfulVelocity                       *int64
	MinimumAmount, MaximumAmount                   *struct {
		Amount   int64
		Currency string
	}
	UpdatedAt *string
}

// withLimit gives the demo corporation (in SEK) a limit of conversions.
func withLimit(h *harness) {
	daily, max := int64(5), int64(900_000)
	h.banking.corporations.data.Lock()
	h.banking.corporations.find(demoCorp).Currency = "SEK"
	h.banking.corporations.data.Unlock()
	h.banking.limits.add(demoCorp, &banking.Limit{ID: "lim-1", PaymentMethod: "internal", TransactionType: "convert",
		LimitSet: banking.LimitSet{DailySuccessfulVelocity: &daily, MaximumAmount: &max}})
}

func limitVars(fields map[string]any, set map[string]any) map[string]any {
	in := map[string]any{"corporationId": walCorpGID(demoCorp), "id": relay.ID(relay.Limit, demoCorp, "lim-1"), "limitSet": set}
	for k, v := range fields {
		in[k] = v
	}
	return map[string]any{"in": in}
}

// Limits are the bank's risk control: only staff change or remove them,
// and anyone else is refused before any upstream call.
func TestOnlyStaffChangeLimits(t *testing.T) {
	t.Parallel()
	for _, who := range []principal{person, apiClient, introducer, customer} {
		h := newHarness(t)
		withLimit(h)
		assert.Equal(t, "FORBIDDEN", h.as(who).exec(updateLimit, limitVars(nil, map[string]any{"dailySuccessfulVelocity": 1})).code(t))
		assert.Equal(t, "FORBIDDEN", h.exec(deleteLimit, map[string]any{"in": map[string]any{"corporationId": walCorpGID(demoCorp), "id": "lim-1"}}).code(t))
		h.walNoCalls(string(who.kind))
	}
}

// Each bad limit input names its field, with no upstream call.
func TestLimitInputRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		fields map[string]any
		set    map[string]any
		field  string
	}{
		{"negative velocity", nil, map[string]any{"weeklySuccessfulVelocity": -1}, "input.limitSet.weeklySuccessfulVelocity"},
		{"negative attempts", nil, map[string]any{"attemptVelocityPerHour": -1}, "input.limitSet.attemptVelocityPerHour"},
		{"negative amount", nil, map[string]any{"monthlyLimitAmount": -100}, "input.limitSet.monthlyLimitAmount"},
		{"minimum over maximum", nil, map[string]any{"minimumAmount": 500, "maximumAmount": 100}, "input.limitSet.minimumAmount"},
		{"blank payment method", map[string]any{"paymentMethod": " "}, map[string]any{}, "input.paymentMethod"},
		{"long transaction type", map[string]any{"transactionType": strings.Repeat("t", 101)}, map[string]any{}, "input.transactionType"},
		{"blank id", map[string]any{"id": " "}, map[string]any{}, "input.id"},
		{"blank corporation", map[string]any{"corporationId": ""}, map[string]any{}, "input.corporationId"},
	} {
		h := newHarness(t)
		refused(t, h.as(staff).exec(updateLimit, limitVars(tc.fields, tc.set)), "BAD_USER_INPUT", tc.field)
		h.walNoCalls(tc.name)
	}
	h := newHarness(t)
	refused(t, h.as(staff).exec(deleteLimit, map[string]any{"in": map[string]any{"corporationId": walCorpGID(demoCorp), "id": ""}}), "BAD_USER_INPUT", "input.id")
	assert.Equal(t, "NOT_FOUND", h.exec(deleteLimit, map[string]any{"in": map[string]any{"corporationId": walCorpGID(demoCorp),
		"id": relay.ID(relay.Limit, otherCorp, "lim-1")}}).code(t), "a limit id of another corporation")
	h.walNoCalls("delete")
}

// updateLimit changes what it is given and keeps the rest; its answer is
// the limit as the upstream now has it, amounts in the corporation's
// currency, and the change is announced with the limit as subject.
// deleteLimit answers the removed limit and announces it.
func TestUpdateAndDeleteALimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withLimit(h)
	h.as(staff)
	var got struct{ UpdateLimit limitAnswer }
	h.exec(updateLimit, limitVars(map[string]any{"transactionType": "convert-out"}, map[string]any{"weeklySuccessfulVelocity": 20, "minimumAmount": 100})).decode(t, &got)
	l := got.UpdateLimit
	assert.Equal(t, relay.ID(relay.Limit, demoCorp, "lim-1"), l.ID)
	assert.Equal(t, "internal", l.PaymentMethod, "not given, kept")
	assert.Equal(t, "convert-out", l.TransactionType)
	assert.Equal(t, int64(5), *l.DailySuccessfulVelocity, "not given, kept")
	assert.Equal(t, int64(20), *l.WeeklySuccessfulVelocity)
	require.NotNil(t, l.MinimumAmount)
	assert.Equal(t, int64(100), l.MinimumAmount.Amount)
	assert.Equal(t, "SEK", l.MinimumAmount.Currency)
	assert.Equal(t, "SEK", l.MaximumAmount.Currency)
	assert.NotNil(t, l.UpdatedAt)

	var del struct{ DeleteLimit limitAnswer }
	h.exec(deleteLimit, map[string]any{"in": map[string]any{"corporationId": demoCorp, "id": "lim-1"}}).decode(t, &del)
	assert.Equal(t, l.ID, del.DeleteLimit.ID)
	assert.Equal(t, int64(900_000), del.DeleteLimit.MaximumAmount.Amount)

	evs := h.walPublished()
	require.Len(t, evs, 2)
	assert.Equal(t, events.LimitUpdated, evs[0].Name)
	assert.Equal(t, events.LimitDeleted, evs[1].Name)
	for _, e := range evs {
		assert.Equal(t, l.ID, e.Payload["subject"])
		assert.Equal(t, demoCorp, e.Payload["corporation_id"])
	}

	e := h.exec(deleteLimit, map[string]any{"in": map[string]any{"corporationId": demoCorp, "id": "lim-1"}}).only(t)
	assert.Equal(t, "NOT_FOUND", e.Code(), "removed twice")
	assert.Len(t, h.walPublished(), 2)
}

// A limit changed upstream stays changed when its corporation cannot be
// read for its currency: the answer falls back to EUR rather than failing.
func TestLimitCurrencyFallsBackToEUR(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withLimit(h)
	h.banking.corporations.failAlways("List", unavailable("banking"))
	var got struct{ UpdateLimit limitAnswer }
	h.as(staff).exec(updateLimit, limitVars(nil, map[string]any{"maximumAmount": 1_000})).decode(t, &got)
	assert.Equal(t, "EUR", got.UpdateLimit.MaximumAmount.Currency)
	assert.Equal(t, int64(1_000), got.UpdateLimit.MaximumAmount.Amount)
}

const requestStatement = `mutation($in: RequestStatementInput!) { requestStatement(input: $in) { url fileName expiresAt } }`

type reportAnswer struct {
	URL, FileName string
	ExpiresAt     time.Time
}

// walOpenLink opens a download link the gateway signed: the upstream report it
// leads to and the session it is for.
func walOpenLink(t *testing.T, h *harness, link string) (reportURL, sessionID string) {
	t.Helper()
	u, err := url.Parse(link)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(u.Path, "/downloads/reports/"), link)
	target, err := h.r.Downloads.Open(strings.TrimPrefix(u.Path, "/downloads/reports/"), u.Query().Get("exp"), u.Query().Get("sig"))
	require.NoError(t, err)
	return target.URL, target.Session
}

// A statement is a download link on the gateway, signed for the session
// that asked: it names the upstream's report without showing it. A person's
// statement is of her own corporation (corporationId is not sent); staff
// and API clients must name one. Dates and time zone reach the upstream
// as given, and name the file.
func TestRequestStatement(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(person)
	var pdf struct{ RequestStatement reportAnswer }
	h.exec(requestStatement, map[string]any{"in": map[string]any{"format": "PDF", "walletIds": []string{walWalletGID(demoWalletEUR)},
		"from": "2025-01-01", "to": "2025-01-31", "timezone": "Europe/Riga", "corporationId": walCorpGID(otherCorp)}}).decode(t, &pdf)
	r := pdf.RequestStatement
	assert.Equal(t, "statement-2025-01-01_2025-01-31.pdf", r.FileName)
	assert.NotContains(t, r.URL, "banking.test", "the upstream's address is sealed in the link")
	assert.True(t, r.ExpiresAt.After(time.Now()))
	reportURL, sid := walOpenLink(t, h, r.URL)
	assert.Equal(t, "https://banking.test/reports/1.pdf", reportURL)
	s, err := h.store.Get(context.Background(), h.token)
	require.NoError(t, err)
	assert.Equal(t, s.ID, sid, "the link is the asking session's")
	require.Len(t, h.banking.reports.asked, 1)
	assert.Equal(t, reportAsked{kind: "pdf", wallets: []string{demoWalletEUR},
		opts: banking.StatementOptions{From: "2025-01-01", To: "2025-01-31", Timezone: "Europe/Riga"}}, h.banking.reports.asked[0],
		"a person's corporationId is not sent")

	h.as(apiClient)
	var csv struct{ RequestStatement reportAnswer }
	h.exec(requestStatement, map[string]any{"in": map[string]any{"format": "CSV", "walletIds": []string{walWalletGID(demoWalletEUR), demoWalletUSD},
		"corporationId": walCorpGID(demoCorp)}}).decode(t, &csv)
	assert.Equal(t, "statement-all-"+time.Now().UTC().Format("2006-01-02")+".csv", csv.RequestStatement.FileName)
	require.Len(t, h.banking.reports.asked, 2)
	assert.Equal(t, reportAsked{kind: "csv", wallets: []string{demoWalletEUR, demoWalletUSD}, opts: banking.StatementOptions{CorporationID: demoCorp}},
		h.banking.reports.asked[1])

	refused(t, h.exec(requestStatement, map[string]any{"in": map[string]any{"format": "CSV", "walletIds": []string{demoWalletEUR}}}), "BAD_USER_INPUT", "input.corporationId")
	assert.Len(t, h.banking.reports.asked, 2)

	// Another corporation's wallet: the upstream's 404, nothing signed.
	h.banking.wallets.add(otherCorp, &bankingWallet{ID: "wallet-other", Currency: "EUR", Type: "real"})
	resp := h.exec(requestStatement, map[string]any{"in": map[string]any{"format": "PDF", "walletIds": []string{"wallet-other"}, "corporationId": demoCorp}})
	assert.Equal(t, "NOT_FOUND", resp.code(t))
	assert.NotContains(t, resp.String(), "/downloads/")
}

// Each bad statement input names its field, with no upstream call.
func TestStatementInputRules(t *testing.T) {
	t.Parallel()
	w := walWalletGID(demoWalletEUR)
	for _, tc := range []struct {
		name  string
		in    map[string]any
		field string
	}{
		{"no wallet", map[string]any{"format": "CSV", "walletIds": []string{}}, "input.walletIds"},
		{"a PDF of two wallets", map[string]any{"format": "PDF", "walletIds": []string{w, demoWalletUSD}}, "input.walletIds"},
		{"a blank wallet", map[string]any{"format": "CSV", "walletIds": []string{w, " "}}, "input.walletIds"},
		{"from after to", map[string]any{"format": "PDF", "walletIds": []string{w}, "from": "2025-02-01", "to": "2025-01-01"}, "input.from"},
		{"no such time zone", map[string]any{"format": "PDF", "walletIds": []string{w}, "timezone": "Mars/Olympus"}, "input.timezone"},
		{"the host's time zone", map[string]any{"format": "PDF", "walletIds": []string{w}, "timezone": "Local"}, "input.timezone"},
	} {
		h := newHarness(t)
		refused(t, h.as(person).exec(requestStatement, map[string]any{"in": tc.in}), "BAD_USER_INPUT", tc.field)
		h.walNoCalls(tc.name)
	}
	h := newHarness(t)
	assert.Equal(t, "NOT_FOUND", h.as(person).exec(requestStatement, map[string]any{"in": map[string]any{"format": "PDF",
		"walletIds": []string{relay.ID(relay.Card, "c")}}}).code(t), "a card id as a wallet")
	assert.Equal(t, "FORBIDDEN", h.as(customer).exec(requestStatement, map[string]any{"in": map[string]any{"format": "PDF", "walletIds": []string{w}}}).code(t))
	h.walNoCalls("refused")
}

const feeReport = `mutation($in: RequestIntroducerFeeReportInput!) { requestIntroducerFeeReport(input: $in) { url fileName } }`

// The introducer fee report is for staff (naming the introducer) and the
// introducer itself (by default its own): persons and API clients are
// refused before any call, and the upstream refuses an introducer asking
// for another.
func TestIntroducerFeeReport(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	period := map[string]any{"from": "2025-01-01", "to": "2025-03-31"}
	for _, who := range []principal{person, apiClient} {
		assert.Equal(t, "FORBIDDEN", h.as(who).exec(feeReport, map[string]any{"in": period}).code(t))
	}
	h.walNoCalls("refused")

	var got struct{ RequestIntroducerFeeReport reportAnswer }
	h.as(introducer).exec(feeReport, map[string]any{"in": map[string]any{"from": "2025-01-01", "to": "2025-03-31",
		"corporationIds": []string{walCorpGID(demoCorp)}}}).decode(t, &got)
	assert.Equal(t, "introducer-fee-2025-01-01_2025-03-31.csv", got.RequestIntroducerFeeReport.FileName)
	reportURL, _ := walOpenLink(t, h, got.RequestIntroducerFeeReport.URL)
	assert.Equal(t, "https://banking.test/reports/1.csv", reportURL)
	require.Len(t, h.banking.reports.asked, 1)
	a := h.banking.reports.asked[0]
	assert.Equal(t, demoIntro, a.intro, "an introducer's report is its own by default")
	assert.Equal(t, []string{demoCorp}, a.corps)
	assert.Equal(t, "2025-01-01", a.from.Format("2006-01-02"))

	assert.Equal(t, "FORBIDDEN", h.exec(feeReport, map[string]any{"in": map[string]any{"introducerId": "intro-2", "from": "2025-01-01", "to": "2025-03-31"}}).code(t))

	h.as(staff)
	refused(t, h.exec(feeReport, map[string]any{"in": period}), "BAD_USER_INPUT", "input.introducerId")
	refused(t, h.exec(feeReport, map[string]any{"in": map[string]any{"introducerId": "intro-2", "from": "2025-04-01", "to": "2025-03-31"}}), "BAD_USER_INPUT", "input.from")
	refused(t, h.exec(feeReport, map[string]any{"in": map[string]any{"introducerId": "intro-2", "from": "2025-01-01", "to": "2025-03-31", "corporationIds": []string{""}}}), "BAD_USER_INPUT", "input.corporationIds")
	assert.Equal(t, 2, h.banking.reports.calls("IntroducerFee"), "no call for bad input")
	h.exec(feeReport, map[string]any{"in": map[string]any{"introducerId": "intro-2", "from": "2025-01-01", "to": "2025-03-31"}}).noErrors(t)
	assert.Equal(t, "intro-2", h.banking.reports.asked[1].intro)
}

// Without a download signer the report is an internal error, logged, its
// cause not shown.
func TestReportWithoutASigner(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.r.Downloads = nil
	e := h.as(person).exec(requestStatement, map[string]any{"in": map[string]any{"format": "PDF", "walletIds": []string{demoWalletEUR}}}).only(t)
	assert.Equal(t, "INTERNAL", e.Code())
	assert.NotContains(t, e.Message, "signer")
	assert.True(t, h.logged("no download signer"))
}
