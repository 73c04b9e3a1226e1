package paymentsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
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

// maxBody bounds request bodies; the real limit is "not shown".
const maxBody = 1 << 20

// readJSON reads the body and checks that it is one JSON value.
func readJSON(r *http.Request) (json.RawMessage, *apiError) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, badRequest("", "cannot read body: %v", err)
	}
	if len(b) > maxBody {
		return nil, badRequest("", "body larger than %d bytes", maxBody)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, badRequest("", "body is required")
	}
	if !json.Valid(b) {
		return nil, badRequest("", "malformed JSON")
	}
	return json.RawMessage(b), nil
}

// decodeInto unmarshals raw into v, turning type errors into invalid_request
// naming the field under prefix.
func decodeInto(raw json.RawMessage, v any, prefix string) *apiError {
	err := json.Unmarshal(raw, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		f := join(prefix, te.Field)
		if te.Field == "" {
			f = prefix
		}
		return badRequest(f, "%s must be %s", nameOr(f, "body"), jsonKind(te.Type.Kind().String()))
	}
	return badRequest(prefix, "%v", err)
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "int", "int64", "int32":
		return "an integer"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "bool":
		return "a boolean"
	}
	return "of another type"
}

func nameOr(f, def string) string {
	if f == "" {
		return def
	}
	return f
}

// join builds a JSON path: join("order", "items") == "order.items",
// join("", "[2]") == "[2]", join("method", "[0]") == "method[0]".
func join(prefix, field string) string {
	switch {
	case prefix == "":
		return field
	case field == "":
		return prefix
	case strings.HasPrefix(field, "["):
		return prefix + field
	}
	return prefix + "." + field
}

// isNull reports whether a raw JSON value is absent or null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// firstByte returns the first byte of a JSON value, telling its kind.
func firstByte(raw json.RawMessage) byte {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return 0
	}
	return t[0]
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return json.RawMessage(b.Bytes())
}

// Key kinds, as the spec's Key column names them.
type keyKind int

const (
	kindPublic keyKind = 1 << iota
	kindPrivate
	kindCustomer
	kindAccess
)

func (k keyKind) String() string {
	var parts []string
	for _, p := range []struct {
		k keyKind
		n string
	}{{kindPublic, "public"}, {kindPrivate, "private"}, {kindCustomer, "customer"}, {kindAccess, "access token"}} {
		if k&p.k != 0 {
			parts = append(parts, p.n)
		}
	}
	return strings.Join(parts, " or ")
}

// principal is who a request acts as.
type principal struct {
	kind       keyKind
	customerID string // for kindCustomer
}

type ctxKey struct{}

func principalOf(r *http.Request) principal {
	p, _ := r.Context().Value(ctxKey{}).(principal)
	return p
}

// bearer reads the key from Authorization, or from the Authentication
// spelling of the spec's order examples.
func bearer(r *http.Request) string {
	for _, h := range []string{"Authorization", "Authentication"} {
		v := strings.TrimSpace(r.Header.Get(h))
		if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
			return strings.TrimSpace(v[7:])
		}
	}
	return ""
}

func (s *Sim) lookupKey(key string) (principal, bool) {
	switch key {
	case "":
		return principal{}, false
	case PublicKey:
		return principal{kind: kindPublic}, true
	case PrivateKey:
		return principal{kind: kindPrivate}, true
	case AccessToken:
		return principal{kind: kindAccess}, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.custKeys[key]; ok {
		return principal{kind: kindCustomer, customerID: id}, true
	}
	return principal{}, false
}

// authorize answers 401 for a missing or unknown key and 403 for a known key
// of a kind the route does not take.
func (s *Sim) authorize(allowed keyKind) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := s.lookupKey(bearer(r))
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="payments"`)
				writeErr(w, errCode(http.StatusUnauthorized, "unauthorized", "", "missing or unknown key"))
				return
			}
			if p.kind&allowed == 0 {
				writeErr(w, errCode(http.StatusForbidden, "forbidden_key", "", "this route takes a %s key", allowed))
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, p)))
		})
	}
}

// baseURL is the scheme and host the request came to, for URLs the sandbox
// hands out (3-D Secure page, onboarding form).
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func wantsJSON(r *http.Request) bool {
	return strings.Contains(strings.ToLower(r.Header.Get("Accept")), "application/json")
}
