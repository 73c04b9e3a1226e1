// Package redact keeps secrets and card data out of what the gateway writes
// down: log records, error messages shown to clients, trace attributes. It
// is the last line of defence, behind the rule that nothing from a request
// body, a header or an upstream credential is logged at all: whatever a
// resolver or a library puts into a message, card numbers (13 to 19 digits
// that pass the Luhn check), card tokens, JWTs, bearer credentials and the
// merchant's key formats come out as [REDACTED], and so does the value of
// any attribute whose name says it is a secret (password, token, key, cvc,
// pan, authorization, cookie, screening, ...).
package redact

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
)

// Mask replaces what is redacted.
const Mask = "[REDACTED]"

var (
	// Token-shaped secrets, matched anywhere in a text.
	secretRE = regexp.MustCompile(strings.Join([]string{
		`eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}(\.[A-Za-z0-9_-]*)?`, // JWT (banking access tokens)
		`(?i)bearer\s+[A-Za-z0-9._~+/=-]{8,}`,                        // Authorization values
		`\b(tok|pm|sk|pk_live|at|ck)_[A-Za-z0-9_-]{6,}`,              // card tokens, merchant and customer keys
	}, "|"))
	// Digit runs that may be card numbers, spaces or dashes allowed.
	digitsRE = regexp.MustCompile(`\b\d(?:[ -]?\d){12,18}\b`)
	// A CVC next to its name, as in "cvc2=123" or `"cvc": "123"`.
	cvcRE = regexp.MustCompile(`(?i)\b(cvc2?|cvv2?|csc)(["']?\s*[:=]\s*["']?)\d{3,4}`)
)

// secretKeys are attribute names (lower case, without separators) whose
// values are never logged, whatever they look like.
var secretKeys = []string{"password", "passwd", "secret", "token", "apikey", "privatekey", "accesstoken",
	"authorization", "cookie", "pan", "cvc", "cvc2", "cvv", "cardnumber", "twofacode", "otp", "customerkey",
	// Screening results say whether a person is on a sanctions list or
	// politically exposed: personal data no log needs.
	"screening", "screeninginfo", "screeningprofile"}

// String returns s with every secret-looking part replaced by Mask.
func String(s string) string {
	if s == "" {
		return s
	}
	s = secretRE.ReplaceAllString(s, Mask)
	s = cvcRE.ReplaceAllString(s, "${1}${2}"+Mask)
	return digitsRE.ReplaceAllStringFunc(s, func(m string) string {
		if luhn(m) {
			return Mask
		}
		return m
	})
}

// SecretKey reports whether an attribute named key holds a secret.
func SecretKey(key string) bool {
	k := strings.NewReplacer("_", "", "-", "", ".", "", " ", "").Replace(strings.ToLower(key))
	for _, s := range secretKeys {
		if k == s || strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}

// luhn reports whether the digits of s (separators ignored) pass the Luhn
// check, as every card number does.
func luhn(s string) bool {
	sum, n := 0, 0
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if c < '0' || c > '9' {
			continue
		}
		d := int(c - '0')
		if n%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		n++
	}
	return n >= 13 && sum%10 == 0
}

// Handler wraps an slog.Handler so that every record it passes on is
// redacted: the message, string and error attributes (in groups too), and
// attributes named like secrets.
type Handler struct{ next slog.Handler }

var _ slog.Handler = Handler{}

// NewHandler returns next behind redaction.
func NewHandler(next slog.Handler) Handler { return Handler{next: next} }

// Enabled implements slog.Handler.
func (h Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h Handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(Attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (h Handler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = Attr(a)
	}
	return Handler{next: h.next.WithAttrs(red)}
}

// WithGroup implements slog.Handler.
func (h Handler) WithGroup(name string) slog.Handler { return Handler{next: h.next.WithGroup(name)} }

// Attr redacts one attribute. Values that know how to log themselves
// (slog.LogValuer, such as session.Secret) are resolved first, so their own
// redaction still applies.
func Attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	if SecretKey(a.Key) && !(v.Kind() == slog.KindString && v.String() == "") {
		return slog.String(a.Key, Mask)
	}
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, ga := range g {
			red[i] = Attr(ga)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, String(x.Error()))
		case interface{ String() string }:
			return slog.String(a.Key, String(x.String()))
		case []byte:
			return slog.String(a.Key, String(string(x)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
