// Package roundtrip is the one way the upstream clients (payments, banking)
// send a request. It owns what the two upstreams have in common: a transport
// tuned for one busy host, a deadline on every call, retries of idempotent
// calls with full-jitter backoff that honours Retry-After, resending a call
// whose credential was refused while its holder has another (Upstream.Refused),
// one circuit breaker per route group of an upstream, one call for the same
// read of readers at the same time (share.go), the "upstream could not answer" error
// (UnavailableError), and the shape in which an upstream's refusal reaches
// the gateway's edge (Rejection).
//
// A client keeps what is its own: building requests, credentials, and the
// typed errors of its CheckResponse. It plugs those in through Upstream and
// gets a Sender; its options and the shared ones travel in one list of
// Option values, validated when the client is built.
package roundtrip

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"
)

// Defaults of the shared settings; every client starts from these.
const (
	// DefaultTimeout bounds one call, retries and waits included.
	DefaultTimeout = 10 * time.Second
	// DefaultRetries is how often an idempotent call is tried again.
	DefaultRetries = 2
	// DefaultBackoffBase is the first retry's backoff ceiling; it doubles
	// with each retry.
	DefaultBackoffBase = 100 * time.Millisecond
	// DefaultBackoffMax caps every wait between attempts: the backoff, and
	// the Retry-After an upstream asks for (a longer one is not waited for).
	DefaultBackoffMax = 2 * time.Second
	// DefaultTripAfter is how many consecutive failures open the breaker.
	// Every attempt counts, retries included, so it is set well above what
	// a flaky-but-working upstream produces: at a 30% failure rate, 10 in a
	// row happen once in about 170,000 attempts.
	DefaultTripAfter = 10
	// A breaker also opens when at least 60% of the calls of its current
	// window (tripWindow, at least tripMinCalls calls) failed: far above
	// what a 30% failure rate produces by chance over 50 calls.
	tripMinCalls = 50
	tripRatio    = 0.6
	tripWindow   = 30 * time.Second
	// DefaultOpenFor is how long an open breaker fails fast before it lets
	// one probe through.
	DefaultOpenFor = 10 * time.Second
	// DefaultUserAgent identifies the gateway to the upstreams.
	DefaultUserAgent = "fingraph"

	// maxBody bounds how much of an answer is read into memory.
	maxBody = 16 << 20
	// DefaultShareWindow is how long a read in demand waits for others to
	// share it. Under load (16 clients of one query) it answers about six
	// of seven reads from another's call, and the answers come sooner,
	// because the upstream has less to do (docs/performance.md).
	DefaultShareWindow = time.Millisecond
	// maxShareWindow bounds WithShareWindow: the wait is latency every
	// sharing caller pays.
	maxShareWindow = 10 * time.Millisecond
	// maxRetries bounds WithRetries: more attempts than this only prolong
	// an outage for the caller.
	maxRetries = 10
)

// Upstream is what a client plugs into the shared send path.
type Upstream struct {
	// Name names the upstream in errors, logs and the breaker ("payments").
	Name string
	// BasePath is the path of the upstream's base URL ("/payments"):
	// route groups, each with a breaker of its own, are named by the first
	// path segment after it that is not a version ("/payments/v1/order/x"
	// is "order"). See RouteGroup.
	BasePath string
	// Check turns a non-2xx answer into the client's typed error (its
	// CheckResponse); it returns nil for 2xx. Required.
	Check func(*http.Response) error
	// Prepare, when set, finishes each attempt's request (the request is a
	// fresh clone per attempt): credentials that may change between
	// attempts, header allowlists. An error stops the call; it is neither
	// retried nor counted against the upstream.
	Prepare func(*http.Request) error
	// Answered, when set, sees every answer of every attempt, before its
	// status is looked at, with the request as Prepare left it (a refreshed
	// token is written back here).
	Answered func(*http.Request, *http.Response)
	// Begin, when set, starts a call, before its first attempt: given the
	// call's context, it returns the context the call's attempts carry
	// (with state of the call's own, for Prepare, Answered and Refused to
	// find) and, unless nil, a func called once the last attempt is
	// answered.
	Begin func(context.Context) (context.Context, func())
	// Refused, when set, sees every answer after Answered and reports
	// whether it refuses the call's credential in a way that another
	// credential may mend (the upstream did not act on the call), and
	// whether the holder has another to try. The call is then sent again
	// at once, whatever its method, and Prepare sets the other credential;
	// such resends do not count against WithRetries, and a streamed call
	// (Stream) is never resent. When no other credential is accepted, the
	// call's outcome is its first refusal, unchanged.
	Refused func(*http.Request, *http.Response) (refused, again bool)
	// Shared says that a request of this upstream, as its client builds
	// it, decides the answer: no hook above adds anything of the caller's.
	// Its GETs may then share one call among callers whose contexts allow
	// it (ShareFrom; share.go has the rules).
	Shared bool
}

// settings are the shared knobs, set by Options.
type settings struct {
	transport   http.RoundTripper
	timeout     time.Duration
	retries     int
	backoffBase time.Duration
	backoffMax  time.Duration
	tripAfter   uint32
	openFor     time.Duration
	shareWindow time.Duration
	noSharing   bool
	userAgent   string
	logger      *slog.Logger
	// client holds the options a client defines for itself, applied to the
	// client once the shared ones are in place.
	client []func(any) error
}

// Option configures a client built on this package: a shared setting
// (WithTimeout, ...) or, through ClientOption, one of the client's own. An
// option that is out of range makes the client's constructor fail.
type Option func(*settings) error

// WithTransport replaces the default transport (NewTransport), for example
// to add instrumentation. Calls go to it directly, not through an
// http.Client: an upstream's redirect is answered to the client as the
// non-2xx answer it is (its Check's error), never followed, because
// following it would send the call's credentials, Prepare's headers, to
// wherever Location points. It also spares each call the client's copy of
// its headers. WithTimeout bounds every call.
func WithTransport(rt http.RoundTripper) Option {
	return func(s *settings) error {
		if rt == nil {
			return errors.New("nil transport")
		}
		s.transport = rt
		return nil
	}
}

// WithTimeout bounds each call, retries and the waits between them included.
func WithTimeout(d time.Duration) Option {
	return func(s *settings) error {
		if d <= 0 {
			return fmt.Errorf("timeout must be positive, got %s", d)
		}
		s.timeout = d
		return nil
	}
}

// WithRetries sets how often an idempotent call (GET, HEAD, DELETE,
// OPTIONS) is tried again after a network error or a 502, 503 or 504; 0
// turns retries off. Other methods are never retried: repeating them can
// repeat their effect.
func WithRetries(n int) Option {
	return func(s *settings) error {
		if n < 0 || n > maxRetries {
			return fmt.Errorf("retries must be 0 to %d, got %d", maxRetries, n)
		}
		s.retries = n
		return nil
	}
}

// WithBackoff sets the full-jitter backoff between retries: retry n waits a
// random time in [0, min(max, base*2^(n-1))]. max also caps the Retry-After
// an upstream may ask for; a longer one ends the retries instead. Tests
// shrink both.
func WithBackoff(base, max time.Duration) Option {
	return func(s *settings) error {
		if base <= 0 || max < base {
			return fmt.Errorf("backoff needs 0 < base <= max, got base %s, max %s", base, max)
		}
		s.backoffBase, s.backoffMax = base, max
		return nil
	}
}

// WithBreaker tunes the circuit breaker: it opens after tripAfter
// consecutive failures (network errors, timeouts, 5xx answers) and fails
// fast for openFor before letting one probe through.
func WithBreaker(tripAfter uint32, openFor time.Duration) Option {
	return func(s *settings) error {
		if tripAfter == 0 || openFor <= 0 {
			return fmt.Errorf("breaker needs a positive threshold and open period, got %d and %s", tripAfter, openFor)
		}
		s.tripAfter, s.openFor = tripAfter, openFor
		return nil
	}
}

// WithShareWindow sets how long a read in demand waits before it is sent,
// for the readers arriving meanwhile to share it (Upstream.Shared,
// share.go): up to maxShareWindow; 0 sends every read at once.
func WithShareWindow(d time.Duration) Option {
	return func(s *settings) error {
		if d < 0 || d > maxShareWindow {
			return fmt.Errorf("share window must be 0 to %s, got %s", maxShareWindow, d)
		}
		s.shareWindow = d
		return nil
	}
}

// WithoutSharing makes every read a call of its own, even of an upstream
// whose reads may be shared (Upstream.Shared).
func WithoutSharing() Option {
	return func(s *settings) error {
		s.noSharing = true
		return nil
	}
}

// WithUserAgent sets the User-Agent header of every request.
func WithUserAgent(ua string) Option {
	return func(s *settings) error {
		if ua == "" {
			return errors.New("empty user agent")
		}
		s.userAgent = ua
		return nil
	}
}

// WithLogger sets the logger for retries and breaker changes. It never
// receives request bodies, header values or credentials.
func WithLogger(l *slog.Logger) Option {
	return func(s *settings) error {
		if l == nil {
			return errors.New("nil logger")
		}
		s.logger = l
		return nil
	}
}

// ClientOption makes an Option of a setting of one client type C, so that a
// client's own options (the banking API version, ...) travel in the same
// list as the shared ones. Given to another client type, it fails that
// client's constructor.
func ClientOption[C any](set func(*C) error) Option {
	return func(s *settings) error {
		s.client = append(s.client, func(c any) error {
			cc, ok := c.(*C)
			if !ok {
				return fmt.Errorf("an option of %T given to %T", (*C)(nil), c)
			}
			return set(cc)
		})
		return nil
	}
}

// NewTransport returns an HTTP transport tuned for one busy upstream host:
// Go's default keeps only two idle connections per host, which forces new
// TCP (and TLS) handshakes under any concurrency. Its read buffer holds a
// typical listing, which Go's 4 KB buffer reads in several system calls
// (docs/performance.md, "Settings chosen by measurement").
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 15 * time.Second,
		ExpectContinueTimeout: time.Second,
		ReadBufferSize:        32 << 10,
	}
}

// Sender sends the calls of one upstream. It is safe for concurrent use.
// Each route group has its own circuit breaker, shared by every call to
// that group: one failing resource (the order routes) fails fast alone,
// while the others (the event read that webhook enrichment needs) go on.
type Sender struct {
	up  Upstream
	cfg settings
	// breakers holds one breaker per route group, made on first use; at
	// most maxGroups, then the rest share one.
	mu       sync.Mutex
	breakers map[string]*gobreaker.CircuitBreaker[*http.Response]
	// wait sleeps between attempts; tests record instead of sleeping.
	wait func(ctx context.Context, d time.Duration) error
	// flights are the calls in flight that callers may share (share.go),
	// sharedAnswers counts the callers that shared one.
	flights       flights
	sharedAnswers atomic.Uint64
}

// New applies opts (the shared ones to the Sender, a client's own to
// client) and returns the send path of upstream up. Errors name the upstream.
func New(up Upstream, client any, opts ...Option) (*Sender, error) {
	if up.Name == "" || up.Check == nil {
		return nil, errors.New("roundtrip: an upstream needs a name and a Check")
	}
	s := &Sender{up: up, wait: sleep, cfg: settings{
		timeout:     DefaultTimeout,
		retries:     DefaultRetries,
		backoffBase: DefaultBackoffBase,
		backoffMax:  DefaultBackoffMax,
		tripAfter:   DefaultTripAfter,
		openFor:     DefaultOpenFor,
		shareWindow: DefaultShareWindow,
		userAgent:   DefaultUserAgent,
		logger:      slog.New(slog.DiscardHandler),
	}}
	for _, o := range opts {
		if err := o(&s.cfg); err != nil {
			return nil, fmt.Errorf("%s: %w", up.Name, err)
		}
	}
	for _, set := range s.cfg.client {
		if err := set(client); err != nil {
			return nil, fmt.Errorf("%s: %w", up.Name, err)
		}
	}
	if s.cfg.transport == nil {
		s.cfg.transport = NewTransport()
	}
	s.breakers = map[string]*gobreaker.CircuitBreaker[*http.Response]{}
	return s, nil
}

// maxGroups bounds the breakers of one upstream: the groups are the spec's
// resources, a few dozen; a path that names more (a report URL the
// upstream made up) shares the overflow breaker.
const maxGroups = 64

// overflowGroup names the breaker shared past maxGroups groups.
const overflowGroup = "(other)"

// RouteGroup names the route group of path under basePath: the first path
// segment after basePath that is not an API version (v1, v2, ...), so that
// "/banking/v2/cards/7/credentials" and "/banking/cards/issue" are both
// "cards". A path outside basePath, or with no segment, is "/".
func RouteGroup(basePath, path string) string {
	rest, ok := strings.CutPrefix(path, strings.TrimRight(basePath, "/"))
	if !ok || (rest != "" && rest[0] != '/') {
		return "/"
	}
	for seg := range strings.SplitSeq(rest, "/") {
		if seg == "" || isVersion(seg) {
			continue
		}
		return seg
	}
	return "/"
}

func isVersion(seg string) bool {
	if len(seg) < 2 || seg[0] != 'v' {
		return false
	}
	for _, c := range seg[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// breaker returns the circuit breaker of req's route group.
func (s *Sender) breaker(req *http.Request) *gobreaker.CircuitBreaker[*http.Response] {
	group := RouteGroup(s.up.BasePath, req.URL.Path)
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.breakers[group]; b != nil {
		return b
	}
	if len(s.breakers) >= maxGroups {
		group = overflowGroup
		if b := s.breakers[group]; b != nil {
			return b
		}
	}
	logger := s.cfg.logger
	b := gobreaker.NewCircuitBreaker[*http.Response](gobreaker.Settings{
		Name:     group,
		Timeout:  s.cfg.openFor,
		Interval: tripWindow,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.ConsecutiveFailures >= s.cfg.tripAfter ||
				(c.Requests >= tripMinCalls && float64(c.TotalFailures) >= tripRatio*float64(c.Requests))
		},
		// A caller that gives up says nothing about the upstream's health.
		IsSuccessful: func(err error) bool { return err == nil || errors.Is(err, context.Canceled) },
		OnStateChange: func(name string, from, to gobreaker.State) {
			logger.Warn("circuit breaker", "upstream", s.up.Name, "group", name, "from", from.String(), "to", to.String())
		},
	})
	s.breakers[group] = b
	return b
}

// UserAgent is the User-Agent the client's requests carry.
func (s *Sender) UserAgent() string { return s.cfg.userAgent }

// Logger is the logger the client was given.
func (s *Sender) Logger() *slog.Logger { return s.cfg.logger }

// Timeout is the deadline of one call.
func (s *Sender) Timeout() time.Duration { return s.cfg.timeout }

// GroupBreakerState reports the state of one route group's breaker (see
// RouteGroup): "closed" for a group not called yet. For a caller that
// depends on one group only, such as event enrichment on "events".
func (s *Sender) GroupBreakerState(group string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.breakers[group]; b != nil {
		return b.State().String()
	}
	return gobreaker.StateClosed.String()
}

// BreakerState reports the state of the upstream's circuit breakers for
// readiness probes and metrics: "open" when any route group's is open,
// else "half-open" when any is probing, else "closed".
func (s *Sender) BreakerState() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	worst := gobreaker.StateClosed
	for _, b := range s.breakers {
		switch st := b.State(); {
		case st == gobreaker.StateOpen:
			return st.String()
		case st == gobreaker.StateHalfOpen:
			worst = st
		}
	}
	return worst.String()
}

// errServerStatus tells the breaker that a 5xx answer is a failure while the
// answer itself is kept, so its error body can still be read.
var errServerStatus = errors.New("server error status")

// prepareError keeps a failing Prepare apart from upstream trouble.
type prepareError struct{ err error }

func (e *prepareError) Error() string { return e.err.Error() }
func (e *prepareError) Unwrap() error { return e.err }

// Do sends req under the call's deadline, through the breaker, retrying an
// idempotent call where that can help; then it checks the answer with the
// upstream's Check and decodes a 2xx JSON body into v (when v is not nil; an
// io.Writer receives the raw body). It returns the client's typed error for
// a non-2xx answer, *UnavailableError when the upstream could not answer,
// and an error wrapping context.Canceled when the caller gave up.
func (s *Sender) Do(req *http.Request, v any) error {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return fmt.Errorf("%s: read request body: %w", s.up.Name, err)
		}
		body = b
	}
	resp, err := s.call(req, body)
	if err != nil {
		return s.failure(req, err)
	}
	if err := s.up.Check(resp); err != nil {
		return err
	}
	return s.decode(req, resp, v)
}

// call gets req's answer: from a call it may share (share.go), or from a
// call of its own under the call's deadline.
func (s *Sender) call(req *http.Request, body []byte) (*http.Response, error) {
	if from, ok := s.shareable(req, body); ok {
		return s.share(req, from)
	}
	ctx, cancel := context.WithTimeout(req.Context(), s.cfg.timeout)
	defer cancel()
	return s.exchange(ctx, req, body)
}

// exchange makes the attempts of one call, between the upstream's Begin and
// its end, and returns the outcome: retrying an idempotent call where that
// can help, and resending a call whose credential was refused while the
// holder has another (Refused).
func (s *Sender) exchange(ctx context.Context, req *http.Request, body []byte) (*http.Response, error) {
	if s.up.Begin != nil {
		var end func()
		if ctx, end = s.up.Begin(ctx); end != nil {
			defer end()
		}
	}
	attempts := 1
	if idempotent(req.Method) {
		attempts += s.cfg.retries
	}
	var refusal *http.Response // the call's first refused credential
	// n counts the attempts WithRetries bounds; a resend with another
	// credential is not one of them.
	for n, sent := 1, 0; ; sent++ {
		resp, refused, again, err := s.attempt(ctx, req, body, sent == 0)
		switch {
		case refused:
			if refusal == nil {
				refusal = resp
			}
			if again {
				continue
			}
			return refusal, nil
		case n == attempts:
			return resp, err
		}
		d, retry := s.retryWait(n, resp, err)
		if !retry || !fits(ctx, d) || s.wait(ctx, d) != nil {
			return resp, err // keep this attempt's outcome
		}
		n++
		s.cfg.logger.Debug("upstream retry", "upstream", s.up.Name, "method", req.Method, "path", req.URL.Path, "attempt", n)
	}
}

// attempt performs one round trip through its route group's breaker. The answer's body is
// read whole inside the breaker (a body cut off counts as a failure) and
// replaced by an in-memory reader. refused and again are the upstream's
// Refused verdict on the answer.
//
// The first attempt sends orig itself (with ctx): the request is this
// call's own, and a copy of its headers would be allocated for every
// upstream call. A
// retry sends a copy, so that Prepare's headers for it never touch a map an
// abandoned earlier attempt's transport may still be reading.
func (s *Sender) attempt(ctx context.Context, orig *http.Request, body []byte, first bool) (resp *http.Response, refused, again bool, err error) {
	req := orig.WithContext(ctx)
	if !first {
		req = orig.Clone(ctx)
	}
	if body != nil {
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req.ContentLength = int64(len(body))
	}
	if s.up.Prepare != nil {
		if err := s.up.Prepare(req); err != nil {
			return nil, false, false, &prepareError{err}
		}
	}
	resp, err = s.breaker(req).Execute(func() (*http.Response, error) {
		resp, err := s.cfg.transport.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		raw, rerr := readAll(resp.Body, resp.ContentLength)
		_ = resp.Body.Close()
		resp.Body = &readBody{Reader: bytes.NewReader(raw), raw: raw}
		if rerr != nil {
			return resp, rerr
		}
		if resp.StatusCode >= 500 {
			return resp, errServerStatus
		}
		return resp, nil
	})
	if resp != nil && s.up.Answered != nil {
		s.up.Answered(req, resp)
	}
	switch {
	case errors.Is(err, errServerStatus):
		return resp, false, false, nil
	case errors.Is(err, gobreaker.ErrOpenState), errors.Is(err, gobreaker.ErrTooManyRequests):
		return nil, false, false, ErrCircuitOpen
	case err != nil:
		return nil, false, false, err
	}
	if s.up.Refused != nil {
		refused, again = s.up.Refused(req, resp)
	}
	return resp, refused, again, nil
}

// Stream sends req once, through the breaker and the upstream's Prepare and
// Answered hooks, without buffering either body: for uploads that are
// streamed up (req.Body is read once, so it is never retried) and files
// streamed down. A 2xx answer is returned with its body open for the caller
// to read and close; any other answer is checked and returned as the
// client's typed error. The call's deadline bounds the wait for the answer's
// headers; the body is bounded by req's context only, so that a large file
// is not cut off.
func (s *Sender) Stream(req *http.Request) (*http.Response, error) {
	if s.up.Begin != nil {
		ctx, end := s.up.Begin(req.Context())
		req = req.WithContext(ctx)
		if end != nil {
			defer end()
		}
	}
	if s.up.Prepare != nil {
		if err := s.up.Prepare(req); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(req.Context())
	var expired atomic.Bool
	headers := time.AfterFunc(s.cfg.timeout, func() { expired.Store(true); cancel() })
	req = req.WithContext(ctx)
	resp, err := s.breaker(req).Execute(func() (*http.Response, error) {
		resp, err := s.cfg.transport.RoundTrip(req)
		if err != nil && expired.Load() {
			// Our deadline, not the caller giving up: a failure.
			return nil, context.DeadlineExceeded
		}
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 500 {
			return resp, errServerStatus
		}
		return resp, nil
	})
	if !headers.Stop() && err == nil {
		// The deadline passed while the answer arrived: the body is cut.
		err = context.DeadlineExceeded
	}
	if resp != nil && s.up.Answered != nil {
		s.up.Answered(req, resp)
	}
	switch {
	case errors.Is(err, errServerStatus):
		err = nil
	case errors.Is(err, gobreaker.ErrOpenState), errors.Is(err, gobreaker.ErrTooManyRequests):
		cancel()
		return nil, &UnavailableError{Service: s.up.Name, Op: req.Method + " " + req.URL.Path, Err: ErrCircuitOpen}
	}
	if err != nil {
		cancel()
		if resp != nil {
			_ = resp.Body.Close()
		}
		return nil, s.failure(req, err)
	}
	if resp.StatusCode >= 300 {
		defer cancel()
		defer resp.Body.Close()
		resp.Body = io.NopCloser(io.LimitReader(resp.Body, maxBody))
		if err := s.up.Check(resp); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %s %s: unexpected status %d", s.up.Name, req.Method, req.URL.Path, resp.StatusCode)
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose releases a streamed call's context with its body.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// retryWait decides whether attempt n's outcome is worth another attempt,
// and how long to wait first.
func (s *Sender) retryWait(n int, resp *http.Response, err error) (time.Duration, bool) {
	if err != nil {
		var pe *prepareError
		if errors.As(err, &pe) || errors.Is(err, ErrCircuitOpen) ||
			errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return 0, false
		}
		return FullJitter(s.cfg.backoffBase, s.cfg.backoffMax, n), true // network error
	}
	switch resp.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusTooManyRequests:
	default:
		return 0, false
	}
	if d, ok := RetryAfter(resp.Header, time.Now()); ok {
		// The upstream said when; waiting longer than the cap is not worth
		// the caller's time, and retrying earlier would ignore it.
		return d, d <= s.cfg.backoffMax
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return 0, false // rate limited, and not told when to come back
	}
	return FullJitter(s.cfg.backoffBase, s.cfg.backoffMax, n), true
}

// failure turns a transport-level error into what the caller sees.
func (s *Sender) failure(req *http.Request, err error) error {
	var pe *prepareError
	if errors.As(err, &pe) {
		return pe.err
	}
	op := req.Method + " " + req.URL.Path
	if errors.Is(err, context.Canceled) && req.Context().Err() != nil {
		return fmt.Errorf("%s: %s: %w", s.up.Name, op, err)
	}
	return &UnavailableError{Service: s.up.Name, Op: op, Err: scrub(err)}
}

// readAll reads an answer of up to maxBody bytes, in one allocation when
// its length is announced (profiles showed the doubling copies of
// io.ReadAll as the largest allocation of a query).
func readAll(r io.Reader, length int64) ([]byte, error) {
	if length < 0 || length > maxBody {
		return readUnannounced(r)
	}
	buf := make([]byte, length, length+1) // +1: room to probe for more
	if n, err := io.ReadFull(r, buf); err != nil {
		return buf[:n], err
	}
	// A body longer than announced is read on, as io.ReadAll would.
	if n, err := io.ReadFull(r, buf[length:length+1]); n == 0 {
		if errors.Is(err, io.EOF) {
			err = nil
		}
		return buf, err
	}
	rest, err := io.ReadAll(io.LimitReader(r, maxBody-length-1))
	return append(buf[:length+1], rest...), err
}

// readUnannounced reads an answer whose length is not announced (chunked,
// as the sandbox and many servers send JSON of more than a few KB) through
// a pooled buffer, and returns it in one allocation of its exact size:
// io.ReadAll grew a fresh slice from 512 bytes, about three times an
// order listing's size in copies per call.
func readUnannounced(r io.Reader) ([]byte, error) {
	buf := readBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledRead {
			buf.Reset()
			readBuffers.Put(buf)
		}
	}()
	_, err := buf.ReadFrom(io.LimitReader(r, maxBody))
	return bytes.Clone(buf.Bytes()), err
}

// readBuffers are readUnannounced's buffers; one that grew past
// maxPooledRead (a rare large answer) is left to the collector.
var readBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledRead = 256 << 10

// readBody is an answer already read into memory, so decoding needs no
// second copy.
type readBody struct {
	*bytes.Reader
	raw []byte
}

func (b *readBody) Close() error { return nil }

// unread returns what has not been read yet, without copying it.
func (b *readBody) unread() []byte { return b.raw[len(b.raw)-b.Len():] }

// decode reads a checked 2xx answer into v.
func (s *Sender) decode(req *http.Request, resp *http.Response, v any) error {
	if v == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if w, ok := v.(io.Writer); ok {
		_, err := io.Copy(w, resp.Body)
		return err
	}
	var raw []byte
	if b, ok := resp.Body.(*readBody); ok {
		raw = b.unread() // already in memory: decode it in place
	} else {
		raw, _ = io.ReadAll(resp.Body)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if err := Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: decode %s %s response: %w", s.up.Name, req.Method, req.URL.Path, err)
	}
	return nil
}

// idempotent reports whether repeating a request cannot repeat its effect.
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

// FullJitter is the wait before retry n (from 1): a uniformly random time in
// [0, min(max, base*2^(n-1))], so that many callers failing together do not
// retry together.
func FullJitter(base, max time.Duration, n int) time.Duration {
	ceiling := max
	if n-1 < 62 && base <= max>>(n-1) {
		ceiling = base << (n - 1)
	}
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}

// RetryAfter reads a Retry-After header: delay seconds or an HTTP date
// (a date in the past means now). ok is false when there is none or it
// cannot be read.
func RetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 || secs > int64(24*time.Hour/time.Second) {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(at.Sub(now), 0), true
}

// fits reports whether waiting d still leaves the call time to try again.
func fits(ctx context.Context, d time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return !ok || time.Until(deadline) > d
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// scrub drops the request URL from *url.Error: harmless today, but a query
// string could one day carry something that must not reach a log.
func scrub(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
