package gqlhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// SSE is gqlgen's server-sent-events transport behind the same body
// checks as POST: the body is read and checked here, and gqlgen's decoder
// only ever sees a body that decodes. It also serves GET with Accept:
// text/event-stream (the browser's EventSource, graphql-sse's distinct
// connections, The Guild's HTTP executor), the operation read from the URL
// and handed to the same path as a POSTed body; a GET stream only reads: a
// mutation is refused with 405 before the stream starts, as GET refuses it.
//
// A GET stream of the events subscription gives each event its cursor as
// its SSE id, and a reconnection's Last-Event-ID resumes after it (see
// resumeFrom).
type SSE struct {
	transport.SSE
	MaxBodyBytes int64
	// MaxTokens bounds the parse of a GET stream's document when it
	// resumes with Last-Event-ID.
	MaxTokens int
}

// Supports implements graphql.Transport.
func (t SSE) Supports(r *http.Request) bool {
	if r.Method == http.MethodGet {
		return r.Header.Get("Upgrade") == "" && acceptsEventStream(r)
	}
	return t.SSE.Supports(r)
}

// acceptsEventStream reports whether the client asks for server-sent events.
func acceptsEventStream(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// Do implements graphql.Transport.
func (t SSE) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	var body []byte
	var status int
	var msg string
	get := r.Method == http.MethodGet
	if get {
		body, status, msg = urlBody(r, t.MaxBodyBytes, t.MaxTokens)
	} else {
		body, status, msg = readBody(w, r, t.MaxBodyBytes)
	}
	if msg == "" {
		var p graphql.RawParams
		if status, msg = checkParams(body, &p); msg == "" {
			// The body is in; the stream may now outlive the read deadline,
			// and each of its writes has a deadline of its own.
			rc := http.NewResponseController(w)
			_ = rc.SetReadDeadline(time.Time{})
			startStream(w, r)
			r.Body = io.NopCloser(bytes.NewReader(body))
			stream := &noStoreStream{ResponseWriter: w, rc: rc, ids: get}
			if get {
				exec = readOnlyExecutor{GraphExecutor: exec, w: stream}
			}
			t.SSE.Do(stream, r, exec)
			return
		}
	}
	writeRequestError(w, status, msg)
}

// urlBody is the operation in the URL of a GET as the JSON body a POST
// would carry, bounded like one, resumed after its Last-Event-ID.
func urlBody(r *http.Request, max int64, maxTokens int) ([]byte, int, string) {
	params, msg := urlParams(r)
	if msg != "" {
		return nil, http.StatusBadRequest, msg
	}
	resumeFrom(params, r.Header.Get(lastEventIDHeader), maxTokens)
	body, err := json.Marshal(params)
	if err != nil {
		return nil, http.StatusBadRequest, "variables and extensions must be JSON objects"
	}
	if max > 0 && int64(len(body)) > max {
		return nil, http.StatusRequestEntityTooLarge, "the request is larger than the limit"
	}
	return body, 0, ""
}

// readOnlyExecutor refuses a mutation sent as a GET stream once its
// operation is known and before anything runs or is streamed: the 405 GET
// answers, and gqlgen's transport, given errors, executes nothing and
// writes into the refused stream, which drops it.
type readOnlyExecutor struct {
	graphql.GraphExecutor
	w *noStoreStream
}

// CreateOperationContext implements graphql.GraphExecutor.
func (e readOnlyExecutor) CreateOperationContext(ctx context.Context, p *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	oc, errs := e.GraphExecutor.CreateOperationContext(ctx, p)
	if errs == nil && oc.Operation != nil && oc.Operation.Operation == ast.Mutation {
		e.w.refuse()
		return oc, gqlerror.List{{Message: refusedOnGET}}
	}
	return oc, errs
}
