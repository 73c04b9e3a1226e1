package resolvers

import (
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
)

// The package's one validator: every input check of every domain goes
// through it, so bad input costs no upstream call and always comes back as
// BAD_USER_INPUT naming the GraphQL field (input.firstName), never the
// upstream's name for it (first_name).

// acceptedCountries is the banking spec's list of corporation countries.
var acceptedCountries = []string{"AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU",
	"IS", "IE", "IT", "LV", "LI", "LT", "LU", "MT", "NL", "NO", "PL", "PT", "RO", "SK", "SI", "ES", "SE", "CH", "GB"}

// validator collects the first error; later checks are skipped.
type validator struct{ err error }

func (v *validator) fail(field, format string, args ...any) {
	if v.err == nil {
		v.err = gqlerr.BadInput(field, format, args...)
	}
}

// required checks a mandatory text of at most max characters (0: no limit).
func (v *validator) required(field, s string, max int) {
	if strings.TrimSpace(s) == "" {
		v.fail(field, "%s is required", field)
		return
	}
	v.length(field, s, max)
}

// optional checks a text when given: not blank, at most max characters.
func (v *validator) optional(field string, s *string, max int) {
	if s == nil {
		return
	}
	v.required(field, *s, max)
}

func (v *validator) length(field, s string, max int) {
	if max > 0 && utf8.RuneCountInString(s) > max {
		v.fail(field, "%s must be at most %d characters", field, max)
	}
}

func (v *validator) twoLetter(field string, s *string) {
	if s == nil {
		return
	}
	if len(*s) != 2 || !isUpperAlpha(*s) {
		v.fail(field, "%s must be a two-letter uppercase country code such as LV", field)
	}
}

func (v *validator) acceptedCountry(field string, s *string) {
	if s == nil {
		return
	}
	if !slices.Contains(acceptedCountries, *s) {
		v.fail(field, "%s must be one of the accepted countries (%s)", field, strings.Join(acceptedCountries, ", "))
	}
}

func (v *validator) date(field string, s *string) {
	if s == nil {
		return
	}
	if _, err := time.Parse(model.DateLayout, *s); err != nil {
		v.fail(field, "%s must be a date YYYY-MM-DD", field)
	}
}

func (v *validator) email(field string, s *string) {
	if s == nil {
		return
	}
	if a, err := mail.ParseAddress(*s); err != nil || a.Address != *s {
		v.fail(field, "%s must be an e-mail address", field)
	}
}

// isUpperAlpha reports ASCII A-Z only: country codes are never localised.
func isUpperAlpha(s string) bool {
	for _, r := range s {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

// checkText checks one text of at most maxText characters.
func checkText(field, s string, required bool) error {
	var v validator
	if required {
		v.required(field, s, maxText)
	} else {
		v.length(field, s, maxText)
	}
	return v.err
}

// optText checks an optional text when it is given.
func optText(field string, v *string) error {
	if v == nil {
		return nil
	}
	return checkText(field, *v, false)
}
