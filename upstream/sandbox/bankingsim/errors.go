package bankingsim

import (
	"encoding/json"
	"net/http"
)

// Error codes of the spec's Errors section.
const (
	CodeInvalid            = 10001 // invalid value of a field
	CodeRequired           = 10002 // field is required
	CodeExpired            = 10003 // verification code is expired
	CodeVersionGone        = 21001 // this API version is no longer supported
	CodeVersionUnsupported = 21002 // this API version is not supported
)

// apiError is one element of the spec's error body.
type apiError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
	Code    int    `json:"code,omitempty"`
}

// errs collects validation errors in field order.
type errs []apiError

func (e *errs) add(field, message string, code int) {
	*e = append(*e, apiError{Field: field, Message: message, Code: code})
}
func (e *errs) required(field string) { e.add(field, field+" is required", CodeRequired) }
func (e *errs) invalid(field, why string) {
	e.add(field, why, CodeInvalid)
}

func fieldErr(field, message string, code int) apiError {
	return apiError{Field: field, Message: message, Code: code}
}

func writeErrors(w http.ResponseWriter, status int, e ...apiError) {
	writeJSON(w, status, map[string]any{"errors": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Shorthands for the status choices documented in docs/sandbox-banking.md
// ("Errors and status codes").
func badRequest(w http.ResponseWriter, e ...apiError) { writeErrors(w, http.StatusBadRequest, e...) }
func unauthorized(w http.ResponseWriter, field, msg string) {
	writeErrors(w, http.StatusUnauthorized, fieldErr(field, msg, 0))
}
func forbidden(w http.ResponseWriter, field, msg string) {
	writeErrors(w, http.StatusForbidden, fieldErr(field, msg, 0))
}
func notFound(w http.ResponseWriter, what string) {
	writeErrors(w, http.StatusNotFound, fieldErr("", what+" not found", 0))
}

// hasField reports whether e already holds an error for field, so that a
// field is not reported twice.
func hasField(e errs, f string) bool {
	for _, x := range e {
		if x.Field == f {
			return true
		}
	}
	return false
}
