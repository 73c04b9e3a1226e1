package gqlhttp

import (
	"net/http"
	"time"
)

// StreamWriteTimeout bounds each write of an event stream or a multipart
// subscription, as a websocket's writes are bounded: a client that stops
// reading fails the write once the connection's buffers are full, and the
// stream ends, instead of holding its goroutine and buffers as long as it
// likes.
const StreamWriteTimeout = 10 * time.Second

// startStream prepares w for a long-lived stream: over HTTP/1.x the
// connection closes when the stream ends (its write deadline is the
// connection's, and a later request on it must not inherit it).
func startStream(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close")
	}
}

// armWrite sets the write deadline of the next write of a stream.
func armWrite(rc *http.ResponseController) {
	_ = rc.SetWriteDeadline(time.Now().Add(StreamWriteTimeout))
}
