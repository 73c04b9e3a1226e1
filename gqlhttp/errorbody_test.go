package gqlhttp

import (
	"net/http/httptest"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fingraph/fingraph/gqlerr"
)

// An error written before GraphQL execution has the bytes of the same error
// written by the transport after it.
func TestErrorBodyIsTheTransportsShape(t *testing.T) {
	msg := `the upload is "too" large <¼>`
	rec := httptest.NewRecorder()
	writeResponse(rec, &graphql.Response{Errors: gqlerror.List{{Message: msg,
		Extensions: map[string]any{"code": string(gqlerr.BadUserInput)}}}})
	if got, want := string(gqlerr.Body(gqlerr.BadUserInput, msg)), rec.Body.String(); got != want {
		t.Fatalf("gqlerr.Body = %s, transport wrote %s", got, want)
	}
}
