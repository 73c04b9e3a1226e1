package paymentsim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// apiError is an error answer: {"error": {"code", "message", "field", ...}}.
type apiError struct {
	Status          int    `json:"-"`
	Code            string `json:"code"`
	Message         string `json:"message"`
	Field           string `json:"field,omitempty"`
	OrderID         string `json:"order_id,omitempty"`
	VerificationURL string `json:"verification_url,omitempty"`
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func badRequest(field, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: "invalid_request", Field: field, Message: fmt.Sprintf(format, args...)}
}

func errCode(status int, code, field, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

func notFound(field, what string) *apiError {
	return &apiError{Status: http.StatusNotFound, Code: "not_found", Field: field, Message: what + " not found"}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.Status, map[string]*apiError{"error": e})
}
