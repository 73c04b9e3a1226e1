package gqlhttp

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/fingraph/fingraph/reply"
)

// NoStore answers with Cache-Control: no-store when a resolver marked the
// request (reply.MarkNoStore). gqlgen writes a query's body after every resolver
// has run, so the header is set at the first WriteHeader or Write, before
// any of the body leaves.
func NoStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		flag := new(atomic.Bool)
		nw := &noStoreWriter{ResponseWriter: w, flag: flag}
		next.ServeHTTP(nw, r.WithContext(reply.WithNoStore(r.Context(), flag)))
	})
}

type noStoreWriter struct {
	http.ResponseWriter
	flag  *atomic.Bool
	wrote bool
}

func (w *noStoreWriter) header() {
	if !w.wrote {
		w.wrote = true
		if w.flag.Load() {
			h := w.Header()
			h.Set("Cache-Control", "no-store")
			h.Set("Pragma", "no-cache")
		}
	}
}

func (w *noStoreWriter) WriteHeader(code int) {
	w.header()
	w.ResponseWriter.WriteHeader(code)
}

func (w *noStoreWriter) Write(b []byte) (int, error) {
	w.header()
	return w.ResponseWriter.Write(b)
}

// Flush keeps streaming transports (SSE) working through the wrapper.
func (w *noStoreWriter) Flush() {
	w.header()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (websocket
// upgrades hijack it).
func (w *noStoreWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack lets the websocket transport take the connection over; gorilla
// asks for http.Hijacker directly.
func (w *noStoreWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("gqlhttp: the response writer cannot be hijacked")
	}
	return h.Hijack()
}
