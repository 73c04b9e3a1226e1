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

// noStoreStream answers an event stream with Cache-Control: no-store in
// place of gqlgen's no-cache, which lets a cache keep the stream (and a
// card's credentials in it). The headers leave before any resolver runs,
// too early for MarkNoStore, and a stream is never worth storing.
type noStoreStream struct {
	http.ResponseWriter
	set bool
	// rc, when set, arms the write deadline of every write and flush
	// (StreamWriteTimeout).
	rc *http.ResponseController
	// ids gives each event of the events subscription its cursor as its
	// SSE id (a GET stream: EventSource resumes with it).
	ids bool
	// refused: the request was answered with an error before the stream
	// started, and nothing more is written.
	refused bool
}

func (w *noStoreStream) header() {
	if !w.set {
		w.set = true
		w.Header().Set("Cache-Control", "no-store")
	}
}

// refuse answers a mutation sent as a GET stream with 405, before any
// byte of a stream, and drops whatever is written after.
func (w *noStoreStream) refuse() {
	h := w.Header()
	h.Del("Connection")
	h.Set("Cache-Control", "no-store")
	h.Set("Allow", "POST")
	writeRequestError(w.ResponseWriter, http.StatusMethodNotAllowed, refusedOnGET)
	w.refused = true
}

func (w *noStoreStream) WriteHeader(code int) {
	if w.refused {
		return
	}
	w.header()
	w.ResponseWriter.WriteHeader(code)
}

func (w *noStoreStream) Write(b []byte) (int, error) {
	if w.refused {
		return len(b), nil
	}
	w.header()
	if w.rc != nil {
		armWrite(w.rc)
	}
	if w.ids {
		// gqlgen writes each event in one Write.
		if id := eventID(b); id != "" {
			framed := make([]byte, 0, len("id: \n")+len(id)+len(b))
			framed = append(append(append(framed, "id: "...), id...), '\n')
			if _, err := w.ResponseWriter.Write(append(framed, b...)); err != nil {
				return 0, err
			}
			return len(b), nil
		}
	}
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher, which gqlgen's SSE transport requires.
func (w *noStoreStream) Flush() {
	if w.refused {
		return
	}
	w.header()
	if w.rc != nil {
		armWrite(w.rc)
		_ = w.rc.Flush()
		return
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *noStoreStream) Unwrap() http.ResponseWriter { return w.ResponseWriter }
