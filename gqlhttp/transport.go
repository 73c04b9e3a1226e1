package gqlhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/reply"
)

// The HTTP transports of the graph. gqlgen's own POST and SSE transports put
// the raw request body into the error of a body that is not valid JSON (and
// SSE also logs it with the standard logger), so a password or card token in
// a malformed request reached the log; their answers to a bad request carry
// no extensions.code, an oversized body is answered 200, and GET answers a
// mutation with 406 and no code. These transports keep gqlgen's execution and
// replace only the request decoding and its error answers: every bad request
// gets a 4xx with code BAD_USER_INPUT and a fixed message that quotes nothing
// the client sent.

const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// POST serves application/json POST requests.
type POST struct {
	// MaxBodyBytes bounds the body; a larger one is answered 413.
	MaxBodyBytes int64
	// share runs identical queries of one view once (opshare.go); nil
	// shares none.
	share *operationShare
}

var _ graphql.Transport = POST{}

// Supports implements graphql.Transport.
func (POST) Supports(r *http.Request) bool {
	return r.Method == http.MethodPost && r.Header.Get("Upgrade") == "" && mediaType(r) == mediaJSON
}

// Do implements graphql.Transport.
func (t POST) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	params, status, msg := readParams(w, r, t.MaxBodyBytes)
	if msg != "" {
		writeRequestError(w, status, msg)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	execute(w, r, exec, params, false, t.share)
}

// GET serves queries (never mutations) from the URL, for caching proxies.
type GET struct {
	// share runs identical queries of one view once (opshare.go); nil
	// shares none.
	share *operationShare
}

var _ graphql.Transport = GET{}

// Supports implements graphql.Transport.
func (GET) Supports(r *http.Request) bool {
	return r.Method == http.MethodGet && r.Header.Get("Upgrade") == ""
}

// Do implements graphql.Transport.
func (t GET) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	params, msg := urlParams(r)
	if msg != "" {
		writeRequestError(w, http.StatusBadRequest, msg)
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	execute(w, r, exec, params, true, t.share)
}

// urlParams reads the operation of a GET from its URL: query,
// operationName, and variables and extensions as JSON objects, as the
// GraphQL-over-HTTP and graphql-sse specifications give them. On failure it
// returns a message that quotes nothing from the URL.
func urlParams(r *http.Request) (*graphql.RawParams, string) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, "the query string is malformed"
	}
	params := &graphql.RawParams{Query: q.Get("query"), OperationName: q.Get("operationName"), Headers: r.Header}
	for name, dst := range map[string]any{"variables": &params.Variables, "extensions": &params.Extensions} {
		if v := q.Get(name); v != "" {
			if err := decodeObject(strings.NewReader(v), dst); err != nil {
				return nil, name + " must be a JSON object"
			}
		}
	}
	return params, ""
}

// refusedOnGET is the refusal of a mutation sent with GET.
const refusedOnGET = "GET requests may only run queries, and subscriptions with Accept: text/event-stream; send mutations with POST"

// Unsupported answers what no other transport serves, last in line: gqlgen
// would answer "transport not supported" without a code.
type Unsupported struct{}

var _ graphql.Transport = Unsupported{}

// Supports implements graphql.Transport.
func (Unsupported) Supports(*http.Request) bool { return true }

// Do implements graphql.Transport.
func (Unsupported) Do(w http.ResponseWriter, r *http.Request, _ graphql.GraphExecutor) {
	switch {
	case r.Method == http.MethodPost:
		writeRequestError(w, http.StatusUnsupportedMediaType, "POST requests must have Content-Type: application/json (or multipart/form-data for uploads)")
	case r.Header.Get("Upgrade") != "":
		writeRequestError(w, http.StatusBadRequest, "websocket upgrades must use the graphql-transport-ws subprotocol")
	default:
		w.Header().Set("Allow", "GET, POST, OPTIONS")
		writeRequestError(w, http.StatusMethodNotAllowed, "use POST with application/json, GET for queries, or a websocket")
	}
}

// execute runs params through gqlgen and writes the response, with the
// GraphQL-over-HTTP status codes. A request that never reaches execution (a
// document that does not parse or validate, variables that do not coerce,
// a limit exceeded) is 400 with no data entry to clients that accept
// application/graphql-response+json, and 200 to legacy application/json
// clients, as the specification asks of each (graphql-http's audits check
// both; gqlgen answered 200 to the first and 422 to the second).
func execute(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, params *graphql.RawParams, queryOnly bool, share *operationShare) {
	ctx := r.Context()
	oc, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		writeOperationErrors(w, r, exec, oc, errs)
		return
	}
	w.Header().Set("Content-Type", responseType(r))
	if queryOnly && oc.Operation.Operation != ast.Query {
		w.Header().Set("Allow", "POST")
		writeRequestError(w, http.StatusMethodNotAllowed, refusedOnGET)
		return
	}
	run := func(ctx context.Context) *graphql.Response {
		responses, ctx := exec.DispatchOperation(ctx, oc)
		return collect(ctx, responses(ctx), responses)
	}
	if k, ok := share.key(r, oc); ok {
		resp, noStore := share.do(ctx, k, func(ctx context.Context) (*graphql.Response, bool) {
			// The execution's own no-store flag, which every request it
			// answers then carries.
			flag := new(atomic.Bool)
			return run(reply.WithNoStore(ctx, flag)), flag.Load()
		})
		if resp == nil { // the request left before its answer came
			return
		}
		if noStore {
			reply.MarkNoStore(ctx)
		}
		writeResponse(w, resp)
		return
	}
	writeResponse(w, run(ctx))
}

// writeOperationErrors answers a request whose operation could not be
// created (see execute).
func writeOperationErrors(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, oc *graphql.OperationContext, errs gqlerror.List) {
	ct := responseType(r)
	w.Header().Set("Content-Type", ct)
	resp := exec.DispatchError(graphql.WithOperationContext(r.Context(), oc), errs)
	if ct != mediaGraphQLResponse {
		writeResponse(w, resp)
		return
	}
	w.WriteHeader(http.StatusBadRequest)
	writeRequestFailure(w, resp)
}

// writeRequestFailure writes a response with no data entry: the request
// failed before execution, so there is no data, not even null.
func writeRequestFailure(w http.ResponseWriter, resp *graphql.Response) {
	b, err := json.Marshal(struct {
		Errors     gqlerror.List  `json:"errors"`
		Extensions map[string]any `json:"extensions,omitempty"`
	}{resp.Errors, resp.Extensions})
	if err != nil {
		writeResponse(w, resp)
		return
	}
	_, _ = w.Write(b)
}

// readParams reads and decodes a POST body. On failure it returns the
// status and a message that quotes nothing from the body.
func readParams(w http.ResponseWriter, r *http.Request, max int64) (*graphql.RawParams, int, string) {
	body, status, msg := readBody(w, r, max)
	if msg != "" {
		return nil, status, msg
	}
	p := &graphql.RawParams{}
	status, msg = checkParams(body, p)
	return p, status, msg
}

func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, int, string) {
	if r.Body == nil {
		return nil, http.StatusBadRequest, "the request body is empty"
	}
	if max > 0 && r.ContentLength > max {
		return nil, http.StatusRequestEntityTooLarge, "the request body is larger than the limit"
	}
	rd := io.Reader(r.Body)
	if max > 0 {
		rd = http.MaxBytesReader(w, r.Body, max)
	}
	body, err := io.ReadAll(rd)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, http.StatusRequestEntityTooLarge, "the request body is larger than the limit"
		}
		return nil, http.StatusBadRequest, "the request body could not be read"
	}
	return body, 0, ""
}

// checkParams decodes body into p: exactly one JSON object.
func checkParams(body []byte, p *graphql.RawParams) (int, string) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return http.StatusBadRequest, "the request body is empty"
	case trimmed[0] == '[':
		return http.StatusBadRequest, "batched operations are not supported; send one operation per request"
	case trimmed[0] != '{':
		return http.StatusBadRequest, "the request body must be a JSON object"
	}
	if err := decodeObject(bytes.NewReader(trimmed), p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return http.StatusBadRequest, "the request field " + te.Field + " has the wrong type"
		}
		return http.StatusBadRequest, "the request body is not valid JSON"
	}
	return 0, ""
}

// decodeObject decodes exactly one JSON value with numbers kept exact, and
// refuses trailing data. encoding/json bounds nesting depth itself.
func decodeObject(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func mediaType(r *http.Request) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

// responseType picks application/graphql-response+json when the client
// accepts it and application/json otherwise.
func responseType(r *http.Request) string {
	for part := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		case mediaJSON, "*/*", "application/*":
			return mediaJSON
		}
	}
	return mediaJSON
}

// writeResponse writes resp as JSON. Its data is gqlgen's own output, valid
// JSON by construction, so it is copied as it is: encoding/json would scan
// and compact it once more, a cost on every answer. The rest is
// small and goes through encoding/json, in gqlgen's order of the members.
func writeResponse(w io.Writer, resp *graphql.Response) {
	var rest, errs []byte
	var err error
	if resp.Label != "" || len(resp.Path) > 0 || resp.HasNext != nil || len(resp.Extensions) > 0 {
		rest, err = json.Marshal(struct {
			Label      string         `json:"label,omitempty"`
			Path       ast.Path       `json:"path,omitempty"`
			HasNext    *bool          `json:"hasNext,omitempty"`
			Extensions map[string]any `json:"extensions,omitempty"`
		}{resp.Label, resp.Path, resp.HasNext, resp.Extensions})
	}
	if err == nil && len(resp.Errors) > 0 {
		errs, err = json.Marshal(resp.Errors)
	}
	if err != nil {
		_, _ = w.Write(gqlerr.Body(gqlerr.Internal, gqlerr.InternalMessage))
		return
	}
	// Three writes, so that the data is not copied once more to be framed:
	// the ResponseWriter buffers them as it would one.
	head := make([]byte, 0, len(`{"errors":,"data":`)+len(errs))
	head = append(head, '{')
	if errs != nil {
		head = append(append(append(head, `"errors":`...), errs...), ',')
	}
	head = append(head, `"data":`...)
	data := []byte(resp.Data)
	if len(data) == 0 {
		data = []byte("null")
	}
	tail := []byte{'}'}
	if len(rest) > 2 { // more than {}
		tail = append(append([]byte{','}, rest[1:len(rest)-1]...), '}')
	}
	_, _ = w.Write(head)
	_, _ = w.Write(data)
	_, _ = w.Write(tail)
}

// writeRequestError answers a request that never reached GraphQL: the
// client's fault, so BAD_USER_INPUT.
func writeRequestError(w http.ResponseWriter, status int, msg string) {
	gqlerr.WriteHTTP(w, status, gqlerr.BadUserInput, msg)
}
