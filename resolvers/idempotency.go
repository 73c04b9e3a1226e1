package resolvers

import (
	"context"
	"errors"
	"time"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/idempotency"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// Attempts runs money movements at most once per idempotency key
// (idempotency.Store); createOrder uses it, and so can any other mutation
// that must not repeat its effect on a retry.
type Attempts interface {
	Do(ctx context.Context, scope, key, fingerprint string, fn idempotency.Func) (idempotency.Attempt, error)
	// Own and OwnedByAnother tie upstream records to keys, so that a
	// lookup after a lost answer never answers another key's record.
	Own(ctx context.Context, scope, key, id string) (bool, error)
	OwnedByAnother(ctx context.Context, scope, key, id string) (bool, error)
}

var _ Attempts = (*idempotency.Store)(nil)

// DefaultOutcomeSettle is how long after an attempt of unknown outcome its
// absence from the upstream's listing is taken as proof that it had no
// effect, when Resolver.OutcomeSettle is not set. Before then the request
// may still be on its way or in progress upstream (the gateway gave up
// waiting, the upstream did not necessarily give up working).
const DefaultOutcomeSettle = 30 * time.Second

// lookupSkew widens the window an unknown attempt is looked for in: the
// upstream's clock is not the gateway's, and its timestamps have whole
// seconds.
const lookupSkew = time.Minute

// idempotencyScope keeps idempotency keys apart per kind of call and per
// principal: two API clients, or two customers, choosing the same key never
// share an attempt, nor does an order share one with another kind of call.
func idempotencyScope(ctx context.Context, kind string) string {
	s := session.From(ctx)
	if s == nil {
		return kind + "|signed-out"
	}
	return kind + "|" + string(s.Kind) + "|" + s.PrincipalID + "|" + s.CorporationID
}

// idempotencyError translates what idempotency.Store.Do refuses into a
// client error naming field; any other error is internal. It returns nil
// for nil.
func idempotencyError(field string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, idempotency.ErrFingerprintMismatch):
		return gqlerr.BadInput(field, "this idempotency key was used for a different request")
	case errors.Is(err, idempotency.ErrInProgress):
		return gqlerr.BadInput(field, "a request with this idempotency key is still in progress; retry it later")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return gqlerr.InternalError(err)
}

// outcomeUnknown reports an error after which the upstream may have acted:
// the request may have gone out and its answer was lost (a network
// failure, the deadline, a cut-off answer, the caller leaving) or the
// upstream failed with a 5xx mid-way. An open circuit or an id refused
// before sending sent nothing, and a refusal (4xx) moved nothing.
func outcomeUnknown(err error) bool {
	switch {
	case err == nil, errors.Is(err, roundtrip.ErrCircuitOpen), errors.Is(err, roundtrip.ErrInvalidID):
		return false
	case roundtrip.IsUnavailable(err), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return true
	}
	rj, ok := roundtrip.AsRejection(err)
	return ok && rj.Status >= 500
}

// unknownAttempt is what is remembered of an attempt whose answer was lost:
// what identifies it upstream, and when it ran.
func unknownAttempt(prior *idempotency.Attempt, sent []byte, sentAt, endedAt time.Time) idempotency.Attempt {
	a := idempotency.Attempt{Unknown: true, Sent: sent, SentAt: sentAt.UnixMilli(), EndedAt: endedAt.UnixMilli()}
	if prior != nil {
		// An order attempt that carried a refused order's id keeps it: the
		// retry must carry it again, and it finds the order by it.
		a.ID = prior.ID
		if prior.Unknown && prior.SentAt != 0 {
			a.SentAt = prior.SentAt // the earlier attempt may have acted too
		}
	}
	return a
}

// errOutcomeUnknown is the answer while the outcome of an attempt stays
// unknown: OUTCOME_UNKNOWN, with when the attempt ran. It is a client
// error: nothing failed in the gateway, and the client decides what to
// check.
func errOutcomeUnknown(a idempotency.Attempt, why string) *gqlerr.Error {
	ext := map[string]any{"retryable": true}
	if a.SentAt != 0 {
		ext["attemptedAt"] = time.UnixMilli(a.SentAt).UTC().Format(time.RFC3339)
	}
	return &gqlerr.Error{Code: gqlerr.OutcomeUnknown, Field: "input.idempotencyKey", Extensions: ext,
		Message: "the answer to an earlier attempt with this idempotencyKey was lost, and the upstream may have acted on it; " + why +
			". Retry with the same idempotencyKey (the gateway looks again and never sends it twice), " +
			"or check the upstream's state before moving money with a new key"}
}

// match is what looking for an unknown attempt upstream found: the
// attempts that match what was sent, each as it would be remembered.
type match = []idempotency.Attempt

// resolveUnknown finds out what an attempt of unknown outcome did, with
// find reading the upstream's listing between from and to. It returns the
// attempt to remember (the one match, Succeeded), or resend when the
// attempt certainly had no effect (nothing matches, and it ended long
// enough ago that it can no longer be under way), or OUTCOME_UNKNOWN when
// it cannot tell (the listing failed or does not exist, several attempts
// match, or it is too early to count on an absence).
//
// Records that another key already owns (its answered outcome, or one its
// own lookup took) are not this attempt's, however alike: the upstream
// keeps no client reference, so two keys may send the same request.
func (r *Resolver) resolveUnknown(ctx context.Context, scope, key string, prior idempotency.Attempt, find func(ctx context.Context, from, to time.Time) (match, error)) (found idempotency.Attempt, resend bool, err error) {
	from := time.UnixMilli(prior.SentAt).Add(-lookupSkew)
	to := time.UnixMilli(prior.EndedAt).Add(lookupSkew)
	now := r.now()
	if to.After(now) {
		to = now.Add(lookupSkew)
	}
	ms, err := find(ctx, from, to)
	if err == nil {
		ms, err = r.notOwnedByAnother(ctx, scope, key, ms)
	}
	switch {
	case err != nil:
		r.Logger.WarnContext(ctx, "could not look up an attempt of unknown outcome", "err", err)
		return found, false, errOutcomeUnknown(prior, "the gateway could not read the upstream to find out what it did")
	case len(ms) == 1:
		a := ms[0]
		if mine, err := r.Attempts.Own(ctx, scope, key, a.ID); err != nil || !mine {
			// Another key's lookup took it in between, or the mark failed.
			return found, false, errOutcomeUnknown(prior, "the gateway could not tell whether the matching record is this attempt's")
		}
		a.Succeeded = true
		return a, false, nil
	case len(ms) > 1:
		return found, false, errOutcomeUnknown(prior, "the upstream shows several matching records and the gateway cannot tell which is this attempt's")
	}
	if now.Sub(time.UnixMilli(prior.EndedAt)) < r.outcomeSettle() {
		return found, false, errOutcomeUnknown(prior, "the upstream does not show it yet, and it may still be under way")
	}
	return found, true, nil
}

// notOwnedByAnother drops the matches that another key owns.
func (r *Resolver) notOwnedByAnother(ctx context.Context, scope, key string, ms match) (match, error) {
	out := ms[:0:0]
	for _, m := range ms {
		other, err := r.Attempts.OwnedByAnother(ctx, scope, key, m.ID)
		if err != nil {
			return nil, err
		}
		if !other {
			out = append(out, m)
		}
	}
	return out, nil
}

func (r *Resolver) outcomeSettle() time.Duration {
	if r.OutcomeSettle > 0 {
		return r.OutcomeSettle
	}
	return DefaultOutcomeSettle
}
