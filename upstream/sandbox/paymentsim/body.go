package paymentsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

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
