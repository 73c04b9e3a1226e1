package resolvers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/idempotency"
	"github.com/fingraph/fingraph/upstream/banking"
)

// unknownOutcome marks a conversion attempt whose upstream answer was lost
// (a timeout, a 5xx): the conversion may or may not exist.
var unknownOutcome = json.RawMessage(`{"outcome":"unknown"}`)

// errOutcomeUnknown refuses a retry of a conversion whose earlier outcome is
// unknown: converting again could move the money twice.
var errOutcomeUnknown = &gqlerr.Error{Code: gqlerr.UpstreamUnavailable,
	Message: "the outcome of the earlier attempt with this idempotencyKey is unknown; check the wallet balances before converting again with a new key"}

// convertOnce runs convert at most once per idempotency key, through the
// same idempotency store as createOrder (claimed by compare-and-set, so
// concurrent retries on any replica convert once):
//   - a success is remembered and replayed;
//   - a clean upstream refusal (4xx) moved nothing, so the key is released
//     and a retry may try again;
//   - a lost answer (unavailable, 5xx) is remembered as an unknown outcome,
//     and a retry with that key is refused rather than risk converting twice.
func (r *Resolver) convertOnce(ctx context.Context, key, fp string, convert func() (*banking.Transaction, error)) (*banking.Transaction, error) {
	if key == "" {
		return convert()
	}
	var (
		t       *banking.Transaction
		callErr error
	)
	a, err := r.Attempts.Do(ctx, idempotencyScope(ctx, "conversion"), key, fp,
		func(ctx context.Context, prior *idempotency.Attempt) (idempotency.Attempt, error) {
			if prior != nil {
				callErr = errOutcomeUnknown
				return idempotency.Attempt{}, callErr
			}
			t, callErr = convert()
			if callErr != nil {
				var be *banking.ErrorResponse
				if errors.As(callErr, &be) && be.StatusCode >= 400 && be.StatusCode < 500 {
					return idempotency.Attempt{}, callErr
				}
				return idempotency.Attempt{Result: unknownOutcome}, nil
			}
			b, err := json.Marshal(t)
			if err != nil {
				return idempotency.Attempt{}, err
			}
			return idempotency.Attempt{ID: t.ID, Succeeded: true, Result: b}, nil
		})
	switch {
	case err != nil && callErr != nil && errors.Is(err, callErr):
		return nil, callErr
	case err != nil:
		return nil, idempotencyError("input.idempotencyKey", err)
	case t != nil:
		return t, nil
	case callErr != nil:
		return nil, callErr // the outcome is unknown; remembered as such
	}
	// A replay: the conversion an earlier call with this key made.
	var replay banking.Transaction
	if err := json.Unmarshal(a.Result, &replay); err != nil {
		return nil, &gqlerr.Error{Code: gqlerr.Internal, Message: "internal error", Cause: err}
	}
	return &replay, nil
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
