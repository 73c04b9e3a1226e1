package graph

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// writeFields writes what gqlgen's FieldSet.MarshalGQL writes: every field
// in order, a repeated alias only its first time, with few fields (scanned)
// and with many (a map), and a deferred field's Null in place.
func TestWriteFieldsWritesWhatGqlgenWrites(t *testing.T) {
	for _, aliases := range [][]string{
		nil,
		{"id"},
		{"id", "number", "contact"},
		{"id", "id", "number", "id"},
		manyAliases(scanAliases+8, 5),
	} {
		fields := make([]graphql.CollectedField, len(aliases))
		for i, a := range aliases {
			fields[i] = graphql.CollectedField{Field: &ast.Field{Alias: a, Name: "f"}}
		}
		out := graphql.NewFieldSet(fields)
		for i := range out.Values {
			out.Values[i] = graphql.MarshalInt(i)
		}
		if len(out.Values) > 1 {
			out.Values[1] = graphql.Null
		}
		var want, got bytes.Buffer
		out.MarshalGQL(&want)
		writeFields(out, fields).MarshalGQL(&got)
		if got.String() != want.String() {
			t.Errorf("%d fields: writeFields wrote\n%s\ngqlgen's FieldSet writes\n%s", len(aliases), got.String(), want.String())
		}
	}
}

// manyAliases is n aliases in which every one of every k repeats an earlier
// one.
func manyAliases(n, k int) []string {
	out := make([]string, n)
	for i := range out {
		if i%k == k-1 {
			out[i] = out[i/2]
		} else {
			out[i] = fmt.Sprintf("a%d", i)
		}
	}
	return out
}
