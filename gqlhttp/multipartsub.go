package gqlhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/livequery"
)

// Apollo's multipart HTTP subscriptions: the protocol Apollo Client, Apollo
// iOS and Apollo Kotlin use for subscriptions over HTTP. A JSON POST whose
// Accept names multipart/mixed with subscriptionSpec="1.0" is answered with
// a multipart/mixed stream (boundary "graphql"): each response of the
// operation is a part {"payload": {...}}, an empty part {} every heartbeat
// keeps the connection open through proxies, and an error that ends the
// stream is a part {"payload": null, "errors": [...]}. A subscription and a
// live query stream; any other operation is answered once, as POST answers.

// DefaultMultipartHeartbeat is Apollo's router's heartbeat interval.
const DefaultMultipartHeartbeat = 5 * time.Second

// MultipartSubscription serves Apollo's multipart subscription protocol.
type MultipartSubscription struct {
	MaxBodyBytes int64
	// Heartbeat is the interval of the empty parts; zero is
	// DefaultMultipartHeartbeat.
	Heartbeat time.Duration
}

var _ graphql.Transport = MultipartSubscription{}

// multipartSubscription reports whether r asks for multipart subscriptions.
func multipartSubscription(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get("Upgrade") != "" || mediaType(r) != mediaJSON {
		return false
	}
	for part := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && mt == "multipart/mixed" {
			if _, ok := params["subscriptionspec"]; ok {
				return true
			}
		}
	}
	return false
}

// acceptsDefer reports whether r's Accept names multipart/mixed with
// deferSpec.
func acceptsDefer(r *http.Request) bool {
	for part := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && mt == "multipart/mixed" {
			if _, ok := params["deferspec"]; ok {
				return true
			}
		}
	}
	return false
}

// Supports implements graphql.Transport.
func (MultipartSubscription) Supports(r *http.Request) bool { return multipartSubscription(r) }

// multipartBoundary is the boundary Apollo's clients and router use.
const multipartBoundary = "graphql"

// Do implements graphql.Transport.
func (t MultipartSubscription) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	body, status, msg := readBody(w, r, t.MaxBodyBytes)
	params := &graphql.RawParams{}
	if msg == "" {
		status, msg = checkParams(body, params)
	}
	if msg != "" {
		writeRequestError(w, status, msg)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	ctx := r.Context()
	oc, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		writeOperationErrors(w, r, exec, oc, errs)
		return
	}
	// A live query streams when the gateway keeps it live (the operation
	// guard decides), else its one answer is the stream's one part.
	if oc.Operation.Operation != ast.Subscription && !livequery.Live(oc.Operation, oc.Variables) {
		if acceptsDefer(r) {
			// Apollo's clients name both specs: a query's deferred
			// parts go as incremental delivery.
			r.Body = io.NopCloser(bytes.NewReader(body))
			MultipartMixed{MaxBodyBytes: t.MaxBodyBytes}.Do(w, r, preparedExecutor{GraphExecutor: exec, oc: oc})
			return
		}
		w.Header().Set("Content-Type", responseType(r))
		responses, ctx := exec.DispatchOperation(ctx, oc)
		writeResponse(w, collect(ctx, responses(ctx), responses))
		return
	}
	// The body is in; the stream may now outlive the read deadline.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	startStream(w, r)
	h := w.Header()
	h.Set("Content-Type", `multipart/mixed;boundary="`+multipartBoundary+`";subscriptionSpec="1.0"`)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	pw := &partWriter{w: w, rc: rc}
	// The opening delimiter and a first heartbeat: a client reads a part
	// once the delimiter after it arrives, so every part is followed by one.
	pw.write([]byte("\r\n--" + multipartBoundary))
	pw.part([]byte("{}"))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	every := t.Heartbeat
	if every <= 0 {
		every = DefaultMultipartHeartbeat
	}
	stopBeat := pw.heartbeat(ctx, every)
	responses, rctx := exec.DispatchOperation(ctx, oc)
	for {
		resp := responses(rctx)
		if resp == nil {
			break
		}
		// The part that ends the stream is its last: no heartbeat after it.
		if ended(resp) {
			stopBeat()
			pw.part(transportError(resp.Errors))
			break
		}
		b, err := json.Marshal(struct {
			Payload *graphql.Response `json:"payload"`
		}{resp})
		if err != nil {
			stopBeat()
			pw.part(transportError(gqlerror.List{{Message: gqlerr.InternalMessage,
				Extensions: map[string]any{"code": string(gqlerr.Internal)}}}))
			break
		}
		if !pw.part(b) {
			break
		}
	}
	stopBeat()
	pw.write([]byte("--\r\n"))
}

// ended reports whether resp ends the stream with an error: errors and no
// data (a refusal, or the server ending a subscription).
func ended(resp *graphql.Response) bool {
	return len(resp.Errors) > 0 && (len(resp.Data) == 0 || string(resp.Data) == "null")
}

// transportError is the part of an error that ends the stream.
func transportError(errs gqlerror.List) []byte {
	b, err := json.Marshal(struct {
		Payload any           `json:"payload"`
		Errors  gqlerror.List `json:"errors"`
	}{nil, errs})
	if err != nil {
		return []byte(`{"payload":null,"errors":[{"message":"internal error","extensions":{"code":"INTERNAL"}}]}`)
	}
	return b
}

// partWriter writes parts from the operation and the heartbeat, one at a
// time, each flushed at once.
type partWriter struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	rc     *http.ResponseController
	failed bool
}

func (p *partWriter) write(b []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed {
		return false
	}
	// Each write and flush within StreamWriteTimeout, or the stream ends.
	armWrite(p.rc)
	if _, err := p.w.Write(b); err != nil {
		p.failed = true
		return false
	}
	if err := p.rc.Flush(); err != nil {
		p.failed = true
	}
	return !p.failed
}

// part writes one JSON part and the delimiter after it.
func (p *partWriter) part(body []byte) bool {
	b := make([]byte, 0, len(body)+64)
	b = append(b, "\r\nContent-Type: application/json\r\n\r\n"...)
	b = append(b, body...)
	b = append(b, "\r\n--"+multipartBoundary...)
	return p.write(b)
}

// heartbeat writes {} every interval until ctx ends or the returned stop
// is called; stop, which may be called more than once, returns once no
// heartbeat is being written.
func (p *partWriter) heartbeat(ctx context.Context, every time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if !p.part([]byte("{}")) {
					return
				}
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		<-finished
	}
}
