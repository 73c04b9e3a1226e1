package roundtrip

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Stream sends a body once, as it is read, and hands back an open 2xx body;
// a refusal is the upstream's typed error; 5xx answers count against the
// breaker like any call; a slow answer is cut at the call's deadline.
func TestStreamSendsOnceAndLeavesTheBodyOpen(t *testing.T) {
	// Each connection's requests are served on a goroutine of its own: the
	// one of the slow call below outlives its client's call.
	var (
		mu  sync.Mutex
		got []string
	)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		// One route group, so that one breaker sees every call.
		switch strings.TrimPrefix(r.URL.Path, "/files") {
		case "/ok":
			_, _ = io.WriteString(w, strings.Repeat("x", 1<<16))
		case "/refused":
			w.WriteHeader(http.StatusUnprocessableEntity)
		case "/down":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/slow":
			hang(r)
		}
	})
	// Three failures open the breaker: the timeout below and two 5xx.
	s, _ := newSender(t, WithBreaker(3, time.Minute), WithTimeout(200*time.Millisecond))

	pr, pw := io.Pipe()
	go func() { _, _ = io.WriteString(pw, "streamed"); _ = pw.Close() }()
	req, _ := http.NewRequest(http.MethodPost, u.srv.URL+"/files/ok", pr)
	resp, err := s.Stream(req)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Len(t, b, 1<<16)
	mu.Lock()
	assert.Equal(t, []string{"streamed"}, got)
	mu.Unlock()

	req, _ = http.NewRequest(http.MethodPost, u.srv.URL+"/files/refused", strings.NewReader("a"))
	_, err = s.Stream(req)
	var se *statusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusUnprocessableEntity, se.status)

	req, _ = http.NewRequest(http.MethodGet, u.srv.URL+"/files/slow", nil)
	_, err = s.Stream(req)
	assert.True(t, IsUnavailable(err), "a slow answer is cut at the deadline: %v", err)

	for range 2 {
		req, _ = http.NewRequest(http.MethodPost, u.srv.URL+"/files/down", strings.NewReader("a"))
		_, err = s.Stream(req)
		require.ErrorAs(t, err, &se, "a 5xx is the upstream's answer")
	}
	calls := u.calls.Load()
	req, _ = http.NewRequest(http.MethodPost, u.srv.URL+"/files/ok", strings.NewReader("a"))
	_, err = s.Stream(req)
	assert.True(t, errors.Is(err, ErrCircuitOpen), "the breaker opened: %v", err)
	assert.Equal(t, calls, u.calls.Load(), "an open breaker calls nobody")
}
