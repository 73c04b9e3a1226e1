package gqlhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Incremental delivery (@defer). gqlgen resolves a deferred fragment after
// the rest of the operation and hands its result to the transport as a
// later response with a path and a label. Websockets and server-sent events
// send each response as it comes; over HTTP, a client that accepts
// multipart/mixed gets gqlgen's multipart transport (deferSpec=20220824, the
// format Apollo Client and GraphiQL read), and any other client one JSON
// answer with the deferred parts merged in (mergeIncremental), as if the
// directive were absent.

// MultipartMixed is gqlgen's multipart/mixed transport behind the same body
// checks and error answers as POST: the body is read and checked here and
// the operation created here, so that a bad request is answered as POST
// answers it, and gqlgen's transport (which quotes a malformed body in its
// error and its log) only ever runs an operation already created.
type MultipartMixed struct {
	MaxBodyBytes int64
}

var _ graphql.Transport = MultipartMixed{}

// Supports implements graphql.Transport: a JSON POST whose Accept names
// multipart/mixed for incremental delivery (not the multipart subscription
// protocol: MultipartSubscription).
func (MultipartMixed) Supports(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get("Upgrade") != "" || mediaType(r) != mediaJSON {
		return false
	}
	for part := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && mt == "multipart/mixed" {
			_, sub := params["subscriptionspec"]
			return !sub
		}
	}
	return false
}

// Do implements graphql.Transport.
func (t MultipartMixed) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	body, status, msg := readBody(w, r, t.MaxBodyBytes)
	if msg != "" {
		writeRequestError(w, status, msg)
		return
	}
	params := &graphql.RawParams{}
	if status, msg = checkParams(body, params); msg != "" {
		writeRequestError(w, status, msg)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	oc, errs := exec.CreateOperationContext(r.Context(), params)
	if errs != nil {
		writeOperationErrors(w, r, exec, oc, errs)
		return
	}
	if oc.Operation.Operation != ast.Query || !defers(oc.Operation.SelectionSet, oc.Doc.Fragments, map[string]bool{}) {
		// One answer, as POST gives it: gqlgen defers only in queries,
		// and clients that accept multipart/mixed (GraphiQL asks for it
		// with every operation) read a JSON answer too.
		w.Header().Set("Content-Type", responseType(r))
		responses, ctx := exec.DispatchOperation(r.Context(), oc)
		writeResponse(w, collect(ctx, responses(ctx), responses))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	// A part is flushed as soon as it is complete; parts completing within
	// the same millisecond share one.
	transport.MultipartMixed{Boundary: "-", DeliveryTimeout: time.Millisecond}.
		Do(&noStoreStream{ResponseWriter: w}, r, preparedExecutor{GraphExecutor: exec, oc: oc})
}

// preparedExecutor answers CreateOperationContext with an operation already
// created, so that gqlgen's transport runs it without creating it twice.
type preparedExecutor struct {
	graphql.GraphExecutor
	oc *graphql.OperationContext
}

func (p preparedExecutor) CreateOperationContext(context.Context, *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	return p.oc, nil
}

// hasNext reports whether more responses follow resp.
func hasNext(resp *graphql.Response) bool {
	return resp != nil && resp.HasNext != nil && *resp.HasNext
}

// collect reads every response of an operation into one: the deferred
// parts' data merged into the first answer at their paths, their errors
// appended. A response without parts to follow is returned as it is.
func collect(ctx context.Context, first *graphql.Response, next graphql.ResponseHandler) *graphql.Response {
	if !hasNext(first) {
		return first
	}
	var data any
	if err := decodeJSON(first.Data, &data); err != nil {
		return first
	}
	errs := first.Errors
	for more := true; more; {
		part := next(ctx)
		if part == nil {
			break
		}
		more = hasNext(part)
		errs = append(errs, part.Errors...)
		var pd any
		if err := decodeJSON(part.Data, &pd); err != nil {
			continue
		}
		data = mergeAt(data, part.Path, pd)
	}
	b, err := json.Marshal(data)
	if err != nil {
		return first
	}
	return &graphql.Response{Data: b, Errors: errs, Extensions: first.Extensions}
}

func decodeJSON(b []byte, v any) error {
	if len(b) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// mergeAt merges the object part into the object at path within data. A
// part whose place is gone (nulled by an error) is dropped. With an empty
// path, objects merge member by member and anything else is replaced.
func mergeAt(data any, path ast.Path, part any) any {
	if len(path) == 0 {
		dst, ok := data.(map[string]any)
		src, ok2 := part.(map[string]any)
		if !ok || !ok2 {
			// gqlgen writes a deferred field as null in the first
			// answer: the part's value takes its place.
			return part
		}
		for k, v := range src {
			if cur, ok := dst[k]; ok {
				dst[k] = mergeAt(cur, nil, v)
			} else {
				dst[k] = v
			}
		}
		return dst
	}
	switch p := path[0].(type) {
	case ast.PathName:
		if m, ok := data.(map[string]any); ok {
			if cur, ok := m[string(p)]; ok {
				m[string(p)] = mergeAt(cur, path[1:], part)
			}
		}
	case ast.PathIndex:
		if l, ok := data.([]any); ok && int(p) >= 0 && int(p) < len(l) {
			l[p] = mergeAt(l[p], path[1:], part)
		}
	}
	return data
}

// defers reports whether a selection set, its fragments followed, holds a
// @defer. seen stops at a fragment already walked.
func defers(set ast.SelectionSet, fragments ast.FragmentDefinitionList, seen map[string]bool) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if defers(s.SelectionSet, fragments, seen) {
				return true
			}
		case *ast.InlineFragment:
			if s.Directives.ForName("defer") != nil || defers(s.SelectionSet, fragments, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Directives.ForName("defer") != nil {
				return true
			}
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			if f := fragments.ForName(s.Name); f != nil && defers(f.SelectionSet, fragments, seen) {
				return true
			}
		}
	}
	return false
}
