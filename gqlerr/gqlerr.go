// Package gqlerr is the gateway's error vocabulary: every error a client sees
// carries one of a closed set of codes in extensions.code. Resolvers return
// *Error for what they decide themselves; upstream errors are translated by
// the error presenter in package gqlhttp, the one edge where that happens.
// A request answered before GraphQL execution gets the same shape from
// WriteHTTP, the one writer of those answers.
package gqlerr

import (
	"errors"
	"fmt"
)

// Code is the value of extensions.code.
type Code string

// The codes a client can see.
const (
	Unauthenticated     Code = "UNAUTHENTICATED"
	Forbidden           Code = "FORBIDDEN"
	NotFound            Code = "NOT_FOUND"
	BadUserInput        Code = "BAD_USER_INPUT"
	UpstreamRejected    Code = "UPSTREAM_REJECTED"
	UpstreamUnavailable Code = "UPSTREAM_UNAVAILABLE"
	RateLimited         Code = "RATE_LIMITED"
	Internal            Code = "INTERNAL"
	// OutcomeUnknown: an earlier attempt with the same idempotency key
	// reached the upstream and its answer was lost; the gateway could not
	// tell what it did, so it did not send it again. The client checks (or
	// retries the same key later, when the gateway looks again) before it
	// moves money with a new key. Its extensions say when the attempt ran.
	OutcomeUnknown Code = "OUTCOME_UNKNOWN"
)

// Error is an error with a code, safe to show: its Message must never hold a
// secret, a card number or an internal detail.
type Error struct {
	Code    Code
	Message string
	// Field is the input path at fault, e.g. "input.items.amount".
	Field string
	// RetryAfter, for RATE_LIMITED, is how many seconds the client should
	// wait (extensions.retryAfter).
	RetryAfter int
	// Cause is logged, never shown.
	Cause error
	// Extensions are further extensions entries the client acts on (for
	// OUTCOME_UNKNOWN, when the attempt ran); never a secret.
	Extensions map[string]any
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Field)
	}
	return string(e.Code) + ": " + e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// BadInput reports invalid input in field.
func BadInput(field, format string, args ...any) *Error {
	return &Error{Code: BadUserInput, Field: field, Message: fmt.Sprintf(format, args...)}
}

// NotFoundf reports a missing resource.
func NotFoundf(format string, args ...any) *Error {
	return &Error{Code: NotFound, Message: fmt.Sprintf(format, args...)}
}

// Forbiddenf reports an operation the principal may not do.
func Forbiddenf(format string, args ...any) *Error {
	return &Error{Code: Forbidden, Message: fmt.Sprintf(format, args...)}
}

// Unauthenticatedf reports a missing or expired session.
func Unauthenticatedf(format string, args ...any) *Error {
	return &Error{Code: Unauthenticated, Message: fmt.Sprintf(format, args...)}
}

// InternalError hides err behind INTERNAL: the error presenter logs err
// and shows only InternalMessage. For failures of the gateway itself (its
// session store, its bus), which no client can fix.
func InternalError(err error) *Error {
	return &Error{Code: Internal, Message: InternalMessage, Cause: err}
}

// As unwraps err into an *Error when it is one.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
