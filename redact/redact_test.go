package redact_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/fingraph/fingraph/redact"
)

func TestString(t *testing.T) {
	cases := []struct{ in, want string }{
		{"card 4111111111111111 declined", "card [REDACTED] declined"},
		{"card 4111 1111 1111 1111 declined", "card [REDACTED] declined"},
		{"card 5555-4400-0000-1234?", "card 5555-4400-0000-1234?"}, // fails Luhn: not a card number
		{"pan=5555440000001235", "pan=5555440000001235"},           // fails Luhn
		{"order 1234567 of 2026", "order 1234567 of 2026"},
		{"token tok_ok_abcdef123 used", "token [REDACTED] used"},
		{"method pm_0a1b2c3d-4e5f", "method [REDACTED]"},
		{"key sk_sandbox_demo and pk_sandbox_demo", "key [REDACTED] and pk_sandbox_demo"},
		{"Authorization: Bearer abcdefghijklmnop", "Authorization: [REDACTED]"},
		{"x-access-token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig_nature", "x-access-token [REDACTED]"},
		{`{"cvc2": "123", "cvc":"4567"}`, `{"cvc2": "[REDACTED]", "cvc":"[REDACTED]"}`},
		{"cvc=123", "cvc=[REDACTED]"},
		{"created_at_2026 at noon", "created_at_2026 at noon"},
		{"", ""},
	}
	for _, tc := range cases {
		if got := redact.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSecretKey(t *testing.T) {
	for _, k := range []string{"password", "Password", "new_password", "sessionToken", "x-access-token", "apiKey", "private_key", "PAN", "cvc2", "Authorization", "two_fa_code", "customer_key", "screening_info", "screeningInfo", "overall_screening_info", "person_profile_screening"} {
		if !redact.SecretKey(k) {
			t.Errorf("%q is not taken for a secret", k)
		}
	}
	for _, k := range []string{"path", "status", "route", "session", "event_id", "keyword"} {
		if redact.SecretKey(k) {
			t.Errorf("%q is taken for a secret", k)
		}
	}
}

type stringer struct{}

func (stringer) String() string { return "holder of 4111111111111111" }

// Whatever a caller logs, the handler passes on no secret: messages,
// attributes by name and by content, groups, errors, stringers, and
// attributes attached with With.
func TestHandlerRedactsEveryRecord(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(redact.NewHandler(slog.NewJSONHandler(&buf, nil)))
	log = log.With("apiKey", "demo-api-key", "route", "/graphql")
	log.Info("charging 4111111111111111",
		"password", "demo-password",
		"note", "tok_ok_secret123 was used",
		slog.Group("upstream", "authorization", "Bearer abcdefghijk", "status", 401),
		"err", errors.New("upstream said cvc=123 is wrong"),
		"who", stringer{},
		"empty_token", "",
	)
	out := buf.String()
	for _, leak := range []string{"4111111111111111", "demo-password", "demo-api-key", "tok_ok_secret123", "abcdefghijk", "cvc=123"} {
		if strings.Contains(out, leak) {
			t.Errorf("log carries %q: %s", leak, out)
		}
	}
	for _, kept := range []string{`"route":"/graphql"`, `"status":401`, `"empty_token":""`} {
		if !strings.Contains(out, kept) {
			t.Errorf("log lost %s: %s", kept, out)
		}
	}
}
