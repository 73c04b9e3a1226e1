package payments

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// upstreamName names the payments upstream to the shared sender and in its
// refusals (Rejection.Service), which the typed checks look for.
const upstreamName = "payments"

// ErrorResponse is a non-2xx answer of the payments upstream. The spec names
// only two things an error carries (the `verification required` name and,
// for a failed order, the order id); the rest of the body is read as the
// upstream documents it: {"error": {"code", "message", "field", "order_id"}}.
type ErrorResponse struct {
	StatusCode int
	// KeyKind is the kind of key the refused request carried; it tells a
	// refused customer key (the session's) from the merchant's own.
	KeyKind         KeyKind `json:"-"`
	Code            string  `json:"code"`
	Message         string  `json:"message"`
	Field           string  `json:"field,omitempty"`
	OrderID         string  `json:"order_id,omitempty"`
	VerificationURL string  `json:"verification_url,omitempty"`
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

var _ roundtrip.Rejecter = (*ErrorResponse)(nil)

// Rejection presents the refusal to the gateway's edge. A 401 or 403 on the
// merchant's own keys is the gateway's misconfiguration, which no client
// can fix; a 401 on a customer key ends that customer's session.
func (e *ErrorResponse) Rejection() roundtrip.Rejection {
	r := roundtrip.Rejection{Service: upstreamName, Status: e.StatusCode, Code: e.Code, Field: e.Field, Message: e.Message}
	switch {
	case e.StatusCode == http.StatusUnauthorized && e.KeyKind == KeyCustomer:
		r.CredentialRefused = true
	case e.StatusCode == http.StatusUnauthorized:
		r.Misconfigured = "payments refused the gateway's credentials"
	case e.StatusCode == http.StatusForbidden && e.KeyKind != KeyCustomer:
		r.Misconfigured = "payments refused the gateway's credentials: wrong key kind for the route"
	}
	return r
}

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

// hasStatus reports whether err is a refusal of the payments upstream with
// one of statuses.
func hasStatus(err error, statuses ...int) bool {
	return roundtrip.HasStatus(err, upstreamName, statuses...)
}

// IsNotFound reports a 404: no such object, or none the key may see.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsConflict reports a 409, such as a webhook already registered for the
// company.
func IsConflict(err error) bool { return hasStatus(err, http.StatusConflict) }

// IsUnauthorized reports a 401: the key was missing, unknown or revoked.
func IsUnauthorized(err error) bool { return hasStatus(err, http.StatusUnauthorized) }

// IsForbidden reports a 403: the key may not call this route.
func IsForbidden(err error) bool { return hasStatus(err, http.StatusForbidden) }

// IsBadRequest reports a 400: the upstream refused the request as given,
// such as a listing cursor it does not know.
func IsBadRequest(err error) bool { return hasStatus(err, http.StatusBadRequest) }
