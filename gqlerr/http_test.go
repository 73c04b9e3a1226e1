package gqlerr_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fingraph/fingraph/gqlerr"
)

func TestWriteHTTPAnswersInTheGraphQLShape(t *testing.T) {
	rec := httptest.NewRecorder()
	gqlerr.WriteHTTP(rec, http.StatusForbidden, gqlerr.Forbidden, `need the "X-CSRF-Token" header <here>`)
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	assert.Equal(t, `{"errors":[{"message":"need the \"X-CSRF-Token\" header \u003chere\u003e","extensions":{"code":"FORBIDDEN"}}],"data":null}`, rec.Body.String())
}

func TestInternalErrorShowsOnlyTheInternalMessage(t *testing.T) {
	e := gqlerr.InternalError(assert.AnError)
	assert.Equal(t, gqlerr.InternalMessage, e.Message)
	assert.Equal(t, `{"errors":[{"message":"internal error","extensions":{"code":"INTERNAL"}}],"data":null}`, string(gqlerr.Body(gqlerr.Internal, gqlerr.InternalMessage)))
}
