package banking

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreateConversionBodyAndStatus(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) {
		writeJSON(w, 200, map[string]any{"id": "t1", "status": map[string]any{"code": 40, "name": "PENDING"},
			"source_amount": 10854, "source_currency": "USD", "target_amount": 10000, "target_currency": "EUR",
			"amount_eur": 10000, "charge_usd": 54, "type": "convert"})
	})
	tx, err := c.Transactions.CreateConversion(t.Context(), &ConversionRequest{Amount: 10000, Currency: "EUR", SourceID: "w1"})
	require.NoError(t, err)
	got := f.last(t)
	assert.Equal(t, "POST /banking/v2/transactions", got.Method+" "+got.Path)
	assert.JSONEq(t, `{"amount":10000,"currency":"EUR","source":{"id":"w1"},"type":"convert"}`, string(got.Raw))
	code, ok := tx.StatusCode()
	assert.True(t, ok)
	assert.Equal(t, TxPending, code)
	assert.Equal(t, "PENDING", TransactionStatusName(code))
	assert.Equal(t, int64(54), tx.ChargeUSD)

	_, err = c.Transactions.CreateConversion(t.Context(), &ConversionRequest{Amount: 1, Currency: "USD", SourceID: "w1", TargetID: "w2"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"amount":1,"currency":"USD","source":{"id":"w1"},"target":{"id":"w2"},"type":"convert"}`, string(f.last(t).Raw))

	bare := Transaction{Status: []byte(`30`)}
	code, ok = bare.StatusCode()
	assert.True(t, ok && code == TxRejected, "a bare number is read too")
}

func TestLimitCodesHaveTheSpecNames(t *testing.T) {
	for code, name := range map[int]string{-114: "CORPORATION_LIMIT_REACHED", -115: "CORPORATION_VELOCITY_REACHED",
		-116: "CORPORATION_ATTEMPT_VELOCITY_PER_HOUR_REACHED", -117: "CORPORATION_AMOUNT_REACHED",
		-118: "CORPORATION_AMOUNT_BELOW_MIN", -119: "CORPORATION_AMOUNT_ABOVE_MAX", 5120: "INSUFFICIENT_FUNDS",
		20006: "UNPAID_INVOICE"} {
		assert.Equal(t, name, CodeName(code), "code %d", code)
	}
	assert.True(t, IsLimitCode(-114) && IsLimitCode(-119) && !IsLimitCode(-100) && !IsLimitCode(-120))
}

func TestLimitUpdateIsCamelCaseAndSparse(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) {
		writeJSON(w, 200, map[string]any{"id": "l1", "paymentMethod": "internal", "transactionType": "convert",
			"limitSet": map[string]any{"_id": "s1", "maximumAmount": 900, "minimumAmount": nil}})
	})
	max := int64(900)
	l, err := c.Limits.Update(t.Context(), "c1", "l1", &LimitUpdate{LimitSet: &LimitSetUpdate{MaximumAmount: &max}})
	require.NoError(t, err)
	got := f.last(t)
	assert.Equal(t, "PUT /banking/v2/corporations/c1/limits/l1", got.Method+" "+got.Path)
	assert.JSONEq(t, `{"id":"l1","corporationId":"c1","limitSet":{"maximumAmount":900}}`, string(got.Raw))
	require.NotNil(t, l.LimitSet.MaximumAmount)
	assert.Equal(t, int64(900), *l.LimitSet.MaximumAmount)
	assert.Nil(t, l.LimitSet.MinimumAmount)
}

func TestWalletCreateReadsOneOrMany(t *testing.T) {
	many := false
	_, c := newFake(t, func(w http.ResponseWriter, s seen) {
		if many {
			writeJSON(w, 200, []any{map[string]any{"id": "a"}, map[string]any{"id": "b"}})
			return
		}
		writeJSON(w, 200, map[string]any{"id": "a"})
	})
	list, err := c.Wallets.Create(t.Context(), "c1", &WalletCreateRequest{Adapter: AdapterA})
	require.NoError(t, err)
	assert.Len(t, list, 1)
	many = true
	list, err = c.Wallets.Create(t.Context(), "c1", &WalletCreateRequest{Adapter: AdapterC, Currencies: []string{"SEK", "NOK"}})
	require.NoError(t, err)
	assert.Len(t, list, 2)
}

func TestReportsQueryAndOpenReportStaysOnTheUpstream(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) {
		writeJSON(w, 200, map[string]any{"report_path": "http://elsewhere.example/file"})
	})
	p, err := c.Reports.StatementCSV(t.Context(), []string{"w1", "w2"}, &StatementOptions{From: "2024-01-01", To: "2024-01-31", Timezone: "Europe/Riga", CorporationID: "c1"})
	require.NoError(t, err)
	got := f.last(t)
	assert.Equal(t, "/banking/v2/reports/statement/csv", got.Path)
	assert.Equal(t, []string{"w1", "w2"}, got.Query["wallets[]"])
	assert.Equal(t, "Europe/Riga", got.Query.Get("timezone"))
	assert.Equal(t, "c1", got.Query.Get("corporationId"))
	_, err = c.Reports.IntroducerFee(t.Context(), "i1", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC), nil)
	require.NoError(t, err)
	assert.Equal(t, "2024-01-31", f.last(t).Query.Get("to"))

	_, err = c.OpenReport(t.Context(), p)
	require.Error(t, err, "a report path on another host is never fetched")
	assert.False(t, errors.Is(err, ErrUnavailable))
}
