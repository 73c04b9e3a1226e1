package payments

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrorResponse is a non-2xx answer of the payments upstream. The spec names
// only two things an error carries (the `verification required` name and,
// for a failed order, the order id); the rest of the body is read as the
// upstream documents it: {"error": {"code", "message", "field", "order_id"}}.
type ErrorResponse struct {
	StatusCode      int
	Code            string `json:"code"`
	Message         string `json:"message"`
	Field           string `json:"field,omitempty"`
	OrderID         string `json:"order_id,omitempty"`
	VerificationURL string `json:"verification_url,omitempty"`
}

func (e *ErrorResponse) Error() string {
	msg := fmt.Sprintf("payments: %d %s", e.StatusCode, e.Code)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Field != "" {
		msg += " (field " + e.Field + ")"
	}
	return msg
}

// VerificationRequired reports whether 3-D Secure must be performed before the
// operation can succeed (the spec's `verification required` error).
func (e *ErrorResponse) VerificationRequired() bool {
	return e.Code == "verification_required" || e.Message == "verification required"
}

// UnavailableError means the upstream could not be reached or did not answer
// in time, or its circuit breaker is open.
type UnavailableError struct {
	Op  string
	Err error
}

func (e *UnavailableError) Error() string {
	return "payments: " + e.Op + ": unavailable: " + e.Err.Error()
}
func (e *UnavailableError) Unwrap() error { return e.Err }

// CheckResponse returns nil for a 2xx answer and an *ErrorResponse otherwise.
func CheckResponse(r *http.Response) error {
	if r.StatusCode >= 200 && r.StatusCode < 300 {
		return nil
	}
	e := &ErrorResponse{StatusCode: r.StatusCode}
	data, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &body) == nil && len(body.Error) > 0 {
		if json.Unmarshal(body.Error, e) != nil {
			// Some servers send "error": "text".
			var text string
			if json.Unmarshal(body.Error, &text) == nil {
				e.Message = text
			}
		}
	}
	if e.Code == "" {
		e.Code = http.StatusText(r.StatusCode)
	}
	return e
}

// AsError unwraps err into an *ErrorResponse when it is one.
func AsError(err error) (*ErrorResponse, bool) {
	var e *ErrorResponse
	ok := errors.As(err, &e)
	return e, ok
}
