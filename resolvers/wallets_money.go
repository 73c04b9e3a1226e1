package resolvers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/idempotency"
	"github.com/fingraph/fingraph/upstream/banking"
)

// keyedMutex serialises work per key within this process. The zero value is
// ready; entries are dropped when unused.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	sync.Mutex
	users int
}

func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{}
		k.locks[key] = l
	}
	l.users++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}

// conversionScope keeps conversion keys apart from order keys and per
// principal.
func conversionScope(ctx context.Context) string { return "conversion|" + idempotencyScope(ctx) }

// rejectedMarker marks an attempt the upstream refused cleanly: nothing was
// converted, so a retry may try again.
var rejectedMarker = json.RawMessage(`{"rejected":true}`)

// convertOnce runs convert at most once per idempotency key: the whole use
// of the idempotency store for conversions is here, so that it ports to the
// store's reusable API in one place.
//
// Before calling the upstream it records a claim; a success replaces it
// with the transaction, a clean upstream refusal (4xx) with a marker that
// allows a retry. A claim left behind (the gateway died, or the upstream's
// answer was lost) means the outcome is unknown: a retry with that key is
// refused rather than risk converting twice. Within one process, calls
// with the same key wait for each other; across replicas the claim covers
// all but two requests racing within the same few milliseconds.
func (r *Resolver) convertOnce(ctx context.Context, key, fp string, convert func() (*banking.Transaction, error)) (*banking.Transaction, error) {
	if key == "" {
		return convert()
	}
	scope := conversionScope(ctx)
	defer r.conversions.lock(scope + "\x00" + key)()
	internal := func(err error) error {
		return &gqlerr.Error{Code: gqlerr.Internal, Message: "internal error", Cause: err}
	}
	prev, err := r.OrderAttempts.Get(ctx, scope, key)
	if err != nil {
		return nil, internal(err)
	}
	if prev != nil {
		switch {
		case prev.Fingerprint != fp:
			return nil, gqlerr.BadInput("input.idempotencyKey", "this idempotencyKey was used for a different conversion")
		case prev.Succeeded:
			var t banking.Transaction
			if err := json.Unmarshal(prev.Order, &t); err != nil {
				return nil, internal(err)
			}
			return &t, nil
		case string(prev.Order) != string(rejectedMarker):
			return nil, &gqlerr.Error{Code: gqlerr.UpstreamUnavailable, Message: "the outcome of the earlier attempt with this idempotencyKey is unknown; check the wallet balances before converting again with a new key"}
		}
	}
	if err := r.OrderAttempts.Put(ctx, scope, key, idempotency.Attempt{Fingerprint: fp}); err != nil {
		return nil, internal(err)
	}
	t, err := convert()
	if err != nil {
		var be *banking.ErrorResponse
		if errors.As(err, &be) && be.StatusCode >= 400 && be.StatusCode < 500 {
			if perr := r.OrderAttempts.Put(ctx, scope, key, idempotency.Attempt{Fingerprint: fp, Order: rejectedMarker}); perr != nil {
				r.Logger.WarnContext(ctx, "could not record a refused conversion attempt", "err", perr)
			}
		}
		return nil, err
	}
	b, _ := json.Marshal(t)
	if err := r.OrderAttempts.Put(ctx, scope, key, idempotency.Attempt{OrderID: t.ID, Succeeded: true, Fingerprint: fp, Order: b}); err != nil {
		// The conversion exists; failing now would invite a second one.
		r.Logger.ErrorContext(ctx, "could not remember a conversion", "transaction_id", t.ID, "err", err)
	}
	return t, nil
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
