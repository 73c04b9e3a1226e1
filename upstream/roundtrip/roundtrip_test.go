package roundtrip

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statusError is the typed error of the test upstream's Check.
type statusError struct{ status int }

func (e *statusError) Error() string { return fmt.Sprintf("test: %d", e.status) }

func check(r *http.Response) error {
	if r.StatusCode >= 200 && r.StatusCode < 300 {
		return nil
	}
	return &statusError{r.StatusCode}
}

// upstream is an httptest server that counts the requests it answers.
type upstream struct {
	srv   *httptest.Server
	calls atomic.Int32
}

func newUpstream(t *testing.T, h http.HandlerFunc) *upstream {
	t.Helper()
	u := &upstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.calls.Add(1)
		h(w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// hang answers only once the client has given up (or after a long while,
// so that a broken test fails instead of hanging). The server notices a
// closed connection only after the request body is read.
func hang(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// waits records the waits a Sender asked for instead of sleeping them.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) wait(_ context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
	return nil
}

func (w *waits) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

func newSender(t *testing.T, opts ...Option) (*Sender, *waits) {
	t.Helper()
	s, err := New(Upstream{Name: "test", Check: check}, nil, opts...)
	require.NoError(t, err)
	w := &waits{}
	s.wait = w.wait
	return s, w
}

func send(t *testing.T, s *Sender, ctx context.Context, method, url string) error {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(`{"a":1}`))
	require.NoError(t, err)
	return s.Do(req, nil)
}

func TestRetriesOnlyIdempotentCalls(t *testing.T) {
	for _, tc := range []struct {
		method   string
		status   int
		attempts int32
	}{
		{http.MethodGet, 503, 3},
		{http.MethodGet, 502, 3},
		{http.MethodGet, 504, 3},
		{http.MethodDelete, 503, 3},
		{http.MethodHead, 503, 3},
		{http.MethodGet, 500, 1},
		{http.MethodGet, 404, 1},
		{http.MethodGet, 429, 1}, // rate limited without a Retry-After
		{http.MethodPost, 503, 1},
		{http.MethodPut, 503, 1},
		{http.MethodPatch, 503, 1},
	} {
		t.Run(fmt.Sprint(tc.method, tc.status), func(t *testing.T) {
			u := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(tc.status) })
			s, _ := newSender(t)
			err := send(t, s, t.Context(), tc.method, u.srv.URL)
			var se *statusError
			require.ErrorAs(t, err, &se, "the last answer reaches the client's Check")
			assert.Equal(t, tc.status, se.status)
			assert.Equal(t, tc.attempts, u.calls.Load())
		})
	}
}

func TestRetryRecoversAndResendsTheBody(t *testing.T) {
	var bodies []string
	var mu sync.Mutex
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 64)
		n, _ := r.Body.Read(b)
		mu.Lock()
		bodies = append(bodies, string(b[:n]))
		first := len(bodies) == 1
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"id":"x"}`))
	})
	s, _ := newSender(t)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, u.srv.URL, strings.NewReader(`{"a":1}`))
	var out struct{ ID string }
	require.NoError(t, s.Do(req, &out))
	assert.Equal(t, "x", out.ID)
	assert.Equal(t, []string{`{"a":1}`, `{"a":1}`}, bodies)
}

func TestNetworkErrorsAreRetriedAndUnavailable(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close() // drop the connection without an answer
		}
	})
	s, _ := newSender(t)
	err := send(t, s, t.Context(), http.MethodGet, u.srv.URL+"/things?secret=1")
	var ue *UnavailableError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "test", ue.Service)
	assert.Equal(t, "GET /things", ue.Op)
	assert.NotContains(t, err.Error(), "secret", "the query string stays out of errors")
	assert.EqualValues(t, 3, u.calls.Load())

	u.calls.Store(0)
	err = send(t, s, t.Context(), http.MethodPost, u.srv.URL)
	assert.True(t, IsUnavailable(err))
	assert.EqualValues(t, 1, u.calls.Load(), "POST is never retried")
}

func TestRetryAfterIsHonoured(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter func() string
		attempts   int32
		lo, hi     time.Duration // bounds of each recorded wait
	}{
		{"seconds", func() string { return "1" }, 3, time.Second, time.Second},
		{"zero seconds", func() string { return "0" }, 3, 0, 0},
		{"http date", func() string { return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat) }, 3, 500 * time.Millisecond, 2 * time.Second},
		{"date in the past", func() string { return time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat) }, 3, 0, 0},
		{"over the cap: not retried", func() string { return "120" }, 1, 0, 0},
		{"unreadable: backoff instead", func() string { return "soon" }, 3, 0, 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, status := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
				if status == http.StatusTooManyRequests && tc.name == "unreadable: backoff instead" {
					continue // a 429 is retried only when told when
				}
				u := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Retry-After", tc.retryAfter())
					w.WriteHeader(status)
				})
				s, w := newSender(t, WithBackoff(100*time.Millisecond, 5*time.Second))
				err := send(t, s, t.Context(), http.MethodGet, u.srv.URL)
				var se *statusError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, tc.attempts, u.calls.Load(), "status %d", status)
				got := w.all()
				assert.Len(t, got, int(tc.attempts)-1)
				for _, d := range got {
					assert.GreaterOrEqual(t, d, tc.lo, "status %d", status)
					assert.LessOrEqual(t, d, tc.hi, "status %d", status)
				}
			}
		})
	}
}

func TestRetryAfterParses(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		v  string
		d  time.Duration
		ok bool
	}{
		{"3", 3 * time.Second, true},
		{"0", 0, true},
		{"-1", 0, false},
		{"Sat, 01 Mar 2025 12:00:30 GMT", 30 * time.Second, true},
		{"Sat, 01 Mar 2025 11:00:00 GMT", 0, true},
		{"tomorrow", 0, false},
		{"", 0, false},
	} {
		d, ok := RetryAfter(http.Header{"Retry-After": {tc.v}}, now)
		assert.Equal(t, tc.ok, ok, tc.v)
		assert.Equal(t, tc.d, d, tc.v)
	}
}

func TestFullJitterStaysWithinItsBounds(t *testing.T) {
	base, limit := 100*time.Millisecond, time.Second
	for n, ceiling := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 70: time.Second} {
		lowest, highest := ceiling, time.Duration(0)
		for range 2000 {
			d := FullJitter(base, limit, n)
			require.GreaterOrEqual(t, d, time.Duration(0))
			require.LessOrEqual(t, d, ceiling, "retry %d", n)
			lowest, highest = min(lowest, d), max(highest, d)
		}
		// Full jitter spreads over the whole range, not just its top half:
		// 2000 draws all above a quarter (or below three quarters) of it
		// would happen with probability 0.75^2000.
		assert.Less(t, lowest, ceiling/4, "retry %d", n)
		assert.Greater(t, highest, ceiling*3/4, "retry %d", n)
	}
}

func TestDeadlineBoundsTheCall(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { hang(r) })
	s, w := newSender(t, WithTimeout(50*time.Millisecond))
	err := send(t, s, t.Context(), http.MethodGet, u.srv.URL)
	var ue *UnavailableError
	require.ErrorAs(t, err, &ue)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualValues(t, 1, u.calls.Load(), "a call out of time is not tried again")
	assert.Empty(t, w.all())
}

func TestNoRetryWhenTheWaitOutlastsTheDeadline(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	s, w := newSender(t, WithTimeout(time.Second), WithBackoff(time.Millisecond, 5*time.Second))
	err := send(t, s, t.Context(), http.MethodGet, u.srv.URL)
	var se *statusError
	require.ErrorAs(t, err, &se)
	assert.EqualValues(t, 1, u.calls.Load())
	assert.Empty(t, w.all())
}

func TestBreakerOpensOnFailuresOnlyAndHalfOpens(t *testing.T) {
	var status atomic.Int32
	status.Store(400)
	u := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(status.Load())) })
	s, _ := newSender(t, WithBreaker(3, 50*time.Millisecond))
	post := func() error { return send(t, s, t.Context(), http.MethodPost, u.srv.URL) }
	for range 10 {
		var se *statusError
		require.ErrorAs(t, post(), &se)
	}
	assert.Equal(t, "closed", s.BreakerState(), "4xx answers are not failures")

	status.Store(500)
	for range 3 {
		err := post()
		var se *statusError
		require.ErrorAs(t, err, &se, "a 5xx answer is still the upstream's answer")
	}
	assert.Equal(t, "open", s.BreakerState())
	before := u.calls.Load()
	err := post()
	require.ErrorIs(t, err, ErrCircuitOpen)
	assert.True(t, IsUnavailable(err))
	err = send(t, s, t.Context(), http.MethodGet, u.srv.URL)
	require.ErrorIs(t, err, ErrCircuitOpen, "an open circuit fails fast and is not retried")
	assert.Equal(t, before, u.calls.Load(), "no request reaches the upstream while open")

	// After the open period one probe goes through; its success closes.
	require.Eventually(t, func() bool { return s.BreakerState() == "half-open" }, 5*time.Second, 5*time.Millisecond)
	status.Store(200)
	require.NoError(t, post())
	assert.Equal(t, "closed", s.BreakerState())
	assert.Equal(t, before+1, u.calls.Load())

	// A failed probe opens it again.
	status.Store(503)
	for range 3 {
		_ = post()
	}
	require.Eventually(t, func() bool { return s.BreakerState() == "half-open" }, 5*time.Second, 5*time.Millisecond)
	_ = post()
	assert.Equal(t, "open", s.BreakerState())
}

func TestCancellationIsNotAFailure(t *testing.T) {
	arrived := make(chan struct{}, 1)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		hang(r)
	})
	s, _ := newSender(t, WithBreaker(2, time.Minute))
	for range 3 {
		ctx, cancel := context.WithCancel(t.Context())
		go func() { <-arrived; cancel() }()
		err := send(t, s, ctx, http.MethodGet, u.srv.URL)
		require.ErrorIs(t, err, context.Canceled)
		assert.False(t, IsUnavailable(err), "the caller gave up; the upstream did not fail")
	}
	assert.Equal(t, "closed", s.BreakerState())
	assert.EqualValues(t, 3, u.calls.Load(), "a cancelled call is not retried")
}

func TestPrepareErrorsAreTheCallersOwn(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) {})
	refused := errors.New("no credential")
	s, err := New(Upstream{Name: "test", Check: check, Prepare: func(*http.Request) error { return refused }}, nil, WithBreaker(1, time.Minute))
	require.NoError(t, err)
	for range 3 {
		err := send(t, s, t.Context(), http.MethodGet, u.srv.URL)
		require.ErrorIs(t, err, refused)
		assert.False(t, IsUnavailable(err))
	}
	assert.Zero(t, u.calls.Load())
	assert.Equal(t, "closed", s.BreakerState())
}

func TestHooksSeeEveryAttempt(t *testing.T) {
	var n atomic.Int32
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", r.Header.Get("X-Attempt"))
		if n.Add(1) < 3 {
			w.WriteHeader(http.StatusBadGateway)
		}
	})
	var prepared atomic.Int32
	var answered []string
	s, err := New(Upstream{Name: "test", Check: check,
		Prepare: func(r *http.Request) error {
			r.Header.Set("X-Attempt", fmt.Sprint(prepared.Add(1)))
			return nil
		},
		Answered: func(r *http.Request, resp *http.Response) {
			answered = append(answered, r.Header.Get("X-Attempt")+"="+resp.Header.Get("X-Echo"))
		},
	}, nil, WithBackoff(time.Microsecond, time.Microsecond))
	require.NoError(t, err)
	require.NoError(t, send(t, s, t.Context(), http.MethodGet, u.srv.URL))
	assert.Equal(t, []string{"1=1", "2=2", "3=3"}, answered)
}

type fakeClient struct{ version string }

func TestOptionsAreValidated(t *testing.T) {
	withVersion := func(v string) Option {
		return ClientOption(func(c *fakeClient) error {
			if v == "" {
				return errors.New("empty version")
			}
			c.version = v
			return nil
		})
	}
	for _, tc := range []struct {
		name string
		opt  Option
		ok   bool
	}{
		{"timeout", WithTimeout(time.Second), true},
		{"zero timeout", WithTimeout(0), false},
		{"retries", WithRetries(0), true},
		{"negative retries", WithRetries(-1), false},
		{"too many retries", WithRetries(100), false},
		{"backoff", WithBackoff(time.Millisecond, time.Second), true},
		{"backoff max below base", WithBackoff(time.Second, time.Millisecond), false},
		{"breaker", WithBreaker(1, time.Second), true},
		{"breaker never trips", WithBreaker(0, time.Second), false},
		{"nil transport", WithTransport(nil), false},
		{"share window", WithShareWindow(0), true},
		{"negative share window", WithShareWindow(-time.Millisecond), false},
		{"share window too long", WithShareWindow(time.Second), false},
		{"nil logger", WithLogger(nil), false},
		{"empty user agent", WithUserAgent(""), false},
		{"client option", withVersion("v3"), true},
		{"bad client option", withVersion(""), false},
		{"another client's option", ClientOption(func(*strings.Builder) error { return nil }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeClient{}
			_, err := New(Upstream{Name: "test", Check: check}, c, tc.opt)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.True(t, strings.HasPrefix(err.Error(), "test: "), "the error names the upstream: %v", err)
			}
		})
	}
	c := &fakeClient{}
	_, err := New(Upstream{Name: "test", Check: check}, c, withVersion("v3"))
	require.NoError(t, err)
	assert.Equal(t, "v3", c.version)
}

func TestDefaultTransportIsTuned(t *testing.T) {
	s, err := New(Upstream{Name: "test", Check: check}, nil)
	require.NoError(t, err)
	tr, ok := s.cfg.transport.(*http.Transport)
	require.True(t, ok)
	assert.GreaterOrEqual(t, tr.MaxIdleConnsPerHost, 32, "Go's default of 2 forces new connections under load")
	assert.NotZero(t, tr.TLSHandshakeTimeout)
	assert.Equal(t, DefaultTimeout, s.Timeout())
}

func TestDecodeWritesRawBodiesToWriters(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("%PDF-1.4 raw")) })
	s, _ := newSender(t)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, u.srv.URL, nil)
	var b strings.Builder
	require.NoError(t, s.Do(req, &b))
	assert.Equal(t, "%PDF-1.4 raw", b.String())

	var v struct{ A int }
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, u.srv.URL, nil)
	err := s.Do(req, &v)
	require.Error(t, err)
	assert.False(t, IsUnavailable(err), "a garbled answer is a contract breach, not an outage")
}

// An upstream's redirect goes back to the caller as the answer it is; it is
// never followed. Following it sent the call again, with the credentials
// Prepare put on it (the banking token travels in a header of its own, which
// Go's redirect policy does not strip), to wherever Location pointed.
func TestARedirectIsAnsweredNotFollowed(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			var leaked atomic.Value
			elsewhere := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				leaked.Store(r.Header.Get("X-Access-Token") + r.Header.Get("Authorization"))
			})
			u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, elsewhere.srv.URL+"/collect", http.StatusTemporaryRedirect)
			})
			s, err := New(Upstream{Name: "test", Check: check, Prepare: func(r *http.Request) error {
				r.Header.Set("X-Access-Token", "tok_secret")
				r.Header.Set("Authorization", "Bearer sk_secret")
				return nil
			}}, nil)
			require.NoError(t, err)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u.srv.URL+"/v1/thing", nil)
			require.NoError(t, err)
			if stream {
				var resp *http.Response
				if resp, err = s.Stream(req); resp != nil {
					_ = resp.Body.Close()
				}
			} else {
				err = s.Do(req, &struct{}{})
			}
			var se *statusError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, http.StatusTemporaryRedirect, se.status)
			assert.Equal(t, int32(1), u.calls.Load())
			assert.Zero(t, elsewhere.calls.Load(), "the redirect was followed")
			assert.Nil(t, leaked.Load(), "credentials reached the redirect's target")
			assert.Equal(t, "closed", s.BreakerState(), "a redirect says nothing about the upstream's health")
		})
	}
}

func TestRouteGroups(t *testing.T) {
	for path, want := range map[string]string{
		"/payments/v1/order":               "order",
		"/payments/v1/order/o1/capture":    "order",
		"/payments/v1/events/e1":           "events",
		"/payments/v3/events/e1":           "events",
		"/payments/v1/customer/c1/methods": "customer",
		"/banking/v2/cards/7/credentials":  "cards",
		"/banking/cards/issue":             "cards",
		"/banking/v2/corporations/1/kyc":   "corporations",
		"/elsewhere/v1/order":              "/",
		"/bankingx/v2/cards":               "/",
		"/banking/v2":                      "/",
	} {
		base := "/payments/"
		if strings.HasPrefix(path, "/banking") || strings.HasPrefix(path, "/elsewhere") {
			base = "/banking"
		}
		assert.Equal(t, want, RouteGroup(base, path), path)
	}
	assert.Equal(t, "order", RouteGroup("", "/v1/order"), "an upstream at the host's root")
}

// A failing route group opens its own breaker only: the other groups of
// the upstream still reach it. Past maxGroups, groups share one breaker.
func TestBreakerPerRouteGroup(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/order") {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	s, _ := newSender(t, WithBreaker(3, time.Minute), WithRetries(0))
	for range 3 {
		_ = send(t, s, t.Context(), http.MethodPost, u.srv.URL+"/v1/order")
	}
	require.ErrorIs(t, send(t, s, t.Context(), http.MethodPost, u.srv.URL+"/v1/order/o1/capture"), ErrCircuitOpen)
	assert.Equal(t, "open", s.BreakerState(), "the upstream reports its worst group")
	assert.Equal(t, "open", s.GroupBreakerState("order"))
	assert.Equal(t, "closed", s.GroupBreakerState("events"))
	before := u.calls.Load()
	require.NoError(t, send(t, s, t.Context(), http.MethodGet, u.srv.URL+"/v1/events/e1"))
	assert.Equal(t, before+1, u.calls.Load(), "another group still reaches the upstream")

	for i := range maxGroups + 10 {
		_ = send(t, s, t.Context(), http.MethodGet, fmt.Sprintf("%s/g%d", u.srv.URL, i))
	}
	s.mu.Lock()
	n := len(s.breakers)
	s.mu.Unlock()
	assert.Equal(t, maxGroups+1, n, "groups past the bound share one breaker")
}
