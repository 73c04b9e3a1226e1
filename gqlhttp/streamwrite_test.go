package gqlhttp

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// deadlineRecorder counts the write deadlines set on it, as
// http.ResponseController sets them.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadlines int
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	if !t.IsZero() {
		d.deadlines++
	}
	return nil
}

// Every write and flush of an event stream and of a multipart subscription
// has a write deadline, so a client that stops reading ends its stream.
func TestStreamWritesHaveADeadline(t *testing.T) {
	rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	rc := http.NewResponseController(rec)
	sse := &noStoreStream{ResponseWriter: rec, rc: rc}
	_, _ = sse.Write([]byte("event: next\n"))
	sse.Flush()
	if rec.deadlines != 2 {
		t.Errorf("an SSE write and flush set %d write deadlines, want 2", rec.deadlines)
	}
	pw := &partWriter{w: rec, rc: rc}
	pw.part([]byte("{}"))
	pw.write([]byte("--\r\n"))
	if rec.deadlines != 4 {
		t.Errorf("two multipart writes set %d write deadlines in all, want 4", rec.deadlines)
	}

	r := httptest.NewRequest(http.MethodPost, "/graphql", nil)
	w := httptest.NewRecorder()
	startStream(w, r)
	if w.Header().Get("Connection") != "close" {
		t.Error("an HTTP/1.1 stream's connection is not closed at its end: a later request would inherit its write deadline")
	}
}
