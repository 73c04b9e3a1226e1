package gqlhttp

import (
	"encoding/json"
	"testing"
)

// FuzzSetVariable: a map path from a client never panics, whatever the
// variables' shape (gqlgen's own setter panicked on a path through a
// string or past a list's end).
func FuzzSetVariable(f *testing.F) {
	for _, s := range [][2]string{
		{`{"input":{"file":null}}`, "variables.input.file"},
		{`{"a":[null,null]}`, "variables.a.1"},
		{`{"a":[null]}`, "variables.a.5"},
		{`{"a":[null]}`, "variables.a.-1"},
		{`{"a":"x"}`, "variables.a.b.c"},
		{`{}`, "variables."},
		{`{}`, "query"},
		{`{"a":{"b":[{"c":null}]}}`, "variables.a.b.0.c"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, vars, path string) {
		var v map[string]any
		if json.Unmarshal([]byte(vars), &v) != nil {
			return
		}
		setVariable(v, path, "upload")
	})
}
