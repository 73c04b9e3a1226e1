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

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/idempotency"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// conversionSent is what identifies a conversion attempt in the wallet's
// transaction listing: the request's fields (the spec's POST /transactions
// takes no client reference).
type conversionSent struct {
	CorporationID string `json:"corporation_id"`
	SourceID      string `json:"source_id"`
	TargetID      string `json:"target_id,omitempty"`
	Currency      string `json:"currency"`
	Amount        int64  `json:"amount"`
}

// convertOnce runs convert at most once per idempotency key, through the
// same idempotency store as createOrder (claimed by compare-and-set, so
// concurrent retries on any replica convert once):
//   - a success is remembered and replayed;
//   - a clean upstream refusal (4xx) moved nothing, so the key is released
//     and a retry may try again;
//   - a lost answer (unavailable, 5xx) is remembered as an unknown outcome
//     and answered OUTCOME_UNKNOWN; a retry with the key first looks for
//     the conversion in the source wallet's transactions, and answers it
//     when it is there, converts only once it is certain there is none,
//     and otherwise answers OUTCOME_UNKNOWN again.
//
// fresh is false when the conversion is a replay of one an earlier call with
// the key answered (and announced).
func (r *Resolver) convertOnce(ctx context.Context, key, fp string, req *banking.ConversionRequest, convert func() (*banking.Transaction, error)) (t *banking.Transaction, fresh bool, err error) {
	if key == "" {
		t, err = convert()
		return t, true, err
	}
	corpID := ""
	if s := session.From(ctx); s != nil {
		corpID = s.CorporationID
	}
	sent, _ := json.Marshal(conversionSent{CorporationID: corpID, SourceID: req.SourceID, TargetID: req.TargetID, Currency: req.Currency, Amount: req.Amount})
	var (
		callErr error
		found   bool
	)
	scope := idempotencyScope(ctx, "conversion")
	a, err := r.Attempts.Do(ctx, scope, key, fp,
		func(ctx context.Context, prior *idempotency.Attempt) (idempotency.Attempt, error) {
			if prior != nil && prior.Unknown {
				a, resend, err := r.resolveUnknown(ctx, scope, key, *prior, func(ctx context.Context, from, to time.Time) (match, error) {
					return r.findConversion(ctx, corpID, req, from, to)
				})
				found = err == nil && !resend
				if err != nil || !resend {
					callErr = err
					return a, err
				}
			}
			sentAt := r.now()
			t, callErr = convert()
			if outcomeUnknown(callErr) {
				a := unknownAttempt(prior, sent, sentAt, r.now())
				callErr = errOutcomeUnknown(a, "the gateway did not send it again")
				return a, nil
			}
			if callErr != nil {
				return idempotency.Attempt{}, callErr
			}
			return conversionAttempt(t)
		})
	switch {
	case err != nil && errors.Is(err, callErr):
		return nil, false, callErr
	case err != nil:
		return nil, false, idempotencyError("input.idempotencyKey", err)
	case t != nil:
		return t, true, nil
	case callErr != nil:
		return nil, false, callErr // the outcome is unknown; remembered as such
	}
	// A replay: the conversion an earlier call with this key made, or the
	// one a lost attempt made, found in the listing now (which nobody has
	// announced yet).
	var replay banking.Transaction
	if err := json.Unmarshal(a.Result, &replay); err != nil {
		return nil, false, gqlerr.InternalError(err)
	}
	return &replay, found, nil
}

// conversionAttempt is what is remembered of a conversion that exists.
func conversionAttempt(t *banking.Transaction) (idempotency.Attempt, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return idempotency.Attempt{}, err
	}
	return idempotency.Attempt{ID: t.ID, Succeeded: true, Result: b}, nil
}

// conversionLookupPages bounds the pages of a wallet's transactions read to
// find one conversion: past them, the gateway cannot tell.
const conversionLookupPages = 5

var errLookupTooLong = errors.New("the wallet's transactions in the attempt's window fill more pages than a lookup reads")

// findConversion reads the source wallet's transactions, newest first,
// back to from, and returns the conversions that match req created between
// from and to. Without the listing (the strict sandbox, an upstream that
// does not offer it) it fails, and the outcome stays unknown.
func (r *Resolver) findConversion(ctx context.Context, corpID string, req *banking.ConversionRequest, from, to time.Time) (match, error) {
	if r.SpecOnly {
		return nil, errors.New("the upstream shows no transaction listing")
	}
	var out match
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
			a, err := conversionAttempt(t)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
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
