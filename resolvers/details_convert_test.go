package resolvers

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/banking"
)

func TestActorKinds(t *testing.T) {
	assert.Nil(t, toActor(nil))
	assert.Nil(t, toActor(&banking.Actor{}), "an empty created_by is no actor")
	assert.Equal(t, &model.Actor{UpstreamID: "s1", Kind: model.ActorKindStaff, FullName: "Sandra"}, toActor(&banking.Actor{ID: "s1", Type: "staff", FullName: "Sandra"}))
	assert.Equal(t, model.ActorKindPerson, toActor(&banking.Actor{ID: "p1", Type: "Person"}).Kind)
	assert.Equal(t, model.ActorKindOther, toActor(&banking.Actor{ID: "x", Type: "introducer"}).Kind)
}

// TestWalletTransactionMapping: direction is relative to the listed
// wallet, an incoming transfer has no source, the error code is read from
// the status object, and the back-office fields are kept for staff only.
func TestWalletTransactionMapping(t *testing.T) {
	rate, score := 0.92, 87.0
	tx := &banking.Transaction{ID: "t1", Type: "convert", SourceAmount: 10854, SourceCurrency: "USD", TargetAmount: 10000,
		TargetCurrency: "EUR", ChargeUSD: 54, ChargeExchangeRate: &rate, Score: score, ScoreRangeID: "low",
		SourceCounterpartyID: "w-usd", TargetCounterpartyID: "w-eur",
		Status: json.RawMessage(`{"code":30,"name":"REJECTED","error_code":-117}`)}
	out := toWalletTransaction(tx, "c1", "w-usd", false)
	assert.Equal(t, model.TransactionDirectionOutgoing, out.Direction)
	assert.Equal(t, model.TransactionStatusRejected, out.Status)
	require.NotNil(t, out.ErrorCode)
	assert.Equal(t, int64(-117), *out.ErrorCode)
	assert.Equal(t, "CORPORATION_AMOUNT_REACHED", *out.ErrorName)
	assert.Equal(t, &model.Money{Amount: 54, Currency: "USD"}, out.Charge)
	assert.Equal(t, relay.ID(relay.Wallet, "c1", "w-eur"), *out.TargetWalletID)
	assert.Nil(t, out.Score)
	assert.Nil(t, out.ScoreRangeID)
	assert.Nil(t, out.ChargeExchangeRate)

	staff := toWalletTransaction(tx, "c1", "w-eur", true)
	assert.Equal(t, model.TransactionDirectionIncoming, staff.Direction)
	require.NotNil(t, staff.Score)
	assert.Equal(t, score, *staff.Score)
	assert.Equal(t, "low", *staff.ScoreRangeID)
	assert.Equal(t, &rate, staff.ChargeExchangeRate)

	in := toWalletTransaction(&banking.Transaction{ID: "t2", Type: "transfer-incoming", TargetAmount: 500, TargetCurrency: "EUR",
		TargetCounterpartyID: "w-eur", Status: json.RawMessage(`0`)}, "c1", "w-eur", false)
	assert.Nil(t, in.Source)
	assert.Nil(t, in.SourceWalletID)
	assert.Equal(t, model.TransactionStatusApproved, in.Status)
	assert.Equal(t, model.TransactionDirectionIncoming, in.Direction)
	assert.Len(t, in.AmountEquivalents, 6)
}

func TestWalletTransactionsNotOfferedIsTyped(t *testing.T) {
	e := errWalletTransactionsNotOffered(nil)
	assert.Equal(t, "UPSTREAM_UNAVAILABLE", string(e.Code))
	assert.Equal(t, reasonNotOffered, e.Extensions["reason"])
}
