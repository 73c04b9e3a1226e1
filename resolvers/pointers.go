package resolvers

import "strings"

// Optional GraphQL inputs arrive as pointers and optional upstream strings
// as empty text; these helpers convert between the two conventions.

// deref reads an optional input, "" when it was not given.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// strPtr makes an upstream's empty string an absent (null) GraphQL value.
func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// enumOf reads an upstream's name for one of a graph enum's values (all),
// in any case, without the copy strings.ToUpper makes of a lower-case one.
func enumOf[T ~string](all []T, s string) (T, bool) {
	for _, v := range all {
		if strings.EqualFold(s, string(v)) {
			return v, true
		}
	}
	return "", false
}

// optional is strPtr for a string the caller has copied into the block it
// allocated for a model: p itself, or nil when the string is empty, so that
// one allocation holds a model and all its optional strings.
func optional(p *string) *string {
	if *p == "" {
		return nil
	}
	return p
}
