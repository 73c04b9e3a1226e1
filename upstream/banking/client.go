// Package banking is the typed client of the banking upstream: sign-in with
// SMS two-factor, persons, corporations, API keys, feedback and lookups.
//
// The shape follows go-github: one Client, one service per upstream resource
// (client.Auth, client.Persons, client.Corporations, client.APIKeys,
// client.Feedback, client.Lookup), each in its own file; every method builds a
// request with NewRequest and sends it with Do, and every non-2xx answer
// becomes a typed *ErrorResponse through one CheckResponse.
//
// # Credentials
//
// One Client serves every gateway session, so it holds no credentials of its
// own. The upstream access token travels per call, in the context, behind the
// TokenSource interface:
//
//	store := banking.NewTokenStore(sessionToken)          // or the session itself
//	ctx = banking.WithTokenSource(ctx, store)
//	me, _, err := client.Persons.Me(ctx)
//
// Do asks the TokenSource for the token on every attempt (so a retry uses the
// freshest one) and sends it as x-access-token on protected routes. The
// upstream returns a refreshed token on every response; Do hands it back with
// SetToken on every response that carries one, success or error, before the
// status is checked, so a session never falls behind the upstream even when a
// call fails. SetToken is skipped when the token did not change, which spares
// a session store needless writes. A write-back failure is logged and does not
// fail the call: the upstream has already acted, and hiding its answer would
// be worse than keeping the previous token. The final sign-in response carries
// the token in its body; the Auth methods write that back as well, so a caller
// can start a session with an empty TokenStore. TokenStore is safe for
// concurrent use; concurrent calls of one session each write back the token of
// their own response, and the last one wins (every refreshed token is valid).
//
// Tokens, passwords, API keys and two-factor codes never appear in error
// strings: the Secret type prints as [REDACTED], and CheckResponse scrubs the
// secrets a request carried from any upstream message it echoes.
//
// # Resilience
//
// Every call has a deadline (WithTimeout, 10 s by default). GET, HEAD and
// DELETE are retried at most twice, with jittered exponential backoff, on
// network errors and on 502, 503 and 504; POST and PUT never are, because
// repeating them can repeat their effect. One circuit breaker (sony/gobreaker) guards the
// upstream: consecutive 5xx answers and network failures open it, 4xx answers
// do not count, and an open breaker fails fast with ErrCircuitOpen.
//
// Outbound headers come from an allowlist: the client sets Accept,
// Content-Type, User-Agent and x-access-token itself and forwards only
// X-Request-Id, Traceparent, Tracestate and Accept-Language from the headers a
// caller attaches with WithOutboundHeaders. Any other header on a request
// given to Do is dropped, so an incoming request's cookies or authorization
// can never leak upstream.
package banking

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sony/gobreaker/v2"
)

const (
	// DefaultTimeout bounds one call, retries included.
	DefaultTimeout = 10 * time.Second
	// DefaultVersion is the API version the client speaks; the spec's minimum.
	DefaultVersion = "v2"
	// DefaultUserAgent identifies the gateway to the upstream.
	DefaultUserAgent = "fingraph-banking-client/1"

	// HeaderAccessToken carries the JWT on requests and its refresh on responses.
	HeaderAccessToken = "x-access-token"

	maxRetries       = 2
	defaultRetryBase = 100 * time.Millisecond
	defaultTrip      = 5
	defaultOpenFor   = 30 * time.Second
	maxBodyBytes     = 16 << 20
)

// forwardable lists the caller headers that may travel upstream; everything
// else a frontend sends stays in the gateway.
var forwardable = []string{"X-Request-Id", "Traceparent", "Tracestate", "Accept-Language"}

// clientSet lists the headers the client itself sets on requests it builds.
var clientSet = []string{"Accept", "Content-Type", "User-Agent"}

var (
	// ErrUnavailable marks failures where the upstream could not answer:
	// network errors, timeouts and an open circuit. 5xx answers are
	// *ErrorResponse values; IsUnavailable covers both.
	ErrUnavailable = errors.New("banking: upstream unavailable")
	// ErrCircuitOpen is returned without calling the upstream while the
	// circuit breaker is open. It wraps ErrUnavailable.
	ErrCircuitOpen = fmt.Errorf("%w: circuit open", ErrUnavailable)

	// errServerStatus tells the breaker that a 5xx answer is a failure while
	// the response itself is still returned to Do.
	errServerStatus = errors.New("banking: server error status")
)

// Client talks to one banking upstream. It is safe for concurrent use and is
// meant to be shared by all sessions; credentials travel per call in the
// context (see TokenSource).
type Client struct {
	baseURL   string
	version   string
	http      *http.Client
	timeout   time.Duration
	userAgent string
	logger    *slog.Logger
	retryBase time.Duration
	tripAfter uint32
	openFor   time.Duration
	breaker   *gobreaker.CircuitBreaker[*http.Response]

	// Auth signs principals in and handles password recovery.
	Auth *AuthService
	// Persons manages persons and the signed-in person (me).
	Persons *PersonsService
	// Corporations manages corporations and their settings.
	Corporations *CorporationsService
	// APIKeys manages corporation API keys (staff only).
	APIKeys *APIKeysService
	// Cards issues and reads virtual cards and simulates card transactions.
	Cards *CardsService
	// KYC manages a corporation's KYC documents.
	KYC *KYCService
	// Feedback sends captcha-protected user feedback.
	Feedback *FeedbackService
	// Lookup answers reference questions such as SEPA reachability.
	Lookup *LookupService
	// Wallets reads and creates corporation wallets.
	Wallets *WalletsService
	// Requisites manages wallet requisites.
	Requisites *RequisitesService
	// Transactions creates conversions.
	Transactions *TransactionsService
	// Invoices reads corporation invoices.
	Invoices *InvoicesService
	// Limits reads and changes corporation limits.
	Limits *LimitsService
	// Reports requests statements and fee reports.
	Reports *ReportsService
}

type service struct{ client *Client }

// Option configures a Client in NewClient.
type Option func(*Client) error

// WithHTTPClient replaces the default tuned HTTP client, for example to add
// instrumentation. Its Timeout should be zero or larger than WithTimeout,
// which already bounds every call.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("banking: nil http client")
		}
		c.http = hc
		return nil
	}
}

// WithTimeout bounds each call, retries and backoff included.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) error {
		if d <= 0 {
			return fmt.Errorf("banking: timeout must be positive, got %s", d)
		}
		c.timeout = d
		return nil
	}
}

// WithUserAgent sets the User-Agent header of every request.
func WithUserAgent(ua string) Option {
	return func(c *Client) error {
		c.userAgent = ua
		return nil
	}
}

var versionRE = regexp.MustCompile(`^v([0-9]+)$`)

// WithVersion selects the API version path segment ("v2" or "v3"). Versions
// below v2 are refused here because the upstream refuses them (21001/21002).
// From v3 on, two-factor answers are sent in the challenge.two_fa shape.
func WithVersion(v string) Option {
	return func(c *Client) error {
		m := versionRE.FindStringSubmatch(v)
		if m == nil {
			return fmt.Errorf("banking: version %q is not of the form vN", v)
		}
		if n, _ := strconv.Atoi(m[1]); n < 2 {
			return fmt.Errorf("banking: version %q is below the supported minimum v2", v)
		}
		c.version = v
		return nil
	}
}

// WithLogger sets the logger for retries, breaker changes and write-back
// failures. It never receives tokens or request bodies.
func WithLogger(l *slog.Logger) Option {
	return func(c *Client) error {
		if l == nil {
			return errors.New("banking: nil logger")
		}
		c.logger = l
		return nil
	}
}

// WithRetryBackoff sets the base of the jittered exponential backoff between
// retries of idempotent calls; tests shrink it.
func WithRetryBackoff(base time.Duration) Option {
	return func(c *Client) error {
		if base < 0 {
			return errors.New("banking: negative retry backoff")
		}
		c.retryBase = base
		return nil
	}
}

// WithBreaker tunes the circuit breaker: it opens after tripAfter consecutive
// failures (5xx or network) and stays open for openFor before letting one
// probe through.
func WithBreaker(tripAfter uint32, openFor time.Duration) Option {
	return func(c *Client) error {
		if tripAfter == 0 || openFor <= 0 {
			return errors.New("banking: breaker needs a positive threshold and open period")
		}
		c.tripAfter, c.openFor = tripAfter, openFor
		return nil
	}
}

// NewClient returns a client of the banking upstream at baseURL, for example
// http://127.0.0.1:9090/banking; requests go to {baseURL}/{version}/....
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("banking: base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("banking: base URL %q needs an http(s) scheme and a host", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("banking: base URL %q must not carry a query or fragment", baseURL)
	}
	c := &Client{
		baseURL:   strings.TrimRight(u.String(), "/"),
		version:   DefaultVersion,
		timeout:   DefaultTimeout,
		userAgent: DefaultUserAgent,
		logger:    slog.New(slog.DiscardHandler),
		retryBase: defaultRetryBase,
		tripAfter: defaultTrip,
		openFor:   defaultOpenFor,
	}
	for _, opt := range opts {
		if err := opt(c); err != nil {
			return nil, err
		}
	}
	if c.http == nil {
		c.http = &http.Client{Transport: NewTransport()}
	}
	c.breaker = gobreaker.NewCircuitBreaker[*http.Response](gobreaker.Settings{
		Name:    "banking",
		Timeout: c.openFor,
		ReadyToTrip: func(counts gobreaker.Counts) bool {
			return counts.ConsecutiveFailures >= c.tripAfter
		},
		// A caller giving up is not the upstream failing.
		IsSuccessful: func(err error) bool { return err == nil || errors.Is(err, context.Canceled) },
		OnStateChange: func(name string, from, to gobreaker.State) {
			c.logger.Warn("banking: circuit breaker state change", "from", from.String(), "to", to.String())
		},
	})
	s := service{client: c}
	c.Auth = (*AuthService)(&s)
	c.Persons = (*PersonsService)(&s)
	c.Corporations = (*CorporationsService)(&s)
	c.APIKeys = (*APIKeysService)(&s)
	c.Cards = (*CardsService)(&s)
	c.KYC = (*KYCService)(&s)
	c.Feedback = (*FeedbackService)(&s)
	c.Lookup = (*LookupService)(&s)
	c.Wallets = (*WalletsService)(&s)
	c.Requisites = (*RequisitesService)(&s)
	c.Transactions = (*TransactionsService)(&s)
	c.Invoices = (*InvoicesService)(&s)
	c.Limits = (*LimitsService)(&s)
	c.Reports = (*ReportsService)(&s)
	return c, nil
}

// NewTransport returns the transport the client uses by default, for callers
// that wrap it (WithHTTPClient). It raises Go's default of two idle connections per host: the
// gateway fans many concurrent calls out to one upstream host.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   5 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 15 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Version reports the API version the client speaks, such as "v2".
func (c *Client) Version() string { return c.version }

// versionNumber is the numeric part of the version; WithVersion validated it.
func (c *Client) versionNumber() int {
	n, _ := strconv.Atoi(strings.TrimPrefix(c.version, "v"))
	return n
}

// BreakerState reports the circuit breaker's state ("closed", "half-open",
// "open") for readiness probes and metrics.
func (c *Client) BreakerState() string { return c.breaker.State().String() }

// Response wraps the upstream's HTTP response. Its body has been read and
// closed by Do.
type Response struct {
	*http.Response
	// Token is the refreshed access token the upstream sent, if any; Do has
	// already written it back to the context's TokenSource.
	Token Secret
}

type ctxKey int

const (
	keyTokenSource ctxKey = iota
	keyPublic
	keySecrets
	keyOutbound
)

// WithOutboundHeaders attaches headers of the incoming request that may be
// forwarded upstream. Only the allowlisted ones (X-Request-Id, Traceparent,
// Tracestate, Accept-Language) are ever sent; h is cloned, so later changes by
// the caller do not race with the client.
func WithOutboundHeaders(ctx context.Context, h http.Header) context.Context {
	return context.WithValue(ctx, keyOutbound, h.Clone())
}

// NewRequest builds a request for a protected route. path is relative to
// {baseURL}/{version} ("persons/me", optionally with a query); "../cards"
// is relative to {baseURL} (the unversioned card routes). body, when not
// nil, is encoded as JSON.
func (c *Client) NewRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	return c.newRequest(ctx, method, path, body, false)
}

// newPublicRequest builds a request for a route that takes no access token
// (sign-in, password recovery, feedback, corporation sign-up). The response's
// refreshed token is still written back.
func (c *Client) newPublicRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	return c.newRequest(ctx, method, path, body, true)
}

func (c *Client) newRequest(ctx context.Context, method, path string, body any, public bool) (*http.Request, error) {
	if ctx == nil {
		return nil, errors.New("banking: nil context")
	}
	// "../" climbs out of the version, as a relative path would: the spec
	// shows the card routes without a version prefix.
	prefix := c.baseURL + "/" + c.version + "/"
	if p, ok := strings.CutPrefix(path, unversioned); ok {
		prefix, path = c.baseURL+"/", p
	}
	rel, err := url.Parse(strings.TrimLeft(path, "/"))
	if err != nil || rel.IsAbs() || rel.Host != "" {
		return nil, fmt.Errorf("banking: bad path %q", path)
	}
	full := prefix + rel.EscapedPath()
	if rel.RawQuery != "" {
		full += "?" + rel.RawQuery
	}
	var rd io.Reader
	var secrets []string
	if body != nil {
		buf, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("banking: encode %s %s body: %w", method, rel.Path, err)
		}
		secrets = collectSecrets(buf)
		rd = bytes.NewReader(buf)
	}
	if public {
		ctx = context.WithValue(ctx, keyPublic, true)
	}
	if len(secrets) > 0 {
		ctx = context.WithValue(ctx, keySecrets, secrets)
	}
	req, err := http.NewRequestWithContext(ctx, method, full, rd)
	if err != nil {
		return nil, fmt.Errorf("banking: build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	return req, nil
}

// Do sends req and decodes a 2xx JSON body into v (when v is not nil; an
// io.Writer receives the raw body). It injects the access token from the
// context's TokenSource, writes the refreshed token back on every response,
// retries idempotent calls, and goes through the circuit breaker. Non-2xx
// answers return the Response and an *ErrorResponse.
func (c *Client) Do(req *http.Request, v any) (*Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), c.timeout)
	defer cancel()

	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("banking: read request body: %w", err)
		}
		body = b
	}

	idempotent := req.Method == http.MethodGet || req.Method == http.MethodDelete || req.Method == http.MethodHead
	attempts := 1
	if idempotent {
		attempts += maxRetries
	}
	var (
		resp *http.Response
		err  error
	)
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 {
			if werr := c.sleep(ctx, attempt); werr != nil {
				break // keep the last attempt's outcome
			}
			c.logger.Debug("banking: retrying", "method", req.Method, "path", req.URL.Path, "attempt", attempt)
		}
		resp, err = c.attempt(ctx, req, body)
		if !idempotent || !retryable(resp, err) {
			break
		}
	}
	if err != nil && !errors.Is(err, errServerStatus) {
		return nil, c.wrapTransportError(req, err)
	}

	r := &Response{Response: resp, Token: Secret(resp.Header.Get(HeaderAccessToken))}
	if cerr := CheckResponse(resp); cerr != nil {
		return r, cerr
	}
	if v == nil || resp.StatusCode == http.StatusNoContent {
		return r, nil
	}
	if w, ok := v.(io.Writer); ok {
		_, err := io.Copy(w, resp.Body)
		return r, err
	}
	raw, _ := io.ReadAll(resp.Body)
	if len(bytes.TrimSpace(raw)) == 0 {
		return r, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return r, fmt.Errorf("banking: decode %s %s response: %w", req.Method, req.URL.Path, err)
	}
	return r, nil
}

// attempt performs one round trip through the breaker. The response body is
// fully read (so body read failures count as network failures) and replaced
// by an in-memory reader. The refreshed token is written back here, once per
// upstream answer, before any status handling.
func (c *Client) attempt(ctx context.Context, orig *http.Request, body []byte) (*http.Response, error) {
	req := orig.Clone(ctx)
	req.Header = c.outboundHeaders(ctx, orig.Header)
	if body != nil {
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req.ContentLength = int64(len(body))
	}
	ts := TokenSourceFrom(ctx)
	var sent string
	if ts != nil && ctx.Value(keyPublic) == nil {
		tok, err := ts.Token(ctx)
		if err != nil {
			return nil, &tokenSourceError{err: err}
		}
		if tok != "" {
			req.Header.Set(HeaderAccessToken, tok)
			sent = tok
		}
	}
	resp, err := c.breaker.Execute(func() (*http.Response, error) {
		resp, err := c.http.Do(req)
		if err != nil {
			return nil, err
		}
		raw, rerr := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		if rerr != nil {
			return resp, rerr
		}
		if resp.StatusCode >= 500 {
			return resp, errServerStatus
		}
		return resp, nil
	})
	if resp != nil && ts != nil {
		if fresh := resp.Header.Get(HeaderAccessToken); fresh != "" && fresh != sent {
			if serr := ts.SetToken(ctx, fresh); serr != nil {
				c.logger.Warn("banking: token write-back failed", "method", req.Method, "path", req.URL.Path, "error", serr.Error())
			}
		}
	}
	if err != nil {
		if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
			return nil, ErrCircuitOpen
		}
		if errors.Is(err, errServerStatus) {
			return resp, err
		}
		return nil, err
	}
	return resp, nil
}

// tokenSourceError keeps a failing TokenSource distinct from upstream
// trouble: it is neither retried nor reported as unavailability.
type tokenSourceError struct{ err error }

func (e *tokenSourceError) Error() string { return "banking: token source: " + e.err.Error() }
func (e *tokenSourceError) Unwrap() error { return e.err }

// outboundHeaders rebuilds the header set from the allowlists instead of
// trusting whatever a request carries.
func (c *Client) outboundHeaders(ctx context.Context, in http.Header) http.Header {
	out := make(http.Header, len(clientSet)+len(forwardable)+1)
	for _, k := range clientSet {
		if v := in.Values(k); len(v) > 0 {
			out[k] = append([]string(nil), v...)
		}
	}
	fromCtx, _ := ctx.Value(keyOutbound).(http.Header)
	for _, k := range forwardable {
		if v := in.Values(k); len(v) > 0 {
			out[k] = append([]string(nil), v...)
		} else if v := fromCtx.Values(k); len(v) > 0 {
			out[k] = append([]string(nil), v...)
		}
	}
	return out
}

// retryable reports whether an idempotent call should be tried again.
func retryable(resp *http.Response, err error) bool {
	if err != nil {
		var tse *tokenSourceError
		switch {
		case errors.Is(err, ErrCircuitOpen), errors.As(err, &tse),
			errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return false
		case errors.Is(err, errServerStatus):
			// fall through to the status check
		default:
			return true // network error
		}
	}
	if resp == nil {
		return false
	}
	switch resp.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// sleep waits a jittered exponential backoff: base*2^(n-1), scaled by a
// random factor in [0.5, 1) so that many sessions do not retry in lockstep.
func (c *Client) sleep(ctx context.Context, n int) error {
	d := c.retryBase << (n - 1)
	d = d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// wrapTransportError names the call and classifies the failure; url.Error
// strings carry only the URL, which holds no secrets on this interface.
func (c *Client) wrapTransportError(req *http.Request, err error) error {
	var tse *tokenSourceError
	switch {
	case errors.As(err, &tse):
		return err
	case errors.Is(err, ErrCircuitOpen):
		return fmt.Errorf("banking: %s %s: %w", req.Method, req.URL.Path, err)
	case errors.Is(err, context.Canceled) && req.Context().Err() != nil:
		return fmt.Errorf("banking: %s %s: %w", req.Method, req.URL.Path, err)
	default:
		return fmt.Errorf("banking: %s %s: %w: %w", req.Method, req.URL.Path, ErrUnavailable, err)
	}
}

// unversioned starts a path relative to the base URL rather than to the
// version (see NewRequest).
const unversioned = "../"

// pathEscape escapes one path segment such as an id.
func pathEscape(s string) string { return url.PathEscape(s) }

// call sends one request to a protected route and decodes the answer into a
// new T: the whole body of most service methods, so that a route is a
// declaration of method, path, input and output.
func call[T any](ctx context.Context, c *Client, method, path string, body any) (*T, error) {
	req, err := c.NewRequest(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	out := new(T)
	if _, err := c.Do(req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// callPublic is call for routes that take no access token (sign-in,
// recovery, feedback, sign-up).
func callPublic[T any](ctx context.Context, c *Client, method, path string, body any) (*T, error) {
	req, err := c.newPublicRequest(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	out := new(T)
	if _, err := c.Do(req, out); err != nil {
		return nil, err
	}
	return out, nil
}
