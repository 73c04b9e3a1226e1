package gqlhttp

import (
	"bytes"
	"encoding/json"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// Resuming a GET event stream with Last-Event-ID. The browser's EventSource
// reconnects by itself, with the URL it was opened with and, when the
// stream gave its events ids, a Last-Event-ID header naming the last one it
// received. A GET stream of the events subscription gives each event its
// cursor as its id, and a reconnection with Last-Event-ID resumes after it:
// the header takes the place of the after argument's variable. Without it
// an EventSource would resume after the cursor of its URL, and deliver
// again every event it had received since.

// lastEventIDHeader is the header of a reconnecting EventSource.
const lastEventIDHeader = "Last-Event-ID"

// resumeFrom sets the variable given as the after argument of the events
// root field of params' operation to id. A document that does not parse,
// an operation without an events field, or an after that is no variable,
// is left as sent: execution answers it as it would any other.
func resumeFrom(params *graphql.RawParams, id string, maxTokens int) {
	if id == "" {
		return
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: params.Query}, maxTokens)
	if err != nil {
		return
	}
	var op *ast.OperationDefinition
	switch {
	case params.OperationName != "":
		op = doc.Operations.ForName(params.OperationName)
	case len(doc.Operations) == 1:
		op = doc.Operations[0]
	}
	if op == nil || op.Operation != ast.Subscription {
		return
	}
	for _, sel := range op.SelectionSet {
		f, ok := sel.(*ast.Field)
		if !ok || f.Name != "events" {
			continue
		}
		after := f.Arguments.ForName("after")
		if after == nil || after.Value == nil || after.Value.Kind != ast.Variable {
			return
		}
		if params.Variables == nil {
			params.Variables = map[string]any{}
		}
		params.Variables[after.Value.Raw] = id
		return
	}
}

// eventID is the cursor of an events subscription's event in a frame
// gqlgen's SSE transport writes ("event: next\ndata: {...}\n\n"), or "":
// the cursor of the only root field's value, when it has one.
func eventID(frame []byte) string {
	data, ok := bytes.CutPrefix(frame, []byte("event: next\ndata: "))
	if !ok {
		return ""
	}
	var resp struct {
		Data map[string]*struct {
			Cursor string `json:"cursor"`
		} `json:"data"`
	}
	if json.Unmarshal(bytes.TrimSpace(data), &resp) != nil || len(resp.Data) != 1 {
		return ""
	}
	for _, v := range resp.Data {
		if v != nil && cursorLike(v.Cursor) {
			return v.Cursor
		}
	}
	return ""
}

// cursorLike reports whether s can be an SSE id: a cursor is base64url,
// never a line break (which would end the field) nor a NUL (which a
// client ignores the id for).
func cursorLike(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
