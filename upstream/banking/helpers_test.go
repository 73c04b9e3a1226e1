package banking

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// seen is one request as the fake upstream received it.
type seen struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// fake is an httptest upstream that records requests and answers with a
// per-test handler, the way the spec describes the banking interface.
type fake struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []seen
}

func (f *fake) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.reqs...)
}

func (f *fake) last(t *testing.T) seen {
	t.Helper()
	r := f.requests()
	require.NotEmpty(t, r, "no request reached the upstream")
	return r[len(r)-1]
}

// newFake starts an upstream under /banking and a client pointed at it.
func newFake(t *testing.T, h func(w http.ResponseWriter, s seen), opts ...roundtrip.Option) (*fake, *Client) {
	t.Helper()
	f := &fake{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		s := seen{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Raw: raw}
		if len(raw) > 0 {
			_ = json.Unmarshal(raw, &s.Body)
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, s)
		f.mu.Unlock()
		h(w, s)
	}))
	t.Cleanup(f.srv.Close)
	opts = append([]roundtrip.Option{roundtrip.WithBackoff(time.Millisecond, time.Second), roundtrip.WithTimeout(5 * time.Second)}, opts...)
	c, err := NewClient(f.srv.URL+"/banking", opts...)
	require.NoError(t, err)
	return f, c
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func errBody(field, msg string, code int) map[string]any {
	return map[string]any{"errors": []map[string]any{{"field": field, "message": msg, "code": code}}}
}

// countingSource records every SetToken, to prove write-back happens once
// per changed token.
type countingSource struct {
	TokenStore
	mu   sync.Mutex
	sets []string
}

func (c *countingSource) SetToken(ctx context.Context, tok string) error {
	c.mu.Lock()
	c.sets = append(c.sets, tok)
	c.mu.Unlock()
	return c.TokenStore.SetToken(ctx, tok)
}

func (c *countingSource) setCalls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sets...)
}
