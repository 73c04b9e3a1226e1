package gqlhttp

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// FuzzRequestDecoder feeds arbitrary bodies to the POST decoder: it never
// panics, answers either success or a 4xx, and its message never quotes the
// body. Run: go test -run '^$' -fuzz FuzzRequestDecoder -fuzztime 60s ./gqlhttp
func FuzzRequestDecoder(f *testing.F) {
	for _, s := range []string{
		`{"query":"{ viewer { kind } }"}`,
		`{"query":"query($a: Int) { x }","variables":{"a":1},"operationName":"Q","extensions":{"persistedQuery":{"version":1,"sha256Hash":"ab"}}}`,
		`{"query":"x",}`, `[{"query":"x"}]`, ``, `   `, `"x"`, `{"query": 42}`, `{"query":"x"} {}`,
		strings.Repeat("[", 100), `{"variables":` + strings.Repeat(`{"a":`, 50) + `1` + strings.Repeat(`}`, 50) + `}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var p graphql.RawParams
		status, msg := checkParams(body, &p)
		if msg == "" {
			if status != 0 {
				t.Fatalf("accepted with status %d", status)
			}
			return
		}
		if status < 400 || status > 499 {
			t.Fatalf("status %d for a bad body", status)
		}
		if len(body) > 8 && strings.Contains(msg, string(body)) {
			t.Fatalf("message %q quotes the body", msg)
		}
	})
}

// FuzzDocumentLimit measures arbitrary documents: it never panics and
// always ends, whatever the fragments do (cycles, fan-out, unknown names).
// Run: go test -run '^$' -fuzz FuzzDocumentLimit -fuzztime 60s ./gqlhttp
func FuzzDocumentLimit(f *testing.F) {
	for _, s := range []string{
		"{ a { b c } }",
		"{ a { ...F } } fragment F on T { b { ...G } } fragment G on T { c }",
		"{ a { ...A } } fragment A on T { ...B } fragment B on T { ...A }",
		fanOut(40),
		"{ __schema { types { fields { type { ofType { name } } } } } }",
		"{ a { ... on X { b b b } ... on Y { b b b } x1: c x2: c } }",
		"query Q { a } mutation M { b } subscription S { c }",
	} {
		f.Add(s)
	}
	d := testLimit()
	f.Fuzz(func(t *testing.T, src string) {
		doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: src}, d.MaxTokens)
		if err != nil {
			return
		}
		_ = d.Measure(doc)
	})
}

// FuzzPOSTTransport drives the whole POST transport without an executor for
// bodies that fail to decode: the answer is a 4xx JSON error with a code.
func FuzzPOSTTransport(f *testing.F) {
	f.Add([]byte(`{"query":"x",}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var p graphql.RawParams
		if _, msg := checkParams(body, &p); msg == "" {
			return // a decodable body needs an executor; FuzzRequestDecoder covers decoding
		}
		rec := httptest.NewRecorder()
		req, _ := http.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		POST{MaxBodyBytes: 1 << 20}.Do(rec, req, nil)
		if rec.Code < 400 || rec.Code > 499 || !bytes.Contains(rec.Body.Bytes(), []byte(`"code":"BAD_USER_INPUT"`)) {
			t.Fatalf("answer %d %s", rec.Code, rec.Body.Bytes())
		}
	})
}
