package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
)

// repeatedFields is `{ viewer { kind kind ... } }` with n repetitions: the
// quadratic case of gqlparser's overlapping-fields rule.
func repeatedFields(n int) string {
	return "{ viewer { " + strings.Repeat("kind ", n) + "} }"
}

// fragmentFanOut is n fragments, each spreading the previous one twice:
// 1.7 KB that expands to 2^n fields.
func fragmentFanOut(n int) string {
	var b strings.Builder
	b.WriteString("query { viewer { ...F" + fmt.Sprint(n) + " } }\n")
	b.WriteString("fragment F0 on Viewer { kind }\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "fragment F%d on Viewer { ...F%d ...F%d }\n", i, i-1, i-1)
	}
	return b.String()
}

func nested(depth int) string {
	// viewer > corporation > persons > corporation ... repeated through
	// Person.corporation, a real cycle in the schema.
	q := "id"
	for i := 0; i < depth; i++ {
		if (depth-i)%2 == 1 {
			q = "corporation { " + q + " }"
		} else {
			q = "persons { " + q + " }"
		}
	}
	return "{ viewer { " + q + " } }"
}

// Defects issue, items 3 and 4: documents that cost seconds of CPU before
// are refused before validation, with a client code.
func TestExpensiveDocumentsAreRefused(t *testing.T) {
	g := startGateway(t)
	cases := []struct {
		name, query, reason string
	}{
		{"10,000 repeated fields", repeatedFields(10000), "PARSE_FAILED"}, // over the token limit
		{"4,000 repeated fields", repeatedFields(4000), "QUERY_TOO_LARGE"},
		{"31 repeated fields", repeatedFields(31), "QUERY_TOO_LARGE"},
		{"one field through 40 fragments", sameFieldThroughFragments(40), "QUERY_TOO_LARGE"},
		{"fragment fan-out of 24", fragmentFanOut(24), "QUERY_TOO_LARGE"},
		{"fragment fan-out of 60", fragmentFanOut(60), "QUERY_TOO_LARGE"},
		{"a fragment cycle", "{ viewer { ...A } } fragment A on Viewer { ...B } fragment B on Viewer { ...A }", "QUERY_TOO_LARGE"},
		{"nesting past the depth limit", nested(12), "QUERY_TOO_LARGE"},
		{"too many aliases", "{ " + aliases(40) + " }", "QUERY_TOO_LARGE"},
		{"too many directives", "{ viewer { kind" + strings.Repeat(" @include(if: true)", 60) + " } }", "QUERY_TOO_LARGE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := g.query(t, tc.query, nil)
			if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["reason"] != tc.reason {
				t.Fatalf("want BAD_USER_INPUT/%s, got %+v", tc.reason, r.Errors)
			}
			if len(r.Data) > 0 && string(r.Data) != "null" {
				t.Errorf("a refused document has data: %s", r.Data)
			}
		})
	}
	// What a real screen asks stays well inside: nested(8) is deeper than
	// any screen of the tests.
	for _, q := range []string{nested(8), widestAccepted(0), repeatedFields(30), sameFieldThroughFragments(30)} {
		if r := g.query(t, q, nil); r.code() == "BAD_USER_INPUT" {
			t.Errorf("a document within the limits was refused: %+v", r.Errors)
		}
	}
}

// sameFieldThroughFragments spreads n fragments that each select the same
// field into one selection set: the overlapping-fields rule compares them
// pairwise just as if they were written out.
func sameFieldThroughFragments(n int) string {
	var b strings.Builder
	b.WriteString("{ viewer { ")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "...S%d ", i)
	}
	b.WriteString("} }\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "fragment S%d on Viewer { kind }\n", i)
	}
	return b.String()
}

// widestAccepted is close to the costliest document the limits let
// through: every set repeats its field up to MaxSameName, nested as deep
// as the fields limit allows.
func widestAccepted(salt int) string {
	rep := func(f string) string { return strings.Repeat(f+" ", 30) }
	return fmt.Sprintf("# %d\n{ viewer { %s corporation { %s persons { %s corporation { %s persons { %s } } } } } }",
		salt, rep("kind"), rep("name"), rep("firstName"), rep("name"), rep("lastName"))
}

func aliases(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "a%d: __typename ", i)
	}
	return b.String()
}

// Defects issue, item 5: the introspection query that GraphiQL, Apollo and
// graphql-codegen send, with every option on, is answered with data. The
// documents are graphql-js's getIntrospectionQuery output, generated with
// graphql 16.11.0 and 17.1.0 (testdata/).
func TestStandardIntrospectionQueryIsAnswered(t *testing.T) {
	g := startGateway(t)
	for _, f := range []string{"testdata/introspection-graphql-js-16.graphql", "testdata/introspection-graphql-js-17.graphql"} {
		q, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Schema struct {
				QueryType struct{ Name string } `json:"queryType"`
				Types     []struct {
					Name string `json:"name"`
				} `json:"types"`
			} `json:"__schema"`
		}
		g.query(t, string(q), nil).decode(t, &d)
		if d.Schema.QueryType.Name != "Query" || len(d.Schema.Types) < 20 {
			t.Errorf("%s: introspection answered %+v", f, d.Schema.QueryType)
		}
	}
}

// Defects issue, item 6: with introspection off (the default in front of
// real upstreams), __schema is refused and validation errors suggest no
// field names; in sandbox mode both are on.
func TestIntrospectionAndSuggestionsFollowOneSetting(t *testing.T) {
	on := startGateway(t)
	off := startGateway(t, "-introspection", "false")

	if r := on.query(t, `{ __schema { queryType { name } } }`, nil); len(r.Errors) > 0 {
		t.Errorf("sandbox mode refuses introspection: %+v", r.Errors)
	}
	r := off.query(t, `{ __schema { queryType { name } } }`, nil)
	if len(r.Errors) == 0 || strings.Contains(string(r.Data), "Query") {
		t.Errorf("introspection off still answers: %s", r.Data)
	}
	if c := r.code(); c != "BAD_USER_INPUT" {
		t.Errorf("refused introspection: code %q, want BAD_USER_INPUT", c)
	}

	const typo = `{ viewr { kind } }`
	if r := on.query(t, typo, nil); len(r.Errors) == 0 || !strings.Contains(r.Errors[0].Message, "Did you mean") {
		t.Errorf("sandbox mode gives no suggestion: %+v", r.Errors)
	}
	for _, q := range []string{typo, `{ viewer { kinds } }`, `{ viewer }`} {
		r := off.query(t, q, nil)
		if len(r.Errors) == 0 {
			t.Fatalf("%s: no error", q)
		}
		for _, e := range r.Errors {
			if strings.Contains(e.Message, "Did you mean") {
				t.Errorf("%s: a suggestion leaks the schema: %s", q, e.Message)
			}
		}
	}
}

// The cost of refusing each expensive document, through HTTP, for the
// record in docs/security.md: go test -run '^$' -bench Refus ./e2e
func BenchmarkRefusingExpensiveDocuments(b *testing.B) {
	g := startGateway(b)
	for _, bc := range []struct{ name, query string }{
		{"repeated-fields-10000", repeatedFields(10000)},
		{"repeated-fields-4000", repeatedFields(4000)},
		{"fragment-fan-out-24", fragmentFanOut(24)},
		{"fragment-fan-out-60", fragmentFanOut(60)},
	} {
		body, _ := json.Marshal(map[string]any{"query": bc.query})
		b.Run("refused-"+bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				r := g.raw(b, http.MethodPost, "application/json", body, nil)
				if r.Status != http.StatusOK && r.Status != http.StatusBadRequest && r.Status != http.StatusUnprocessableEntity {
					b.Fatalf("status %d", r.Status)
				}
			}
		})
	}
	// The costliest accepted document, a new text each time so that no
	// cache answers: what validation costs at the limits.
	b.Run("accepted-widest", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			body, _ := json.Marshal(map[string]any{"query": widestAccepted(i)})
			g.raw(b, http.MethodPost, "application/json", body, nil)
		}
	})
}

// Every limit is configurable: FINGRAPH_LIMITS tightens them for one
// deployment.
func TestLimitsAreConfigurable(t *testing.T) {
	g := startGateway(t, "-limits", "depth=3,aliases=2")
	if r := g.query(t, nested(4), nil); r.code() != "BAD_USER_INPUT" {
		t.Errorf("depth 5 with a limit of 3: %+v", r.Errors)
	}
	if r := g.query(t, "{ "+aliases(3)+" }", nil); r.code() != "BAD_USER_INPUT" {
		t.Errorf("3 aliases with a limit of 2: %+v", r.Errors)
	}
	if r := g.query(t, "{ "+aliases(2)+" }", nil); len(r.Errors) > 0 {
		t.Errorf("2 aliases with a limit of 2: %+v", r.Errors)
	}
}

// The complexity limit counts page sizes: the same selection costs a
// hundred times more with first: 100 than with first: 1.
func TestComplexityCountsPageSizes(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	const fields = `id firstName lastName email phone country city street postCode region gender nationality
		dateOfBirth isBlocked isDirector isUbo position corporationId createdAt updatedAt`
	small := `{ persons(first: 1) { edges { node { ` + fields + ` } } } }`
	large := `{ persons(first: 100) { edges { node { ` + fields + ` } } } }`
	if r := g.query(t, small, nil); r.code() == "BAD_USER_INPUT" {
		t.Fatalf("one person's page refused: %+v", r.Errors)
	}
	r := g.query(t, large, nil)
	if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["reason"] != "COMPLEXITY_LIMIT_EXCEEDED" {
		t.Errorf("a hundred persons' page of 20 fields (2,000+): %+v", r.Errors)
	}
}
