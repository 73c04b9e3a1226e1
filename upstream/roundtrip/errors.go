package roundtrip

import (
	"errors"
	"slices"
	"strings"
)

// ErrCircuitOpen is the cause of an UnavailableError returned without
// calling the upstream, while its circuit breaker is open.
var ErrCircuitOpen = errors.New("circuit open")

// ErrInvalidID refuses a call whose path, once its ids are in it, has a
// "." or ".." segment (escaped or not): an id is data, and must never move
// a call to another route. No object has such an id, so the edge shows it
// as NOT_FOUND without calling the upstream.
var ErrInvalidID = errors.New("an id that names no object")

// DotSegment reports whether a decoded URL path has a "." or ".." segment.
func DotSegment(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// UnavailableError means an upstream could not answer: a network failure,
// the call's deadline, a cut-off answer, or an open circuit. It is the one
// such error of every client; a 5xx answer is the client's own typed error.
type UnavailableError struct {
	// Service names the upstream ("payments", "banking").
	Service string
	// Op is the call: method and path, without the query.
	Op string
	// Err is the cause; it holds no URL.
	Err error
}

func (e *UnavailableError) Error() string {
	return e.Service + ": " + e.Op + ": unavailable: " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *UnavailableError) Unwrap() error { return e.Err }

// IsUnavailable reports whether err is (or wraps) an *UnavailableError.
func IsUnavailable(err error) bool {
	var ue *UnavailableError
	return errors.As(err, &ue)
}

// Rejection is an upstream's refusal (a non-2xx answer) in the terms the
// gateway's edge presents it in, whichever upstream it came from.
type Rejection struct {
	// Service names the upstream.
	Service string
	// Status is the HTTP status.
	Status int
	// Code is the upstream's own error code: a string for payments, a
	// number for banking; nil when it sent none.
	Code any
	// Name is the spec's name for Code, when it has one.
	Name string
	// Field names the offending field, when the upstream named one.
	Field string
	// Message is the upstream's text, already scrubbed of every secret the
	// request carried.
	Message string
	// CredentialRefused means the upstream refused the credential of the
	// caller's session outright (its token, its customer key): the session
	// cannot work any more, and the client has told its holder.
	CredentialRefused bool
	// Misconfigured, when not empty, says which part of the gateway's own
	// configuration the upstream refused (its merchant keys, its API
	// version). No client can fix that, so it is logged with this text and
	// shown as an internal error.
	Misconfigured string
}

// Rejecter is implemented by each client's typed error of a non-2xx answer.
type Rejecter interface {
	error
	Rejection() Rejection
}

// AsRejection reports the Rejection of the first Rejecter in err's chain.
func AsRejection(err error) (Rejection, bool) {
	var r Rejecter
	if errors.As(err, &r) {
		return r.Rejection(), true
	}
	return Rejection{}, false
}

// HasStatus reports whether err carries a refusal of the upstream named
// service (the Rejection of a Rejecter in its chain) with one of statuses:
// the one implementation of the clients' typed checks (IsNotFound,
// IsConflict, ...).
func HasStatus(err error, service string, statuses ...int) bool {
	rj, ok := AsRejection(err)
	return ok && rj.Service == service && slices.Contains(statuses, rj.Status)
}
