package gqlhttp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

func testLimit() *DocumentLimit {
	d := &DocumentLimit{MaxTokens: 5000, MaxFields: 100, MaxDepth: 4, MaxIntrospectionDepth: 6,
		MaxAliases: 3, MaxRootFields: 3, MaxSameName: 5, MaxDirectives: 4}
	if err := d.Validate(nil); err != nil {
		panic(err)
	}
	return d
}

func fanOut(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{ a { ...F%d } }\nfragment F0 on T { x }\n", n)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "fragment F%d on T { ...F%d ...F%d }\n", i, i-1, i-1)
	}
	return b.String()
}

func TestDocumentLimitMeasure(t *testing.T) {
	d := testLimit()
	cases := []struct {
		name, doc, want string // want: a fragment of the refusal, "" to pass
	}{
		{"small", "{ a { b c } }", ""},
		{"depth at the limit", "{ a { b { c { d } } } }", ""},
		{"depth over the limit", "{ a { b { c { d { e } } } } }", "nests 5 levels"},
		{"depth through a fragment", "{ a { ...F } } fragment F on T { b { c { d { e } } } }", "nests 5 levels"},
		{"depth through an inline fragment", "{ a { ... on T { b { c { d { e } } } } } }", "nests 5 levels"},
		{"introspection has its own depth", "{ __schema { types { fields { type { ofType { name } } } } } }", "introspection is disabled"},
		{"root fields", "{ a b c d }", "4 root fields"},
		{"root fields through fragments", "{ ...R } fragment R on Query { a b c d }", "4 root fields"},
		{"aliases", "{ a { x1: b x2: b x3: b x4: b } }", "the field"}, // same name b? no: aliases differ
		{"aliases through fan-out", "{ a { ...F } } fragment F on T { ...G ...G } fragment G on T { x: y z: w }", "4 aliases"},
		{"same name 5 times", "{ a { b b b b b } }", ""},
		{"same name 6 times", "{ a { b b b b b b } }", "\"b\" is selected more than 5"},
		{"same name through fragments", "{ a { ...A ...B } } fragment A on T { b b b } fragment B on T { b b b }", "\"b\" is selected more than 5"},
		{"same name through inline fragments", "{ a { ... on X { b b b } ... on Y { b b b } } }", "\"b\" is selected more than 5"},
		{"fan-out", fanOut(30), "\"x\" is selected more than 5"},
		{"fan-out of 200 does not overflow", fanOut(200), "\"x\" is selected more than 5"},
		{"a cycle", "{ a { ...A } } fragment A on T { ...B } fragment B on T { ...A }", "spreads itself"},
		{"an unknown fragment is the validator's", "{ a { ...Nope } }", ""},
		{"directives at the limit", "{ a @skip(if: false) { b @include(if: true) ... on T @skip(if: false) { c } ...F @skip(if: false) } } fragment F on T { d }", ""},
		{"directives through a fragment", "{ a { ...F ...F } } fragment F on T { b @skip(if: false) c @skip(if: false) d @skip(if: false) }", "operation uses 6 directives"},
	}
	// The aliases case above trips the alias limit before names repeat.
	cases[8].want = "4 aliases"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: tc.doc})
			if err != nil {
				t.Fatal(err)
			}
			got := d.Measure(doc)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("Measure = %q, want %q", got, tc.want)
			}
		})
	}
	wide := testLimit()
	wide.MaxSameName = 1 << 30
	for _, n := range []int{30, 200} {
		doc, _ := parser.ParseQuery(&ast.Source{Input: fanOut(n)})
		if got := wide.Measure(doc); !strings.Contains(got, "more than 100 fields") {
			t.Errorf("fan-out of %d: %q", n, got)
		}
	}
	on := testLimit()
	on.Introspection = true
	doc, _ := parser.ParseQuery(&ast.Source{Input: "{ __schema { types { fields { type { ofType { name } } } } } }"})
	if got := on.Measure(doc); got != "" {
		t.Errorf("introspection 5 deep, limit 6: %q", got)
	}
	doc, _ = parser.ParseQuery(&ast.Source{Input: "{ __schema { types { fields { type { ofType { ofType { ofType { name } } } } } } } }"})
	if got := on.Measure(doc); !strings.Contains(got, "introspection nests 8") {
		t.Errorf("introspection 8 deep, limit 6: %q", got)
	}
}

// The CPU cost of refusing the documents of the defects issue, without
// HTTP: go test -run '^$' -bench DocumentLimit ./gqlhttp
func BenchmarkDocumentLimit(b *testing.B) {
	d := &DocumentLimit{MaxTokens: 5000, MaxFields: 1000, MaxDepth: 10, MaxIntrospectionDepth: 16,
		MaxAliases: 30, MaxRootFields: 20, MaxSameName: 30, MaxDirectives: 50}
	_ = d.Validate(nil)
	for _, bc := range []struct{ name, doc string }{
		{"repeated-fields-10000", "{ viewer { " + strings.Repeat("kind ", 10000) + "} }"},
		{"repeated-fields-4000", "{ viewer { " + strings.Repeat("kind ", 4000) + "} }"},
		{"fragment-fan-out-24", fanOut(24)},
		{"fragment-fan-out-60", fanOut(60)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				// A new text each time: the cache of passed documents
				// must not answer.
				p := &graphql.RawParams{Query: bc.doc + fmt.Sprintf("\n# %d", i)}
				if err := d.MutateOperationParameters(b.Context(), p); err == nil {
					b.Fatal("not refused")
				}
			}
		})
	}
}
