package resolvers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/idempotency"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// convert carries out a conversion through the idempotency mechanism, keyed
// or not. A conversion carries no client reference upstream (the spec's
// POST /transactions takes none), so a record found by its fields is the
// key's only when nothing else could have made it: every conversion of
// one shape goes through one lane (conversionLane), and one whose outcome
// is unknown holds it until it has settled (see docs/money.md). Records
// answered to a key or made without one are never another key's, and a
// lookup reads only records made since the key's attempt began.
//
// fresh is false when the conversion is a replay of one an earlier call with
// the key answered (and announced).
func (r *Resolver) convert(ctx context.Context, key *string, req *banking.ConversionRequest) (t *banking.Transaction, fresh bool, err error) {
	corpID := ""
	if s := session.From(ctx); s != nil {
		corpID = s.CorporationID
	}
	in, err := r.intent(ctx, "conversion", key, conversionFingerprint(req))
	if err != nil {
		return nil, false, err
	}
	in.Records = recordsTransaction
	in.Lane = conversionLane(corpID, req)
	in.Send = func(ctx context.Context, _ *idempotency.Attempt) (idempotency.Attempt, error) {
		var err error
		if t, err = r.Banking.Transactions.CreateConversion(ctx, req); err != nil {
			return idempotency.Attempt{}, err
		}
		return succeeded(t.ID, t)
	}
	if r.Banking.Offers(banking.WalletTransactionListing) {
		// Without a transaction listing (the spec shows none, nor does
		// the strict sandbox) a lost conversion stays OUTCOME_UNKNOWN for
		// good.
		in.Find = func(ctx context.Context, _ idempotency.Attempt, from, to time.Time) ([]idempotency.Candidate, error) {
			return r.findConversion(ctx, corpID, req, from, to)
		}
	}
	o, err := r.Attempts.Run(ctx, in)
	switch {
	case err != nil:
		return nil, false, moneyError(err)
	case t != nil:
		return t, true, nil
	}
	// A replay, or the conversion a lost attempt made, found now (which
	// nobody has announced yet).
	found, err := replayed[banking.Transaction](o)
	if err != nil {
		return nil, false, err
	}
	return found, !o.Replayed, nil
}

// conversionLane is the lane of a conversion: the movement as the bank
// sees it, whatever the input spelled. That is the source wallet, the
// currency and amount received, and the target the bank resolves. A
// request that names no target gets the corporation's wallet in the
// currency, by a rule the spec does not show, so the lane leaves the
// target out: a conversion naming none and one naming the wallet the bank
// would pick are the same movement and take the same lane. (Two
// conversions of one amount from one wallet to two wallets of the same
// currency wait for each other; nothing else does.)
func conversionLane(corpID string, req *banking.ConversionRequest) string {
	return fmt.Sprintf("conversion|%s|%s|%s|%d", corpID, req.SourceID, req.Currency, req.Amount)
}

// conversionLookupPages bounds the pages of a wallet's transactions read to
// find one conversion: past them, the gateway cannot tell.
const conversionLookupPages = 5

var errLookupTooLong = errors.New("the wallet's transactions in the attempt's window fill more pages than a lookup reads")

// findConversion reads the source wallet's transactions, newest first,
// back to from, and returns the conversions that match req created between
// from and to: alike, never proven (the lane proves them). A conversion
// the bank rejected (it answered a refusal, and moved nothing) is nobody's
// movement and never a candidate.
func (r *Resolver) findConversion(ctx context.Context, corpID string, req *banking.ConversionRequest, from, to time.Time) ([]idempotency.Candidate, error) {
	var out []idempotency.Candidate
	opts := &banking.ListOptions{SortBy: "createdAt", SortType: "DESC", Limit: 100}
	for range conversionLookupPages {
		page, err := r.Banking.Transactions.ListByWallet(ctx, corpID, req.SourceID, opts)
		if err != nil {
			return nil, err
		}
		for _, t := range page.List {
			at := t.CreatedAt.Time
			if at.Before(from) {
				return out, nil
			}
			if at.After(to) || t.Type != "convert" || t.SourceCounterpartyID != req.SourceID ||
				t.TargetCurrency != req.Currency || t.TargetAmount != req.Amount ||
				(req.TargetID != "" && t.TargetCounterpartyID != req.TargetID) {
				continue
			}
			if code, ok := t.StatusCode(); ok && code == banking.TxRejected {
				continue
			}
			b, err := json.Marshal(t)
			if err != nil {
				return nil, err
			}
			out = append(out, idempotency.Candidate{ID: t.ID, Result: b})
		}
		if !page.Meta.HasMore || len(page.List) == 0 {
			return out, nil
		}
		opts.Offset += len(page.List)
	}
	return nil, errLookupTooLong
}

func conversionFingerprint(c *banking.ConversionRequest) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d|%s|%s|%s", c.Amount, c.Currency, c.SourceID, c.TargetID))
	return hex.EncodeToString(sum[:])
}

// refusals maps the upstream codes that are expected outcomes of a
// conversion to the typed result; other codes stay errors.
var refusals = map[int]model.ConversionRefusal{
	banking.CodeInsufficientFunds:                 model.ConversionRefusalInsufficientFunds,
	banking.CodeUnpaidInvoice:                     model.ConversionRefusalUnpaidInvoice,
	banking.CodeCorporationLimitReached:           model.ConversionRefusalCorporationLimitReached,
	banking.CodeCorporationVelocityReached:        model.ConversionRefusalCorporationVelocityReached,
	banking.CodeCorporationAttemptVelocityReached: model.ConversionRefusalCorporationAttemptVelocityPerHourReached,
	banking.CodeCorporationAmountReached:          model.ConversionRefusalCorporationAmountReached,
	banking.CodeCorporationAmountBelowMin:         model.ConversionRefusalCorporationAmountBelowMin,
	banking.CodeCorporationAmountAboveMax:         model.ConversionRefusalCorporationAmountAboveMax,
}

// asRefusal turns an expected upstream refusal into ConversionRefused.
func asRefusal(err error) (*model.ConversionRefused, bool) {
	var be *banking.ErrorResponse
	if !errors.As(err, &be) || be.StatusCode < 400 || be.StatusCode >= 500 || be.StatusCode == http.StatusUnauthorized {
		return nil, false
	}
	for _, it := range be.Errors {
		if reason, ok := refusals[it.Code]; ok {
			msg := it.Message
			if msg == "" {
				msg = "the conversion was refused"
			}
			return &model.ConversionRefused{Reason: reason, Code: int64(it.Code), Name: banking.CodeName(it.Code), Message: msg}, true
		}
	}
	return nil, false
}
