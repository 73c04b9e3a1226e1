// Package payments is a typed client of the payments upstream interface
// (customers, stored card methods, orders, webhooks, events, onboarding and
// pending actions), in the shape of go-github: one service per resource,
// NewRequest then Do, and typed errors from one CheckResponse.
//
// Each call picks the key kind that the spec's Key column names for its
// route: public-key routes use the merchant's public key, private-key routes
// the private key, webhook and event routes the access token. Routes that
// accept "private or customer" use the customer key carried by the context
// (see WithCustomerKey) and the private key otherwise.
package payments

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
	"strings"
	"time"

	"github.com/sony/gobreaker/v2"
)

// Keys are the merchant's credentials. They are secrets: never log them.
type Keys struct {
	Public      string
	Private     string
	AccessToken string
}

// KeyKind names which credential a request carries.
type KeyKind int

// The key kinds of the spec's Authentication section.
const (
	KeyPublic KeyKind = iota + 1
	KeyPrivate
	KeyCustomer
	KeyAccessToken
)

func (k KeyKind) String() string {
	switch k {
	case KeyPublic:
		return "public"
	case KeyPrivate:
		return "private"
	case KeyCustomer:
		return "customer"
	case KeyAccessToken:
		return "access token"
	}
	return "unknown"
}

type customerKeyCtx struct{}

// WithCustomerKey returns a context whose calls act as one customer: routes
// that accept a customer key use it, with the customer id `me`.
func WithCustomerKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, customerKeyCtx{}, key)
}

// CustomerKey reports the customer key carried by ctx, if any.
func CustomerKey(ctx context.Context) (string, bool) {
	k, ok := ctx.Value(customerKeyCtx{}).(string)
	return k, ok && k != ""
}

// Client talks to one payments upstream. It is safe for concurrent use.
type Client struct {
	baseURL   *url.URL
	http      *http.Client
	keys      Keys
	timeout   time.Duration
	userAgent string
	retries   int
	logger    *slog.Logger
	breaker   *gobreaker.CircuitBreaker[*http.Response]
	jwksURL   string
	signing   jwks

	Customers      *CustomersService
	Orders         *OrdersService
	Webhooks       *WebhooksService
	Events         *EventsService
	Individuals    *IndividualsService
	PendingActions *PendingActionsService
	OrderTokens    *OrderTokensService
}

type service struct{ client *Client }

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient replaces the tuned default HTTP client.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithTimeout bounds every call that has no earlier deadline (default 10 s).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// WithRetries sets how often an idempotent call is retried after a network
// error or a 502/503/504 (default 2).
func WithRetries(n int) Option { return func(c *Client) { c.retries = n } }

// WithJWKSURL sets where the upstream publishes the keys that sign order
// tokens (default: .well-known/jwks.json under the base URL).
func WithJWKSURL(u string) Option { return func(c *Client) { c.jwksURL = u } }

// WithLogger sets the logger for retries and breaker changes.
func WithLogger(l *slog.Logger) Option { return func(c *Client) { c.logger = l } }

// NewTransport returns an HTTP transport tuned for one busy upstream host:
// Go's default keeps only two idle connections per host, which forces new
// TCP (and TLS) handshakes under any concurrency.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 15 * time.Second,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
	}
}

// NewClient returns a client of the payments interface at baseURL, for
// example "https://payments.example/" or "http://127.0.0.1:9090/payments".
func NewClient(baseURL string, keys Keys, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("payments: invalid base URL %q", baseURL)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	c := &Client{
		baseURL:   u,
		http:      &http.Client{Transport: NewTransport()},
		keys:      keys,
		timeout:   10 * time.Second,
		userAgent: "fingraph",
		retries:   2,
		logger:    slog.New(slog.DiscardHandler),
	}
	c.jwksURL = u.JoinPath(".well-known", "jwks.json").String()
	for _, o := range opts {
		o(c)
	}
	c.breaker = gobreaker.NewCircuitBreaker[*http.Response](gobreaker.Settings{
		Name:    "payments",
		Timeout: 10 * time.Second,
		ReadyToTrip: func(counts gobreaker.Counts) bool {
			return counts.ConsecutiveFailures >= 5
		},
		// A caller that gives up says nothing about the upstream's health.
		IsSuccessful: func(err error) bool { return err == nil || errors.Is(err, context.Canceled) },
		OnStateChange: func(name string, from, to gobreaker.State) {
			c.logger.Warn("circuit breaker", "upstream", name, "from", from.String(), "to", to.String())
		},
	})
	s := service{client: c}
	c.Customers = (*CustomersService)(&s)
	c.Orders = (*OrdersService)(&s)
	c.Webhooks = (*WebhooksService)(&s)
	c.Events = (*EventsService)(&s)
	c.Individuals = (*IndividualsService)(&s)
	c.PendingActions = (*PendingActionsService)(&s)
	c.OrderTokens = (*OrderTokensService)(&s)
	return c, nil
}

// BaseURL returns the upstream address the client talks to.
func (c *Client) BaseURL() string { return c.baseURL.String() }

// credential picks the key for kind; customerOr means the route also accepts
// a customer key, which wins when the context carries one.
func (c *Client) credential(ctx context.Context, kind KeyKind) (string, error) {
	var key string
	switch kind {
	case KeyPublic:
		key = c.keys.Public
	case KeyPrivate:
		key = c.keys.Private
	case KeyAccessToken:
		key = c.keys.AccessToken
	case KeyCustomer:
		key, _ = CustomerKey(ctx)
	}
	if key == "" {
		return "", fmt.Errorf("payments: no %s key configured", kind)
	}
	return key, nil
}

// privateOrCustomer is the key kind of "private or customer" routes.
func privateOrCustomer(ctx context.Context) KeyKind {
	if _, ok := CustomerKey(ctx); ok {
		return KeyCustomer
	}
	return KeyPrivate
}

// NewRequest builds a request for path (relative to the base URL) carrying
// the key of the given kind and body encoded as JSON.
func (c *Client) NewRequest(ctx context.Context, kind KeyKind, method, path string, body any) (*http.Request, error) {
	u, err := c.baseURL.Parse(strings.TrimPrefix(path, "/"))
	if err != nil {
		return nil, fmt.Errorf("payments: bad path %q: %w", path, err)
	}
	var buf io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("payments: encode request: %w", err)
		}
		buf = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), buf)
	if err != nil {
		return nil, err
	}
	key, err := c.credential(ctx, kind)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// Do sends req and decodes a 2xx JSON body into v (when v is not nil).
// Non-2xx answers become *ErrorResponse; network failures *UnavailableError.
// Idempotent requests are retried with jitter; every request passes the
// circuit breaker.
func (c *Client) Do(req *http.Request, v any) (*http.Response, error) {
	ctx := req.Context()
	if _, ok := ctx.Deadline(); !ok && c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
		req = req.WithContext(ctx)
	}
	idempotent := req.Method == http.MethodGet || req.Method == http.MethodHead || req.Method == http.MethodDelete
	var body []byte
	if req.GetBody != nil && req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		body = b
	}
	attempts := 1
	if idempotent {
		attempts += c.retries
	}
	var (
		resp *http.Response
		err  error
	)
	for i := 0; i < attempts; i++ {
		if i > 0 {
			backoff := time.Duration(50*(1<<(i-1))) * time.Millisecond
			backoff += rand.N(backoff)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return nil, &UnavailableError{Op: req.Method + " " + req.URL.Path, Err: ctx.Err()}
			}
			c.logger.Debug("payments retry", "method", req.Method, "path", req.URL.Path, "attempt", i+1)
		}
		if body != nil {
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		resp, err = c.breaker.Execute(func() (*http.Response, error) {
			r, err := c.http.Do(req)
			if err != nil {
				return nil, err
			}
			if r.StatusCode >= 500 {
				// Count server failures against the breaker, but keep the
				// response so its error body can still be read.
				return r, errServer
			}
			return r, nil
		})
		if errors.Is(err, errServer) {
			err = nil
		}
		if err != nil {
			if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
				return nil, &UnavailableError{Op: req.Method + " " + req.URL.Path, Err: errors.New("circuit open")}
			}
			if ctx.Err() != nil {
				return nil, &UnavailableError{Op: req.Method + " " + req.URL.Path, Err: ctx.Err()}
			}
			continue
		}
		if idempotent && i < attempts-1 && retryableStatus(resp.StatusCode) {
			drain(resp)
			continue
		}
		break
	}
	if err != nil {
		return nil, &UnavailableError{Op: req.Method + " " + req.URL.Path, Err: scrub(err)}
	}
	defer drain(resp)
	if err := CheckResponse(resp); err != nil {
		return resp, err
	}
	if v != nil && resp.StatusCode != http.StatusNoContent {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil && !errors.Is(err, io.EOF) {
			return resp, &UnavailableError{Op: req.Method + " " + req.URL.Path, Err: fmt.Errorf("decode response: %w", err)}
		}
	}
	return resp, nil
}

// call sends one request and decodes its answer into a new T: the body of
// most service methods.
func call[T any](ctx context.Context, c *Client, kind KeyKind, method, path string, body any) (*T, error) {
	req, err := c.NewRequest(ctx, kind, method, path, body)
	if err != nil {
		return nil, err
	}
	out := new(T)
	if _, err := c.Do(req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// callList is call for routes that answer a JSON array.
func callList[T any](ctx context.Context, c *Client, kind KeyKind, method, path string, body any) ([]T, error) {
	out, err := call[[]T](ctx, c, kind, method, path, body)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

var errServer = errors.New("upstream server error")

func retryableStatus(code int) bool {
	return code == http.StatusBadGateway || code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	_ = resp.Body.Close()
}

// scrub drops the request URL from *url.Error: it is harmless today, but a
// query string could one day carry something that must not reach a log.
func scrub(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
