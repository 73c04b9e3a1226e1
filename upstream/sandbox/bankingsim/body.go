package bankingsim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// body is a decoded JSON object whose fields are read one by one, so that an
// error can name the exact field that is wrong (a struct decode cannot).
type body map[string]json.RawMessage

// decodeBody reads a JSON object. An empty body is an empty object.
func decodeBody(w http.ResponseWriter, r *http.Request) (body, bool) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		badRequest(w, fieldErr("", "cannot read body", CodeInvalid))
		return nil, false
	}
	b := body{}
	if len(bytes.TrimSpace(raw)) == 0 {
		return b, true
	}
	if err := json.Unmarshal(raw, &b); err != nil || b == nil {
		badRequest(w, fieldErr("", "body must be a JSON object", CodeInvalid))
		return nil, false
	}
	return b, true
}

// unknown reports fields that are not in allowed, sorted, as 10001 errors.
func (b body) unknown(e *errs, prefix string, allowed ...string) {
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	var bad []string
	for k := range b {
		if !ok[k] {
			bad = append(bad, k)
		}
	}
	sort.Strings(bad)
	for _, k := range bad {
		e.invalid(prefix+k, "unknown field")
	}
}

func (b body) has(k string) bool { _, ok := b[k]; return ok }

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// str reads a string field; present is false when it is absent or null.
func (b body) str(e *errs, prefix, k string) (v string, present bool) {
	raw, ok := b[k]
	if !ok || isNull(raw) {
		return "", false
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		e.invalid(prefix+k, "must be a string")
		return "", false
	}
	return v, true
}

// nullableStr reads a string field where null is a value (clears the field).
func (b body) nullableStr(e *errs, prefix, k string) (v *string, present bool) {
	raw, ok := b[k]
	if !ok {
		return nil, false
	}
	if isNull(raw) {
		return nil, true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		e.invalid(prefix+k, "must be a string")
		return nil, false
	}
	return &s, true
}

func (b body) boolean(e *errs, prefix, k string) (v bool, present bool) {
	raw, ok := b[k]
	if !ok || isNull(raw) {
		return false, false
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		e.invalid(prefix+k, "must be a boolean")
		return false, false
	}
	return v, true
}

func (b body) number(e *errs, prefix, k string) (v float64, present bool) {
	raw, ok := b[k]
	if !ok || isNull(raw) {
		return 0, false
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		e.invalid(prefix+k, "must be a number")
		return 0, false
	}
	return v, true
}

func (b body) strings(e *errs, prefix, k string) (v []string, present bool) {
	raw, ok := b[k]
	if !ok || isNull(raw) {
		return nil, false
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		e.invalid(prefix+k, "must be an array of strings")
		return nil, false
	}
	if v == nil {
		v = []string{}
	}
	return v, true
}

func (b body) object(e *errs, prefix, k string) (v body, present bool) {
	raw, ok := b[k]
	if !ok || isNull(raw) {
		return nil, false
	}
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		e.invalid(prefix+k, "must be an object")
		return nil, false
	}
	return v, true
}

var (
	countryRe = regexp.MustCompile(`^[A-Z]{2}$`)
	emailRe   = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)
)

// maxLen checks a length rule of the spec; lengths count characters.
func maxLen(e *errs, field, v string, n int) {
	if len([]rune(v)) > n {
		e.invalid(field, field+" must be at most "+itoa(n)+" characters")
	}
}

func checkDate(e *errs, field, v string) {
	if _, err := time.Parse("2006-01-02", v); err != nil {
		e.invalid(field, field+" must be a date YYYY-MM-DD")
	}
}

func checkCountry(e *errs, field, v string) {
	if !countryRe.MatchString(v) {
		e.invalid(field, field+" must be a two-letter uppercase code")
	}
}

func checkEmail(e *errs, field, v string) {
	if !emailRe.MatchString(v) {
		e.invalid(field, field+" must be an e-mail address")
	}
}

func normEmail(v string) string { return strings.ToLower(strings.TrimSpace(v)) }

func oneOf(e *errs, field, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	e.invalid(field, field+" must be one of "+strings.Join(allowed, ", "))
}

func itoa(n int) string { return strconv.Itoa(n) }
