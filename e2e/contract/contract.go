// Package contract checks upstream traffic against the sandbox's OpenAPI
// documents: every request the gateway sends to the in-process sandbox and
// every answer the sandbox gives is validated with kin-openapi, and each
// violation is recorded for the test that caused it to report.
//
// It is test-only: only the e2e harness imports it (through
// app.Config.SandboxMiddleware), so the gateway binary does not link
// kin-openapi.
package contract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Validator is HTTP middleware in front of the sandbox. Its zero value is
// not usable; build one with Wrap.
type Validator struct {
	next    http.Handler
	routers map[string]routers.Router // by upstream: "payments", "banking"

	mu         sync.Mutex
	violations []string
	checked    int
}

// Wrap loads both documents from the sandbox handler itself (so the
// contract is what the sandbox serves, which a unit test ties to the
// committed docs/openapi copies) and returns the validating middleware.
func Wrap(next http.Handler) (*Validator, error) {
	v := &Validator{next: next, routers: map[string]routers.Router{}}
	for _, name := range []string{"payments", "banking"} {
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+name+"/openapi.json", nil))
		if rec.Code != http.StatusOK {
			return nil, fmt.Errorf("contract: GET /%s/openapi.json: %d", name, rec.Code)
		}
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(rec.Body.Bytes())
		if err != nil {
			return nil, fmt.Errorf("contract: %s document: %w", name, err)
		}
		if err := doc.Validate(context.Background()); err != nil {
			return nil, fmt.Errorf("contract: %s document is not valid OpenAPI: %w", name, err)
		}
		r, err := gorillamux.NewRouter(doc)
		if err != nil {
			return nil, fmt.Errorf("contract: %s router: %w", name, err)
		}
		v.routers[name] = r
	}
	return v, nil
}

// Violations returns what failed validation so far, one line each.
func (v *Validator) Violations() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.violations...)
}

// Checked is how many upstream exchanges were validated; a test can assert
// the validator actually saw traffic.
func (v *Validator) Checked() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.checked
}

func (v *Validator) record(format string, args ...any) {
	v.mu.Lock()
	v.violations = append(v.violations, fmt.Sprintf(format, args...))
	v.mu.Unlock()
}

// ServeHTTP validates upstream routes (/payments/..., /banking/...) and
// passes the control API (/_sandbox) and the documents themselves through.
func (v *Validator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	upstream, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	router := v.routers[upstream]
	if router == nil || strings.HasSuffix(r.URL.Path, "/openapi.json") {
		v.next.ServeHTTP(w, r)
		return
	}
	var reqBody []byte
	if r.Body != nil {
		reqBody, _ = io.ReadAll(r.Body)
		_ = r.Body.Close()
	}
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	rec := httptest.NewRecorder()
	v.next.ServeHTTP(rec, r)
	for k, vals := range rec.Header() {
		w.Header()[k] = vals
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())

	v.mu.Lock()
	v.checked++
	v.mu.Unlock()
	v.check(router, r, reqBody, rec)
}

// check validates one exchange. A request the document calls invalid is a
// violation only when the sandbox accepted it (2xx/3xx): a refused invalid
// request is the document and the sandbox agreeing (tests send bad input on
// purpose). The answer is always validated, error bodies included.
func (v *Validator) check(router routers.Router, r *http.Request, reqBody []byte, rec *httptest.ResponseRecorder) {
	name := r.Method + " " + r.URL.Path
	req := r.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(reqBody))
	// The router matches servers by host too; the documents' servers are
	// relative, so match on the path alone.
	req.URL.Scheme, req.URL.Host, req.Host = "", "", ""
	route, pathParams, err := router.FindRoute(req)
	if err != nil {
		if rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed && rec.Code != http.StatusBadRequest {
			v.record("%s: no operation in the document (%v) but the sandbox answered %d", name, err, rec.Code)
		}
		return
	}
	opts := &openapi3filter.Options{
		MultiError:         true,
		AuthenticationFunc: authenticate,
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: pathParams, Route: route, Options: opts}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && rec.Code < 400 {
		v.record("%s (operation %s): request violates the document but the sandbox answered %d: %v",
			name, route.Operation.OperationID, rec.Code, err)
	}
	respOpts := &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true}
	if ct, _, _ := mime.ParseMediaType(rec.Header().Get("Content-Type")); ct != "" && ct != "application/json" {
		// Files and signed tokens: the status and content type are
		// checked, the bytes are not JSON to validate.
		respOpts.ExcludeResponseBody = true
		resp := route.Operation.Responses.Status(rec.Code)
		if resp == nil {
			resp = route.Operation.Responses.Default()
		}
		if resp != nil && resp.Value != nil && len(resp.Value.Content) > 0 && resp.Value.Content.Get(ct) == nil {
			v.record("%s (operation %s): answer %d has content type %s, which the document does not list",
				name, route.Operation.OperationID, rec.Code, ct)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 rec.Code,
		Header:                 rec.Header(),
		Body:                   io.NopCloser(bytes.NewReader(rec.Body.Bytes())),
		Options:                respOpts,
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		v.record("%s (operation %s): answer %d violates the document: %v", name, route.Operation.OperationID, rec.Code, err)
	}
}

// authenticate checks that a request carries the credential its security
// scheme names; whether the credential is good is the sandbox's business.
func authenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	s := in.SecurityScheme
	h := in.RequestValidationInput.Request.Header
	switch {
	case s.Type == "http" && strings.EqualFold(s.Scheme, "bearer"):
		if a := h.Get("Authorization"); strings.HasPrefix(a, "Bearer ") || strings.HasPrefix(h.Get("Authentication"), "Bearer ") {
			return nil
		}
		return errors.New("no Authorization: Bearer header")
	case s.Type == "apiKey" && s.In == "header":
		if h.Get(s.Name) != "" {
			return nil
		}
		return fmt.Errorf("no %s header", s.Name)
	}
	return fmt.Errorf("unsupported security scheme %s", s.Type)
}
