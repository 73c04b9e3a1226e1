// Package passwords is the gateway's rule for a new password, checked
// before the upstream is asked to take it, as current guidance for
// memorised secrets gives it (NIST SP 800-63B, 3.1.1.2): a length in
// characters, within the upstream's limit in bytes; not blank; not the
// account's e-mail address, nor the password it replaces; not on a list of
// passwords common in breaches, shipped with the gateway (common.txt). No
// composition rules, which the guidance advises against. Each refusal says
// which rule failed, and never repeats the password.
package passwords

import (
	_ "embed"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of a password: at least MinChars characters, and at most MaxBytes
// bytes of UTF-8, the banking upstream's limit (bcrypt's).
const (
	MinChars = 8
	MaxBytes = 72
)

//go:embed common.txt
var commonText string

// common holds the list, lower-cased.
var common = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, line := range strings.Split(commonText, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m[strings.ToLower(line)] = struct{}{}
	}
	return m
}()

// Account is what a password must not be: the account's e-mail address and
// its current password, where known ("" when not).
type Account struct {
	Email   string
	Current string
}

// Check returns "" when pw may be a new password of a, else the rule it
// fails, as a sentence about "the password" that a message can follow a
// field name with.
func Check(pw string, a Account) string {
	switch {
	case utf8.RuneCountInString(pw) < MinChars:
		return "must be at least 8 characters"
	case len(pw) > MaxBytes:
		return "must be at most 72 bytes (the bank's limit): letters outside plain ASCII take two to four bytes each"
	case strings.TrimFunc(pw, unicode.IsSpace) == "":
		return "must not be only spaces"
	case oneRune(pw):
		return "must not be one character repeated"
	case a.Email != "" && sameText(pw, a.Email):
		return "must not be the account's e-mail address"
	case a.Email != "" && sameText(pw, localPart(a.Email)):
		return "must not be the name of the account's e-mail address"
	case a.Current != "" && pw == a.Current:
		return "must differ from the current password"
	case isCommon(pw):
		return "must not be one of the most common passwords; choose a less predictable one"
	}
	return ""
}

func sameText(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}

func localPart(email string) string {
	if i := strings.LastIndexByte(email, '@'); i > 0 {
		return email[:i]
	}
	return email
}

func oneRune(s string) bool {
	first, _ := utf8.DecodeRuneInString(s)
	for _, r := range s {
		if r != first {
			return false
		}
	}
	return true
}

func isCommon(pw string) bool {
	_, ok := common[strings.ToLower(strings.TrimSpace(pw))]
	return ok
}
