package banking

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/roundtrip"
)

func TestNewClientValidates(t *testing.T) {
	for _, tc := range []struct {
		name string
		base string
		opts []roundtrip.Option
		ok   bool
	}{
		{"plain", "http://127.0.0.1:9090/banking", nil, true},
		{"v3", "http://127.0.0.1:9090/banking", []roundtrip.Option{WithVersion("v3")}, true},
		{"v1 refused", "http://127.0.0.1:9090/banking", []roundtrip.Option{WithVersion("v1")}, false},
		{"bad version", "http://127.0.0.1:9090/banking", []roundtrip.Option{WithVersion("2")}, false},
		{"no scheme", "127.0.0.1:9090", nil, false},
		{"query", "http://h/banking?x=1", nil, false},
		{"zero timeout", "http://h", []roundtrip.Option{roundtrip.WithTimeout(0)}, false},
		{"nil transport", "http://h", []roundtrip.Option{roundtrip.WithTransport(nil)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewClient(tc.base, tc.opts...)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	c, err := NewClient("http://127.0.0.1:1/banking")
	require.NoError(t, err)
	assert.Equal(t, roundtrip.DefaultTimeout, c.send.Timeout())
	assert.Equal(t, "v2", c.Version())
	assert.Equal(t, "closed", c.BreakerState())
}

func TestNewRequestBuildsVersionedURLAndJSON(t *testing.T) {
	c, err := NewClient("http://up.test/banking/", roundtrip.WithUserAgent("ua-test"))
	require.NoError(t, err)
	req, err := c.NewRequest(t.Context(), http.MethodPost, "/persons", map[string]string{"first_name": "Ann"})
	require.NoError(t, err)
	assert.Equal(t, "http://up.test/banking/v2/persons", req.URL.String())
	assert.Equal(t, "application/json", req.Header.Get("Content-Type"))
	assert.Equal(t, "ua-test", req.Header.Get("User-Agent"))

	req, err = c.NewRequest(t.Context(), http.MethodGet, "persons?meta%5Blimit%5D=3", nil)
	require.NoError(t, err)
	assert.Equal(t, "/banking/v2/persons", req.URL.Path)
	assert.Equal(t, "3", req.URL.Query().Get("meta[limit]"))
	assert.Empty(t, req.Header.Get("Content-Type"))

	c3, err := NewClient("http://up.test/banking", WithVersion("v3"))
	require.NoError(t, err)
	req, err = c3.NewRequest(t.Context(), http.MethodGet, "persons/me", nil)
	require.NoError(t, err)
	assert.Equal(t, "http://up.test/banking/v3/persons/me", req.URL.String())

	_, err = c.NewRequest(t.Context(), http.MethodGet, "http://evil.test/x", nil)
	assert.Error(t, err, "absolute URLs must not escape the base")
}

func TestDoDecodesAndSendsOnlyAllowlistedHeaders(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) {
		writeJSON(w, 200, map[string]any{"id": "p1", "first_name": "Ann"})
	})
	ctx := WithTokenSource(t.Context(), NewTokenStore("tok-A"))
	req, err := c.NewRequest(ctx, http.MethodGet, "persons/p1", nil)
	require.NoError(t, err)
	req.Header.Set("X-Request-Id", "rid-1")
	req.Header.Set("Cookie", "session=browser")
	req.Header.Set("Traceparent", "00-abc-def-01")
	req.Header.Set("Authorization", "Bearer frontend")
	req.Header.Set("X-Forwarded-For", "10.0.0.1")
	req.Header.Set(HeaderAccessToken, "smuggled")

	var p Person
	err = c.Do(req, &p)
	require.NoError(t, err)
	assert.Equal(t, "Ann", p.FirstName)

	h := f.last(t).Header
	assert.Equal(t, "rid-1", h.Get("X-Request-Id"))
	assert.Equal(t, "00-abc-def-01", h.Get("Traceparent"))
	assert.Equal(t, "tok-A", h.Get(HeaderAccessToken), "the token comes from the TokenSource only")
	assert.Empty(t, h.Get("Cookie"))
	assert.Empty(t, h.Get("Authorization"))
	assert.Empty(t, h.Get("X-Forwarded-For"))
}

func TestTokenWriteBack(t *testing.T) {
	for _, status := range []int{200, 400, 401, 404, 500} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			_, c := newFake(t, func(w http.ResponseWriter, s seen) {
				w.Header().Set(HeaderAccessToken, s.Header.Get(HeaderAccessToken)+"+1")
				if status == 200 {
					writeJSON(w, 200, map[string]any{"id": "me"})
					return
				}
				writeJSON(w, status, errBody("", "nope", 0))
			})
			src := &countingSource{TokenStore: TokenStore{tok: "t0"}}
			ctx := WithTokenSource(t.Context(), src)
			_, err := c.Persons.Me(ctx)
			if status == 200 {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
			assert.Equal(t, []string{"t0+1"}, src.setCalls(), "written back once")
			got, _ := src.Token(ctx)
			assert.Equal(t, "t0+1", got, "the refreshed token is written back")
			// Second call sends the refreshed token.
			_, _ = c.Persons.Me(ctx)
			got, _ = src.Token(ctx)
			assert.Equal(t, "t0+1+1", got)
		})
	}
}

func TestTokenWriteBackSkipsUnchangedToken(t *testing.T) {
	_, c := newFake(t, func(w http.ResponseWriter, s seen) {
		w.Header().Set(HeaderAccessToken, s.Header.Get(HeaderAccessToken))
		writeJSON(w, 200, map[string]any{"id": "me"})
	})
	src := &countingSource{TokenStore: TokenStore{tok: "same"}}
	_, err := c.Persons.Me(WithTokenSource(t.Context(), src))
	require.NoError(t, err)
	assert.Empty(t, src.setCalls())
}

// failingSource refuses to store, like a session store that is down.
type failingSource struct{ TokenStore }

func (*failingSource) SetToken(context.Context, string) error { return errors.New("store down") }

func TestTokenWriteBackFailureDoesNotFailTheCall(t *testing.T) {
	_, c := newFake(t, func(w http.ResponseWriter, s seen) {
		w.Header().Set(HeaderAccessToken, "new")
		writeJSON(w, 200, map[string]any{"id": "me"})
	})
	p, err := c.Persons.Me(WithTokenSource(t.Context(), &failingSource{TokenStore{tok: "old"}}))
	require.NoError(t, err)
	assert.Equal(t, "me", p.ID)
}

func TestTokenWriteBackConcurrent(t *testing.T) {
	var n atomic.Int64
	_, c := newFake(t, func(w http.ResponseWriter, s seen) {
		// Each response refreshes the token it was sent with, so each
		// session must end with a refresh of its own token.
		w.Header().Set(HeaderAccessToken, fmt.Sprintf("%s/r%d", strings.Split(s.Header.Get(HeaderAccessToken), "/")[0], n.Add(1)))
		if n.Load()%3 == 0 {
			writeJSON(w, 403, errBody("", "forbidden", 0))
			return
		}
		writeJSON(w, 200, map[string]any{"id": "me"})
	})
	const sessions, callsEach = 16, 8
	stores := make([]*TokenStore, sessions)
	var wg sync.WaitGroup
	for i := range sessions {
		stores[i] = NewTokenStore(fmt.Sprintf("s%d", i))
		ctx := WithTokenSource(t.Context(), stores[i])
		for range callsEach {
			wg.Go(func() { _, _ = c.Persons.Me(ctx) })
		}
	}
	wg.Wait()
	for i, s := range stores {
		tok, _ := s.Token(t.Context())
		assert.True(t, strings.HasPrefix(tok, fmt.Sprintf("s%d/r", i)), "session %d holds %q", i, tok)
	}
	assert.EqualValues(t, sessions*callsEach, n.Load())
}

func TestPublicRoutesSendNoToken(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) { writeJSON(w, 200, map[string]any{}) })
	ctx := WithTokenSource(t.Context(), NewTokenStore("secret-token"))
	err := c.Feedback.Send(ctx, &FeedbackRequest{Name: "a", Email: "a@b.c", Subject: "s", Feedback: "f", Captcha: "cap"})
	require.NoError(t, err)
	err = c.Auth.ForgotPassword(ctx, "a@b.c")
	require.NoError(t, err)
	for _, r := range f.requests() {
		assert.Empty(t, r.Header.Get(HeaderAccessToken), r.Path)
	}
}

func TestRetriesOnlyIdempotentAndBounded(t *testing.T) {
	for _, tc := range []struct {
		method   string
		status   int
		attempts int
	}{
		{http.MethodGet, 503, 3},
		{http.MethodGet, 502, 3},
		{http.MethodGet, 504, 3},
		{http.MethodDelete, 503, 3},
		{http.MethodGet, 500, 1},
		{http.MethodGet, 404, 1},
		{http.MethodPost, 503, 1},
		{http.MethodPut, 503, 1},
	} {
		t.Run(fmt.Sprint(tc.method, tc.status), func(t *testing.T) {
			f, c := newFake(t, func(w http.ResponseWriter, s seen) { writeJSON(w, tc.status, errBody("", "x", 0)) })
			req, err := c.NewRequest(t.Context(), tc.method, "persons/p1", nil)
			require.NoError(t, err)
			err = c.Do(req, nil)
			var er *ErrorResponse
			require.ErrorAs(t, err, &er)
			assert.Equal(t, tc.status, er.StatusCode)
			assert.Len(t, f.requests(), tc.attempts)
		})
	}
}

func TestRetryRecovers(t *testing.T) {
	var calls atomic.Int32
	_, c := newFake(t, func(w http.ResponseWriter, s seen) {
		if calls.Add(1) == 1 {
			writeJSON(w, 503, errBody("", "busy", 0))
			return
		}
		writeJSON(w, 200, map[string]any{"id": "p1"})
	})
	p, err := c.Persons.Get(t.Context(), "p1")
	require.NoError(t, err)
	assert.Equal(t, "p1", p.ID)
	assert.EqualValues(t, 2, calls.Load())
}

func TestRetryOnNetworkError(t *testing.T) {
	var calls atomic.Int32
	f, c := newFake(t, func(w http.ResponseWriter, s seen) {
		calls.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close() // drop the connection without an answer
		}
	})
	_ = f
	_, err := c.Persons.Get(t.Context(), "p1")
	require.Error(t, err)
	assert.True(t, IsUnavailable(err), "%v", err)
	assert.EqualValues(t, 3, calls.Load())

	calls.Store(0)
	_, err = c.Persons.Create(t.Context(), &PersonCreateRequest{FirstName: "A"})
	require.Error(t, err)
	assert.EqualValues(t, 1, calls.Load(), "POST is never retried")
}

func TestTimeoutBoundsTheCall(t *testing.T) {
	release := make(chan struct{})
	_, c := newFake(t, func(w http.ResponseWriter, s seen) {
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
		writeJSON(w, 200, map[string]any{})
	}, roundtrip.WithTimeout(100*time.Millisecond))
	defer close(release)
	start := time.Now()
	_, err := c.Persons.Get(t.Context(), "p1")
	require.Error(t, err)
	assert.True(t, IsUnavailable(err))
	assert.Less(t, time.Since(start), 2*time.Second)
}

func TestBreakerOpensOnServerErrorsOnly(t *testing.T) {
	var status atomic.Int32
	status.Store(400)
	f, c := newFake(t, func(w http.ResponseWriter, s seen) {
		writeJSON(w, int(status.Load()), errBody("", "x", 0))
	}, roundtrip.WithBreaker(3, time.Minute))
	post := func() error {
		_, err := c.Persons.Create(t.Context(), &PersonCreateRequest{FirstName: "A"})
		return err
	}
	for range 10 {
		require.True(t, IsValidation(post()))
	}
	assert.Equal(t, "closed", c.BreakerState(), "4xx answers do not count")

	status.Store(500)
	for range 3 {
		err := post()
		require.True(t, IsUnavailable(err))
		assert.False(t, errors.Is(err, roundtrip.ErrCircuitOpen))
	}
	assert.Equal(t, "open", c.BreakerState())
	before := len(f.requests())
	err := post()
	require.ErrorIs(t, err, roundtrip.ErrCircuitOpen)
	assert.True(t, IsUnavailable(err))
	_, err = c.Persons.Get(t.Context(), "p1")
	require.ErrorIs(t, err, roundtrip.ErrCircuitOpen, "an open circuit fails fast and is not retried")
	assert.Len(t, f.requests(), before, "no request reaches the upstream while open")
}

func TestBreakerHalfOpensAndCloses(t *testing.T) {
	var status atomic.Int32
	status.Store(503)
	_, c := newFake(t, func(w http.ResponseWriter, s seen) {
		writeJSON(w, int(status.Load()), map[string]any{"id": "p"})
	}, roundtrip.WithBreaker(2, 50*time.Millisecond))
	for range 2 {
		_, _ = c.Persons.Create(t.Context(), &PersonCreateRequest{})
	}
	require.Equal(t, "open", c.BreakerState())
	status.Store(200)
	time.Sleep(80 * time.Millisecond)
	_, err := c.Persons.Create(t.Context(), &PersonCreateRequest{})
	require.NoError(t, err)
	assert.Equal(t, "closed", c.BreakerState())
}

func TestCanceledCallerDoesNotTripBreaker(t *testing.T) {
	_, c := newFake(t, func(w http.ResponseWriter, s seen) {
		time.Sleep(200 * time.Millisecond)
		writeJSON(w, 200, map[string]any{})
	}, roundtrip.WithBreaker(2, time.Minute))
	for range 3 {
		ctx, cancel := context.WithCancel(t.Context())
		go func() { time.Sleep(20 * time.Millisecond); cancel() }()
		_, err := c.Persons.Create(ctx, &PersonCreateRequest{})
		require.ErrorIs(t, err, context.Canceled)
		assert.False(t, IsUnavailable(err))
	}
	assert.Equal(t, "closed", c.BreakerState())
}

func TestTokenSourceErrorIsNotUnavailability(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) { writeJSON(w, 200, map[string]any{}) })
	_, err := c.Persons.Me(WithTokenSource(t.Context(), brokenSource{}))
	require.Error(t, err)
	assert.False(t, IsUnavailable(err))
	assert.Empty(t, f.requests())
}

type brokenSource struct{}

func (brokenSource) Token(context.Context) (string, error)  { return "", errors.New("no session") }
func (brokenSource) SetToken(context.Context, string) error { return nil }

// refusingSource records the refusals the client reports.
type refusingSource struct {
	TokenStore
	refused atomic.Int32
}

func (r *refusingSource) TokenRefused(context.Context) { r.refused.Add(1) }

func TestRefusedTokenIsReportedToItsSource(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		field  string
		public bool
		want   int32
	}{
		{"token refused", 401, "", false, 1},
		{"wrong password", 401, "password", false, 0},
		{"public route", 401, "", true, 0},
		{"forbidden", 403, "", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := newFake(t, func(w http.ResponseWriter, s seen) { writeJSON(w, tc.status, errBody(tc.field, "no", 0)) })
			src := &refusingSource{TokenStore: TokenStore{tok: "t"}}
			ctx := WithTokenSource(t.Context(), src)
			var err error
			if tc.public {
				err = c.Auth.ForgotPassword(ctx, "a@b.c")
			} else {
				_, err = c.Persons.Me(ctx)
			}
			require.Error(t, err)
			assert.Equal(t, tc.want, src.refused.Load())
		})
	}
}
