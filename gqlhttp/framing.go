package gqlhttp

import "net/http"

// CloseAfterChunked closes the connection after answering a request whose
// body came chunked. A request with both Content-Length and
// Transfer-Encoding is the request-smuggling shape: a proxy in front that
// framed it by Content-Length would send what this server reads as the
// body's end as the start of another request on the same connection. RFC
// 9112 (6.1) lets a server read such a request by Transfer-Encoding alone,
// as net/http does, but only if it closes the connection after answering.
// net/http removes the Content-Length header before any handler sees the
// request, so the two cannot be told apart here: every chunked request ends
// its connection, which costs a chunked uploader one reconnection and
// leaves nothing on the connection to smuggle.
func CloseAfterChunked(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 1 && len(r.TransferEncoding) > 0 {
			w.Header().Set("Connection", "close")
			r.Close = true
		}
		next.ServeHTTP(w, r)
	})
}
