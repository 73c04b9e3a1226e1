package gqlhttp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fingraph/fingraph/reply"
)

func TestNoStoreOnlyWhenMarked(t *testing.T) {
	for _, mark := range []bool{false, true} {
		h := NoStore(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if mark {
				reply.MarkNoStore(r.Context())
			}
			_, _ = w.Write([]byte(`{"data":{}}`))
		}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/graphql", nil))
		got := rec.Header().Get("Cache-Control")
		if mark && got != "no-store" || !mark && got != "" {
			t.Errorf("marked %v: Cache-Control %q", mark, got)
		}
	}
}

func TestNoStoreKeepsTheWriterHijackable(t *testing.T) {
	var ok bool
	h := NoStore(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, ok = w.(http.Hijacker)
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/graphql", nil))
	if !ok {
		t.Fatal("websocket upgrades need http.Hijacker")
	}
}
