package banking

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// upstreamName names the banking upstream to the shared sender and in its
// refusals (Rejection.Service), which the typed checks look for.
const upstreamName = "banking"

// Error codes of the banking upstream's error body.
const (
	// CodeInvalidValue: invalid value of a field.
	CodeInvalidValue = 10001
	// CodeRequired: the named field is required.
	CodeRequired = 10002
	// CodeCodeExpired: the verification (two-factor) code has expired.
	CodeCodeExpired = 10003
	// CodeVersionNoLongerSupported: the API version is no longer supported.
	CodeVersionNoLongerSupported = 21001
	// CodeVersionNotSupported: the API version is not supported.
	CodeVersionNotSupported = 21002

	// CodeUnknownTransactionType: unknown transaction type.
	CodeUnknownTransactionType = 20001
	// CodeInsufficientFunds: insufficient funds.
	CodeInsufficientFunds = 20002
	// CodeWalletNotFound: the chosen wallet does not exist or the account is not registered.
	CodeWalletNotFound = 20003
	// CodeWalletNotSetUp: the chosen wallet is not fully set up.
	CodeWalletNotSetUp = 20004
	// CodeAmountBelowMinimum: the amount is below the minimum.
	CodeAmountBelowMinimum = 20005
	// CodeUnpaidInvoice: the corporation has an unpaid invoice.
	CodeUnpaidInvoice = 20006
	// CodeConversionNotAllowed: conversion is not allowed for adapter_a wallets.
	CodeConversionNotAllowed = 20009
	// CodeCurrencyNotAllowed: conversion to the same currency, or currency not allowed.
	CodeCurrencyNotAllowed = 20010
	// CodeTargetOnlyEUR: the target account can receive only EUR.
	CodeTargetOnlyEUR = 20011
	// CodeSameAccount: source and target accounts are the same.
	CodeSameAccount = 20012
)

var codeNames = map[int]string{
	CodeInvalidValue:             "INVALID_VALUE",
	CodeRequired:                 "REQUIRED",
	CodeCodeExpired:              "CODE_EXPIRED",
	CodeVersionNoLongerSupported: "VERSION_NO_LONGER_SUPPORTED",
	CodeVersionNotSupported:      "VERSION_NOT_SUPPORTED",
	CodeUnknownTransactionType:   "UNKNOWN_TRANSACTION_TYPE",
	CodeInsufficientFunds:        "INSUFFICIENT_FUNDS",
	CodeWalletNotFound:           "WALLET_NOT_FOUND",
	CodeWalletNotSetUp:           "WALLET_NOT_SET_UP",
	CodeAmountBelowMinimum:       "AMOUNT_BELOW_MINIMUM",
	CodeUnpaidInvoice:            "UNPAID_INVOICE",
	CodeConversionNotAllowed:     "CONVERSION_NOT_ALLOWED",
	CodeCurrencyNotAllowed:       "CURRENCY_NOT_ALLOWED",
	CodeTargetOnlyEUR:            "TARGET_ONLY_EUR",
	CodeSameAccount:              "SAME_ACCOUNT",
}

// Corporation limit codes of a transaction (-114 to -119).
const (
	CodeCorporationLimitReached           = -114
	CodeCorporationVelocityReached        = -115
	CodeCorporationAttemptVelocityReached = -116
	CodeCorporationAmountReached          = -117
	CodeCorporationAmountBelowMin         = -118
	CodeCorporationAmountAboveMax         = -119
)

// transactionCodeNames is the spec's table of transaction error codes,
// with the spec's own names.
var transactionCodeNames = map[int]string{
	101: "PICK_UP", 1300: "INVALID_DATA_FORMAT", 1301: "INVALID_OR_INCOMPLETE_DATA_PROVIDED", 1310: "INVALID_AMOUNT",
	1318: "INVALID_DATE", 1320: "INVALID_CURRENCY_CODE", 1322: "INVALID_CUSTOMER_DATA", 1330: "INVALID_ACCOUNT",
	1352: "INVALID_AGENT", 1360: "BAD_PROCESSING_CODE", 1385: "INVALID_BANK_OPERATION_CODE", 1392: "INVALID_REFERENCE",
	1393: "TRANSACTION_CANNOT_BE_COMPLETED", 5100: "GENERIC_DECLINE", 5101: "DECLINED_BY_PERSON",
	5120: "INSUFFICIENT_FUNDS", 5121: "AMOUNT_EXCEED_LIMIT", 5141: "CLOSED_ACCOUNT_NUMBER", 5160: "UNAUTHORIZED_USER",
	5161: "UNAUTHORIZED", 5173: "ACCOUNT_TYPE_INVALID", 5200: "DUPLICATE_TRANSACTION", 5450: "WRONG_IBAN",
	5501: "SYSTEM_VELOCITY_REACHED", 5700: "TRANSACTION_NOT_PERMITTED", 5701: "NO_TRANSACTION",
	5800: "REVERSAL_REJECTED", 5801: "CANCELLATION_REQUEST", 5802: "FINAL_RESPONSE_MANDATE_CANCELLED",
	5803: "NO_MANDATE", 5804: "RETURN_FUNDS", 5805: "RETURN_AFTER_INVESTIGATION", 6301: "ACCOUNT_IN_BLACKLIST",
	6303: "WHITELIST_VALIDATION_ERROR", 6400: "SPECIFIC_SERVICE_OFFERED", 7710: "AUTHENTICATION_FAILED",
	7721: "AUTHORISATION_WAITING", 7730: "AUTHORISED_AND_CANCELLED", 8000: "PROCESSOR_SYSTEM_ERROR",
	8040: "CUT_OFF_TIME", 8100: "FATAL_COMMUNICATION_ERROR", 9110: "TRANSACTION_DECLINED", 9500: "SUSPECTED_FRAUD",
	9505: "PAYMENT_DATA_ARE_BLOCKED", 9542: "BANK_NOT_SUPPORTED", 9544: "BANK_NOT_REGISTERED_UNDER_BIC",
	9600: "UNRECOGNIZED_RESPONSE_CODE", 9610: "UNRECOGNIZED_INITIAL_PARTY", 9620: "UNKNOWN_END_CUSTOMER",
	9621: "DECEASED_END_CUSTOMER", 9630: "UNKNOWN_REASON", 9631: "REASON", 9700: "BALANCE_REQUEST",
	9800: "HTTP_ERROR", 9900: "TECHNICAL_PROBLEM", -100: "TRANSACTION_SCORE_TOO_LOW",
	CodeCorporationLimitReached:           "CORPORATION_LIMIT_REACHED",
	CodeCorporationVelocityReached:        "CORPORATION_VELOCITY_REACHED",
	CodeCorporationAttemptVelocityReached: "CORPORATION_ATTEMPT_VELOCITY_PER_HOUR_REACHED",
	CodeCorporationAmountReached:          "CORPORATION_AMOUNT_REACHED",
	CodeCorporationAmountBelowMin:         "CORPORATION_AMOUNT_BELOW_MIN",
	CodeCorporationAmountAboveMax:         "CORPORATION_AMOUNT_ABOVE_MAX",
	-300:                                  "PAYMENT_PROCESSOR_NOT_FOUND", -420: "TOTAL_CARD_LIMIT_REACHED",
}

// CodeName names an upstream error code for GraphQL error extensions; the
// spec gives meanings, these names condense them. Unknown codes give "".
func CodeName(code int) string {
	if n, ok := codeNames[code]; ok {
		return n
	}
	return transactionCodeNames[code]
}

// ErrorItem is one entry of the upstream's error body.
type ErrorItem struct {
	// Field names the offending field; empty for request-wide errors such as
	// an unsupported version.
	Field string `json:"field"`
	// Message is the upstream's text, with any secret of the request
	// replaced by [REDACTED].
	Message string `json:"message"`
	// Code is the numeric code, 0 when the upstream sent none.
	Code int `json:"code,omitempty"`
}

// ErrorResponse is a non-2xx answer of the upstream. It keeps no headers and
// no raw body, so it cannot carry the access token.
type ErrorResponse struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Method and Path name the call (the path without its query).
	Method, Path string
	// Errors is the parsed {"errors":[...]} body; empty when the body was not
	// of that shape.
	Errors []ErrorItem
}

// Error summarises the answer: call, status, and each error item.
func (e *ErrorResponse) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "banking: %s %s: %d %s", e.Method, e.Path, e.StatusCode, http.StatusText(e.StatusCode))
	for i, it := range e.Errors {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		if it.Field != "" {
			b.WriteString(it.Field + ": ")
		}
		b.WriteString(it.Message)
		if it.Code != 0 {
			b.WriteString(" (" + strconv.Itoa(it.Code) + ")")
		}
	}
	return b.String()
}

var _ roundtrip.Rejecter = (*ErrorResponse)(nil)

// Rejection presents the refusal to the gateway's edge by its first error
// item. A 401 naming no field refused the session's token (a 401 naming one
// is a failed sign-in); a version error is the gateway's misconfiguration.
func (e *ErrorResponse) Rejection() roundtrip.Rejection {
	first := e.First()
	r := roundtrip.Rejection{Service: upstreamName, Status: e.StatusCode, Field: first.Field, Message: first.Message,
		CredentialRefused: e.StatusCode == http.StatusUnauthorized && first.Field == ""}
	if first.Code != 0 {
		r.Code, r.Name = first.Code, CodeName(first.Code)
	}
	if e.HasCode(CodeVersionNoLongerSupported, CodeVersionNotSupported) {
		r.Misconfigured = "banking refuses the configured API version"
	}
	return r
}

// HasCode reports whether any error item carries one of codes.
func (e *ErrorResponse) HasCode(codes ...int) bool {
	for _, it := range e.Errors {
		if slices.Contains(codes, it.Code) {
			return true
		}
	}
	return false
}

// First returns the first error item, or a zero item; resolvers report it
// as the upstream code and field.
func (e *ErrorResponse) First() ErrorItem {
	if len(e.Errors) == 0 {
		return ErrorItem{}
	}
	return e.Errors[0]
}

// CheckResponse returns nil for 2xx answers and an *ErrorResponse otherwise.
// It reads the body and leaves a fresh reader in its place. Secrets the
// request carried (its token, the refreshed token, passwords, codes, keys)
// are scrubbed from the parsed messages.
func CheckResponse(r *http.Response) error {
	if r.StatusCode >= 200 && r.StatusCode <= 299 {
		return nil
	}
	e := &ErrorResponse{StatusCode: r.StatusCode}
	if r.Request != nil {
		e.Method, e.Path = r.Request.Method, r.Request.URL.Path
	}
	if r.Body != nil {
		raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		_ = r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(raw))
		var body struct {
			Errors []ErrorItem `json:"errors"`
		}
		if json.Unmarshal(raw, &body) == nil {
			e.Errors = body.Errors
		}
	}
	secrets := responseSecrets(r)
	for i := range e.Errors {
		e.Errors[i].Field = scrub(e.Errors[i].Field, secrets)
		e.Errors[i].Message = scrub(e.Errors[i].Message, secrets)
	}
	return e
}

// responseSecrets gathers every secret value tied to this exchange.
func responseSecrets(r *http.Response) []string {
	var s []string
	if t := r.Header.Get(HeaderAccessToken); t != "" {
		s = append(s, t)
	}
	if r.Request != nil {
		if t := r.Request.Header.Get(HeaderAccessToken); t != "" {
			s = append(s, t)
		}
		if fromBody, ok := r.Request.Context().Value(keySecrets).([]string); ok {
			s = append(s, fromBody...)
		}
	}
	// Longest first, so a secret containing another is replaced whole.
	slices.SortFunc(s, func(a, b string) int { return len(b) - len(a) })
	return s
}

func scrub(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, redacted)
		}
	}
	return s
}

// sensitiveKeys are request body fields whose values must never be echoed.
var sensitiveKeys = map[string]bool{
	"password": true, "confirm_password": true, "current_password": true,
	"two_fa_code": true, "token": true, "apiKey": true, "api_key": true,
	"private_key": true, "recaptcha": true, "social_security_number": true,
	"pan": true, "cvc2": true,
}

// collectSecrets walks an encoded JSON body for the values of sensitive keys,
// at any depth (challenge.two_fa.two_fa_code).
func collectSecrets(body []byte) []string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return nil
	}
	var out []string
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, c := range t {
				walk(k, c)
			}
		case []any:
			for _, c := range t {
				walk(key, c)
			}
		case string:
			if sensitiveKeys[key] && t != "" {
				out = append(out, t)
			}
		case float64:
			if sensitiveKeys[key] {
				out = append(out, strconv.FormatFloat(t, 'f', -1, 64))
			}
		}
	}
	walk("", v)
	return out
}

func asErrorResponse(err error) (*ErrorResponse, bool) {
	var e *ErrorResponse
	ok := errors.As(err, &e)
	return e, ok
}

// hasStatus reports whether err is a refusal of the banking upstream with
// one of statuses.
func hasStatus(err error, statuses ...int) bool {
	return roundtrip.HasStatus(err, upstreamName, statuses...)
}

// IsUnauthorized reports a 401: the token is missing, expired or revoked, or
// the sign-in credentials are wrong.
func IsUnauthorized(err error) bool { return hasStatus(err, http.StatusUnauthorized) }

// IsForbidden reports a 403: the principal may not call this route or set
// this field (staff-only, person-only).
func IsForbidden(err error) bool { return hasStatus(err, http.StatusForbidden) }

// IsNotFound reports a 404: no such object, or none the principal may see.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsValidation reports that the given information was rejected: an invalid
// or missing field (10001, 10002), or a 400/422 that is not a version error.
func IsValidation(err error) bool {
	e, ok := asErrorResponse(err)
	if !ok {
		return false
	}
	if e.HasCode(CodeInvalidValue, CodeRequired) {
		return true
	}
	return (e.StatusCode == http.StatusBadRequest || e.StatusCode == http.StatusUnprocessableEntity) &&
		!e.HasCode(CodeVersionNoLongerSupported, CodeVersionNotSupported)
}

// IsCodeExpired reports that a two-factor code has expired (10003); the
// caller must start the sign-in or phone change again.
func IsCodeExpired(err error) bool {
	e, ok := asErrorResponse(err)
	return ok && e.HasCode(CodeCodeExpired)
}

// IsVersionUnsupported reports that the upstream refuses the API version
// (21001, 21002): a configuration error, not a user error.
func IsVersionUnsupported(err error) bool {
	e, ok := asErrorResponse(err)
	return ok && e.HasCode(CodeVersionNoLongerSupported, CodeVersionNotSupported)
}

// IsUnavailable reports that the upstream could not serve the call: a 5xx,
// or a network failure, timeout or open circuit (*roundtrip.UnavailableError).
func IsUnavailable(err error) bool {
	if roundtrip.IsUnavailable(err) {
		return true
	}
	e, ok := asErrorResponse(err)
	return ok && e.StatusCode >= 500
}
