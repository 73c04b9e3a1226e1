package gqlhttp

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
)

// noStoreKey carries the request's no-store flag.
type noStoreKey struct{}

// MarkNoStore tells the NoStore middleware that this request's answer
// carries card data and must not be stored by any cache. Resolvers call it
// before they fetch the data, so the header is set however the request
// ends. Outside a NoStore request it does nothing.
func MarkNoStore(ctx context.Context) {
	if f, ok := ctx.Value(noStoreKey{}).(*atomic.Bool); ok {
		f.Store(true)
	}
}

// NoStore answers with Cache-Control: no-store when a resolver marked the
// request (MarkNoStore). gqlgen writes a query's body after every resolver
// has run, so the header is set at the first WriteHeader or Write, before
// any of the body leaves.
func NoStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		flag := new(atomic.Bool)
		nw := &noStoreWriter{ResponseWriter: w, flag: flag}
		next.ServeHTTP(nw, r.WithContext(context.WithValue(r.Context(), noStoreKey{}, flag)))
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
