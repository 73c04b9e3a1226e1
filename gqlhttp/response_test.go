package gqlhttp

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/assert"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// writeResponse copies gqlgen's data instead of letting encoding/json
// re-compact it; what it writes must mean what json.Marshal of the response
// wrote, member for member, and only differ where encoding/json escaped <, >
// and & for HTML (the answer is application/json, never HTML).
func TestWriteResponseWritesWhatEncodingJSONWrote(t *testing.T) {
	yes := true
	for name, resp := range map[string]*graphql.Response{
		"data":                {Data: json.RawMessage(`{"customers":[{"id":"Q3VzdG9tZXI6MQ","number":"a<b \u0026 \"c\""}]}`)},
		"null data":           {},
		"errors and data":     {Data: json.RawMessage(`{"order":null}`), Errors: gqlerror.List{{Message: "no such order", Path: ast.Path{ast.PathName("order")}, Extensions: map[string]any{"code": "NOT_FOUND"}}}},
		"extensions":          {Data: json.RawMessage(`{"a":1}`), Extensions: map[string]any{"upstreamCalls": 2}},
		"incremental":         {Data: json.RawMessage(`{"b":2}`), Label: "l", Path: ast.Path{ast.PathName("x"), ast.PathIndex(0)}, HasNext: &yes},
		"errors, no data key": {Errors: gqlerror.List{{Message: "bad"}}},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(resp)
			assert.NoError(t, err)
			rec := httptest.NewRecorder()
			writeResponse(rec, resp)
			assert.JSONEq(t, string(want), rec.Body.String())
			assert.Equal(t, string(want), htmlEscaped(rec.Body.Bytes()), "the same bytes, but for HTML escapes")
		})
	}
}

func htmlEscaped(b []byte) string {
	var out []byte
	for _, c := range b {
		switch c {
		case '<', '>', '&':
			out = append(out, `\u00`...)
			out = append(out, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		default:
			out = append(out, c)
		}
	}
	return string(out)
}
