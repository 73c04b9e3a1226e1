package resolvers

import (
	"context"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/gqlerr"
)

func ptr[T any](v T) *T { return &v }

// wantBadInput asserts that err is BAD_USER_INPUT naming field; an empty
// field wants no error.
func wantBadInput(t *testing.T, err error, field string) {
	t.Helper()
	if field == "" {
		assert.NoError(t, err)
		return
	}
	e, ok := gqlerr.As(err)
	require.True(t, ok, "want a gqlerr.Error for %s, got %v", field, err)
	assert.Equal(t, gqlerr.BadUserInput, e.Code, "code of %v", err)
	assert.Equal(t, field, e.Field, "field of %v", err)
}

func TestValidatorChecks(t *testing.T) {
	tests := []struct {
		name  string
		check func(v *validator)
		field string // "" when the input is valid
	}{
		{"required given", func(v *validator) { v.required("f", "Anna", 10) }, ""},
		{"required empty", func(v *validator) { v.required("f", "", 10) }, "f"},
		{"required blank", func(v *validator) { v.required("f", " \t", 10) }, "f"},
		{"required no limit", func(v *validator) { v.required("f", strings.Repeat("x", 5000), 0) }, ""},
		{"length at limit counts runes", func(v *validator) { v.required("f", strings.Repeat("ā", 10), 10) }, ""},
		{"length over limit", func(v *validator) { v.required("f", strings.Repeat("ā", 11), 10) }, "f"},
		{"optional absent", func(v *validator) { v.optional("f", nil, 10) }, ""},
		{"optional blank", func(v *validator) { v.optional("f", ptr(""), 10) }, "f"},
		{"optional too long", func(v *validator) { v.optional("f", ptr("12345678901"), 10) }, "f"},
		{"country code", func(v *validator) { v.twoLetter("f", ptr("LV")) }, ""},
		{"country code absent", func(v *validator) { v.twoLetter("f", nil) }, ""},
		{"country code lower case", func(v *validator) { v.twoLetter("f", ptr("lv")) }, "f"},
		{"country code three letters", func(v *validator) { v.twoLetter("f", ptr("LVA")) }, "f"},
		{"country code digit", func(v *validator) { v.twoLetter("f", ptr("L1")) }, "f"},
		{"country code non-ASCII", func(v *validator) { v.twoLetter("f", ptr("Ä")) }, "f"},
		{"accepted country", func(v *validator) { v.acceptedCountry("f", ptr("GB")) }, ""},
		{"country not accepted", func(v *validator) { v.acceptedCountry("f", ptr("US")) }, "f"},
		{"date", func(v *validator) { v.date("f", ptr("1990-02-28")) }, ""},
		{"date no such day", func(v *validator) { v.date("f", ptr("1990-02-30")) }, "f"},
		{"date unpadded", func(v *validator) { v.date("f", ptr("1990-2-1")) }, "f"},
		{"date with time", func(v *validator) { v.date("f", ptr("1990-02-01T00:00:00Z")) }, "f"},
		{"e-mail", func(v *validator) { v.email("f", ptr("anna@demo.test")) }, ""},
		{"e-mail absent", func(v *validator) { v.email("f", nil) }, ""},
		{"e-mail without @", func(v *validator) { v.email("f", ptr("anna.demo.test")) }, "f"},
		{"e-mail with display name", func(v *validator) { v.email("f", ptr("Anna <anna@demo.test>")) }, "f"},
		{"e-mail with spaces", func(v *validator) { v.email("f", ptr(" anna@demo.test")) }, "f"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var v validator
			tc.check(&v)
			wantBadInput(t, v.err, tc.field)
		})
	}
}

func TestValidatorKeepsTheFirstError(t *testing.T) {
	var v validator
	v.required("input.first", "", 10)
	v.email("input.second", ptr("nope"))
	wantBadInput(t, v.err, "input.first")
}

func TestCheckText(t *testing.T) {
	wantBadInput(t, checkText("f", "", true), "f")
	wantBadInput(t, checkText("f", "", false), "")
	wantBadInput(t, checkText("f", strings.Repeat("x", maxText), true), "")
	wantBadInput(t, checkText("f", strings.Repeat("x", maxText+1), false), "f")
	wantBadInput(t, optText("f", nil), "")
	wantBadInput(t, optText("f", ptr(strings.Repeat("x", maxText+1))), "f")
}

func TestCheckCardToken(t *testing.T) {
	const field = "input.payment.card.token"
	tests := []struct {
		name, token, query, want string
	}{
		{"variable", "tok_ok_1", "mutation($in: CreateOrderInput!) { createOrder(input: $in) { __typename } }", ""},
		{"no operation", "tok_ok_1", "", ""},
		{"empty", "", "", field},
		{"too long", strings.Repeat("t", maxTokenLen+1), "", field},
		{"space", "tok ok", "", field},
		{"newline", "tok\nok", "", field},
		{"quote", `tok"ok`, "", field},
		{"written into the query", "tok_ok_2", `mutation { createOrder(input: {payment: {card: {token: "tok_ok_2"}}}) { __typename } }`, field},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.query != "" {
				ctx = graphql.WithOperationContext(ctx, &graphql.OperationContext{RawQuery: tc.query})
			}
			err := checkCardToken(ctx, field, tc.token)
			wantBadInput(t, err, tc.want)
			if err != nil && tc.token != "" {
				assert.NotContains(t, err.Error(), tc.token, "an error must not echo the token")
			}
		})
	}
}
