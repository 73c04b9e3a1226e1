package resolvers

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
