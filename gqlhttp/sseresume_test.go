package gqlhttp

import (
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

func TestResumeFromSetsTheAfterVariableOfEvents(t *testing.T) {
	for _, c := range []struct {
		name, query, op string
		vars            map[string]any
		want            map[string]any
	}{
		{"the variable given as after", `subscription($c: String) { e: events(after: $c) { cursor } }`, "", map[string]any{"c": "old"}, map[string]any{"c": "last"}},
		{"no variables sent", `subscription($after: String) { events(after: $after) { cursor } }`, "", nil, map[string]any{"after": "last"}},
		{"the named operation", `subscription A($x: String) { events(after: $x) { cursor } } subscription B($y: String) { events(after: $y) { cursor } }`, "B", nil, map[string]any{"y": "last"}},
		{"an after written in the document", `subscription { events(after: "old") { cursor } }`, "", nil, nil},
		{"no events field", `subscription($after: String) { orderUpdates(after: $after) { id } }`, "", nil, nil},
		{"a query", `query($after: String) @live { events(after: $after) { cursor } }`, "", nil, nil},
		{"a document that does not parse", `subscription { events(`, "", nil, nil},
	} {
		p := &graphql.RawParams{Query: c.query, OperationName: c.op, Variables: c.vars}
		resumeFrom(p, "last", 1000)
		if len(p.Variables) != len(c.want) {
			t.Errorf("%s: variables %v, want %v", c.name, p.Variables, c.want)
			continue
		}
		for k, v := range c.want {
			if p.Variables[k] != v {
				t.Errorf("%s: variables %v, want %v", c.name, p.Variables, c.want)
			}
		}
	}
}

func TestEventIDIsTheCursorOfTheOnlyRootField(t *testing.T) {
	for frame, want := range map[string]string{
		"event: next\ndata: {\"data\":{\"events\":{\"cursor\":\"AbC-_09\",\"event\":{}}}}\n\n":  "AbC-_09",
		"event: next\ndata: {\"data\":{\"e\":{\"cursor\":\"AbC\"}}}\n\n":                        "AbC",
		"event: next\ndata: {\"data\":{\"events\":{\"cursor\":\"a\\nid: forged\"}}}\n\n":        "",
		"event: next\ndata: {\"data\":{\"a\":{\"cursor\":\"x\"},\"b\":{\"cursor\":\"y\"}}}\n\n": "",
		"event: next\ndata: {\"data\":{\"wallets\":[]}}\n\n":                                    "",
		"event: next\ndata: {\"errors\":[{\"message\":\"x\"}],\"data\":null}\n\n":               "",
		"event: complete\n\n": "",
		":\n\n":               "",
	} {
		if got := eventID([]byte(frame)); got != want {
			t.Errorf("eventID(%q) = %q, want %q", frame, got, want)
		}
	}
}
