package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Without an exporter nothing is recorded, but a request's trace context
// (traceparent, baggage) still reaches the upstream calls it causes.
func TestTraceContextPassesUpstreamWithoutAnExporter(t *testing.T) {
	tr, err := newTracing(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.recording || tr.tracer() != nil {
		t.Fatal("tracing records without an exporter")
	}
	var got http.Header
	upstreamSrv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	defer upstreamSrv.Close()
	client := &http.Client{Transport: tr.transport(http.DefaultTransport)}
	h := tr.handler("/graphql", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, upstreamSrv.URL, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}))

	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
	req.Header.Set("traceparent", parent)
	req.Header.Set("baggage", "tenant=demo")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if tp := got.Get("traceparent"); !strings.HasPrefix(tp, "00-4bf92f3577b34da6a3ce929d0e0e4736-") {
		t.Errorf("upstream traceparent %q, want the request's trace", tp)
	}
	if b := got.Get("baggage"); b != "tenant=demo" {
		t.Errorf("upstream baggage %q, want the request's", b)
	}

	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/graphql", nil))
	if tp := got.Get("traceparent"); tp != "" {
		t.Errorf("a request without trace context sent traceparent %q upstream", tp)
	}
}
