package resolvers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/idempotency"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// Attempts carries out mutations that move money or create upstream
// records at most once per idempotency key (idempotency.Store.Run): every
// such mutation declares an idempotency.Intent and lets it run the whole
// protocol.
type Attempts interface {
	Run(ctx context.Context, in idempotency.Intent) (idempotency.Outcome, error)
}

var _ Attempts = (*idempotency.Store)(nil)

// DefaultOutcomeSettle is how long after an attempt of unknown outcome its
// absence from the upstream is taken as proof that it had no effect, when
// Resolver.OutcomeSettle is not set. Before then the request may still be
// on its way or in progress upstream (the gateway gave up waiting, the
// upstream did not necessarily give up working).
const DefaultOutcomeSettle = 30 * time.Second

// The kinds of upstream record intents make: a record answered to one key
// (or made without a key) never answers another key, whoever's.
const (
	recordsOrder       = "payments-order"
	recordsTransaction = "banking-transaction"
)

// maxIdempotencyKey bounds an idempotency key's length.
const maxIdempotencyKey = 255

// intent is the part of an idempotency.Intent every mutation shares: its
// scope (the kind of call and the principal: the same key from another
// principal is another key), the key, the fingerprint of what was asked,
// the settle window and what counts as a lost answer. Every mutation that
// takes an idempotencyKey builds its intent here, and this is where the key
// is checked: absent means no key; empty, blank or too long is
// BAD_USER_INPUT (an empty key is not "no key": a client that meant one
// would move money twice).
func (r *Resolver) intent(ctx context.Context, kind string, key *string, fp string) (idempotency.Intent, error) {
	k, err := idempotencyKey(key)
	if err != nil {
		return idempotency.Intent{}, err
	}
	return idempotency.Intent{Scope: idempotencyScope(ctx, kind, fp), Key: k, Fingerprint: fp,
		Settle: r.outcomeSettle(), Lost: outcomeUnknown}, nil
}

// idempotencyKey checks a client's key: nil is no key.
func idempotencyKey(key *string) (string, error) {
	switch {
	case key == nil:
		return "", nil
	case strings.TrimSpace(*key) == "":
		return "", gqlerr.BadInput("input.idempotencyKey", "idempotencyKey must not be empty or blank: leave it out to send without a key")
	case len(*key) > maxIdempotencyKey:
		return "", gqlerr.BadInput("input.idempotencyKey", "idempotencyKey must be at most %d characters", maxIdempotencyKey)
	}
	return *key, nil
}

// idempotencyScope keeps idempotency keys apart per kind of call and per
// principal: two API clients, or two persons, choosing the same key never
// share an attempt, nor does an order share one with another kind of call.
// A signed-out caller (createCustomer), or one on sandbox mode's shared
// anonymous session, has no principal of its own: its keys are bound to
// what it asked (fp), which holds the single-use card tokens only that
// client was given, so another client reusing its key has another scope:
// it neither learns the key is taken nor gets its customer back.
func idempotencyScope(ctx context.Context, kind, fp string) string {
	s := session.From(ctx)
	if s == nil {
		return kind + "|signed-out|" + fp
	}
	if session.Shared(ctx) {
		return kind + "|shared|" + fp
	}
	return kind + "|" + string(s.Kind) + "|" + s.PrincipalID + "|" + s.CorporationID
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

// moneyError answers what Run refused or could not tell, for a mutation
// that moves money: an unknown outcome is OUTCOME_UNKNOWN, keyed or not
// (never "unavailable, try again", which would invite a second movement).
// Other errors pass as they are.
func moneyError(err error) error {
	var u *idempotency.Unknown
	if errors.As(err, &u) {
		return errOutcomeUnknown(u)
	}
	return keyError(err)
}

// recordError answers what Run refused or could not tell, for a mutation
// that creates a record: an unknown outcome under a key is OUTCOME_UNKNOWN;
// without a key nothing was promised, and the transport's error stands.
func recordError(err error) error {
	var u *idempotency.Unknown
	if errors.As(err, &u) && !u.Keyed && u.Err != nil {
		return u.Err
	}
	return moneyError(err)
}

// keyError translates what the idempotency store refuses into a client
// error naming the key.
func keyError(err error) error {
	switch {
	case errors.Is(err, idempotency.ErrFingerprintMismatch):
		return gqlerr.BadInput("input.idempotencyKey", "this idempotency key was used for a different request")
	case errors.Is(err, idempotency.ErrInProgress):
		return gqlerr.BadInput("input.idempotencyKey", "a request with this idempotency key is still in progress; retry it later")
	case errors.Is(err, idempotency.ErrLaneBusy):
		// Nothing was sent: retrying is safe, once the lane frees.
		after := 1
		var busy *idempotency.LaneBusy
		if errors.As(err, &busy) {
			after = max(1, int(math.Ceil(time.Until(busy.Until).Seconds())))
		}
		return &gqlerr.Error{Code: gqlerr.RateLimited, RetryAfter: after,
			Message: "another movement of the same kind on this wallet or order is in progress or has an unknown outcome; nothing was sent, retry after retryAfter seconds, when it frees"}
	}
	return err
}

// errOutcomeUnknown is the answer while the outcome of an attempt stays
// unknown: OUTCOME_UNKNOWN, with when the attempt ran and whether a retry
// with the same key finds out. It is a client error: nothing failed in the
// gateway, and the client decides what to check.
func errOutcomeUnknown(u *idempotency.Unknown) *gqlerr.Error {
	// retryable only where a retry with the key can still find out.
	ext := map[string]any{"retryable": u.Keyed && !u.Final}
	if !u.SentAt.IsZero() {
		ext["attemptedAt"] = u.SentAt.UTC().Format(time.RFC3339)
	}
	if !u.Keyed {
		return &gqlerr.Error{Code: gqlerr.OutcomeUnknown, Extensions: ext, Cause: u.Err,
			Message: "the request may have reached the upstream and its answer was lost; " +
				"check the upstream's state before sending it again (with an idempotencyKey the gateway finds out itself on a retry)"}
	}
	if u.Final {
		return &gqlerr.Error{Code: gqlerr.OutcomeUnknown, Field: "input.idempotencyKey", Extensions: ext,
			Message: "the answer to an attempt with this idempotencyKey was lost, and the upstream may have acted on it; " + u.Why +
				". No retry with this key can tell (a retry answers this again and never sends it twice): " +
				"check the upstream's state before sending it again with a new key"}
	}
	return &gqlerr.Error{Code: gqlerr.OutcomeUnknown, Field: "input.idempotencyKey", Extensions: ext,
		Message: "the answer to an attempt with this idempotencyKey was lost, and the upstream may have acted on it; " + u.Why +
			". Retry with the same idempotencyKey (the gateway looks again and never sends it twice), " +
			"or check the upstream's state before moving money with a new key"}
}

// replayed decodes the result an outcome remembers.
func replayed[T any](o idempotency.Outcome) (*T, error) {
	var v T
	if err := json.Unmarshal(o.Result, &v); err != nil {
		return nil, gqlerr.InternalError(err)
	}
	return &v, nil
}

// succeeded is the attempt of a send that made record id, remembering
// result (which must hold no secret, token or card data).
func succeeded(id string, result any) (idempotency.Attempt, error) {
	b, err := json.Marshal(result)
	if err != nil {
		return idempotency.Attempt{}, err
	}
	return idempotency.Attempt{ID: id, Succeeded: true, Result: b}, nil
}

func (r *Resolver) outcomeSettle() time.Duration {
	if r.OutcomeSettle > 0 {
		return r.OutcomeSettle
	}
	return DefaultOutcomeSettle
}

// createOnce carries out a mutation that creates an upstream record
// through the idempotency mechanism. send makes the record and returns its
// id and what is remembered of it, T (never a secret, a card token or card
// data); the caller keeps the full answer itself. It returns T and whether
// this call made the record (false: a replay of what an earlier call with
// the key made). The upstream keeps no client reference for these records,
// so a lost answer under a key stays OUTCOME_UNKNOWN: never a second
// record.
func createOnce[T any](ctx context.Context, r *Resolver, kind string, key *string, fp string, send func(ctx context.Context) (string, T, error)) (v T, fresh bool, err error) {
	in, err := r.intent(ctx, kind, key, fp)
	if err != nil {
		return v, false, err
	}
	var made *T
	in.Send = func(ctx context.Context, _ *idempotency.Attempt) (idempotency.Attempt, error) {
		id, v, err := send(ctx)
		if err != nil {
			return idempotency.Attempt{}, err
		}
		made = &v
		return succeeded(id, v)
	}
	o, err := r.Attempts.Run(ctx, in)
	switch {
	case err != nil:
		return v, false, err
	case made != nil:
		return *made, true, nil
	}
	got, err := replayed[T](o)
	if err != nil {
		return v, false, err
	}
	return *got, false, nil
}

// fingerprintOf identifies what a request asked for, from its parts.
func fingerprintOf(parts ...any) string {
	b, _ := json.Marshal(parts)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
