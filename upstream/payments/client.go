// Package payments is a typed client of the payments upstream interface
// (customers, stored card methods, orders, webhooks, events, onboarding and
// pending actions), in the shape of go-github: one service per resource,
// each route a declaration on call, and typed errors from one CheckResponse.
// Requests go out through upstream/roundtrip, the send path it shares with
// the banking client (deadline, retries, breaker, UnavailableError).
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
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fingraph/fingraph/upstream/roundtrip"
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

// customerKey is a customer key in a context, with the holder to tell when
// the upstream refuses it.
type customerKey struct {
	key   string
	owner KeyOwner
}

// KeyOwner holds a customer key for its calls (a gateway session). The
// client tells it when the upstream refuses the key outright (401), where
// that answer is seen, so that a session that cannot work any more ends.
type KeyOwner interface {
	CustomerKeyRefused(ctx context.Context)
}

// WithCustomerKey returns a context whose calls act as one customer: routes
// that accept a customer key use it, with the customer id `me`. It replaces
// any customer key (and owner) ctx carried.
func WithCustomerKey(ctx context.Context, key string) context.Context {
	return WithOwnedCustomerKey(ctx, key, nil)
}

// WithOwnedCustomerKey is WithCustomerKey for a key that owner holds; owner
// learns when the upstream refuses it.
func WithOwnedCustomerKey(ctx context.Context, key string, owner KeyOwner) context.Context {
	return context.WithValue(ctx, customerKeyCtx{}, customerKey{key: key, owner: owner})
}

// CustomerKey reports the customer key carried by ctx, if any.
func CustomerKey(ctx context.Context) (string, bool) {
	k, ok := ctx.Value(customerKeyCtx{}).(customerKey)
	return k.key, ok && k.key != ""
}

// Client talks to one payments upstream. It is safe for concurrent use.
type Client struct {
	// SpecOnly says the upstream serves only what the spec shows: none of
	// the additions Offers names.
	SpecOnly bool

	baseURL *url.URL
	keys    Keys
	send    *roundtrip.Sender
	jwksURL string
	signing jwks
	// listHints holds, per element type, the length of the last list read
	// (see callList).
	listHints sync.Map // reflect.Type → *atomic.Int32

	Customers      *CustomersService
	Orders         *OrdersService
	Webhooks       *WebhooksService
	Events         *EventsService
	Individuals    *IndividualsService
	PendingActions *PendingActionsService
	OrderTokens    *OrderTokensService
}

type service struct{ client *Client }

// NewClient returns a client of the payments interface at baseURL, for
// example "https://payments.example/" or "http://127.0.0.1:9090/payments".
// opts are roundtrip's shared options (timeout, retries, breaker, HTTP
// client, logger, user agent).
func NewClient(baseURL string, keys Keys, opts ...roundtrip.Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("payments: invalid base URL %q", baseURL)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	c := &Client{baseURL: u, keys: keys}
	c.jwksURL = u.JoinPath(".well-known", "jwks.json").String()
	if c.send, err = roundtrip.New(roundtrip.Upstream{Name: upstreamName, BasePath: u.Path, Check: CheckResponse, Shared: true}, c, opts...); err != nil {
		return nil, err
	}
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
		return nil, fmt.Errorf("payments: bad path: %w", err)
	}
	if roundtrip.DotSegment(u.Path) {
		return nil, fmt.Errorf("payments: %w", roundtrip.ErrInvalidID)
	}
	var buf io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("payments: encode request: %w", err)
		}
		buf = bytes.NewReader(b)
	}
	key, err := c.credential(ctx, kind)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(context.WithValue(ctx, keyKindCtx{}, kind), method, u.String(), buf)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.send.UserAgent())
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// keyKindCtx carries the key kind a request was built with, so that a
// refusal can say whose credential was refused.
type keyKindCtx struct{}

// Do sends req through the shared path (deadline, retries of idempotent
// calls, circuit breaker) and decodes a 2xx JSON body into v (when v is not
// nil). Non-2xx answers become *ErrorResponse, which names the key kind the
// request carried; a refused customer key is reported to its KeyOwner.
// Network failures are *roundtrip.UnavailableError.
func (c *Client) Do(req *http.Request, v any) error {
	err := c.send.Do(req, v)
	if e, ok := AsError(err); ok {
		ctx := req.Context()
		e.KeyKind, _ = ctx.Value(keyKindCtx{}).(KeyKind)
		if e.StatusCode == http.StatusUnauthorized && e.KeyKind == KeyCustomer {
			if k, _ := ctx.Value(customerKeyCtx{}).(customerKey); k.owner != nil {
				k.owner.CustomerKeyRefused(ctx)
			}
		}
	}
	return err
}

// call sends one request and decodes its answer into a new T: the body of
// most service methods.
func call[T any](ctx context.Context, c *Client, kind KeyKind, method, path string, body any) (*T, error) {
	out := new(T)
	if err := send(ctx, c, kind, method, path, body, out); err != nil {
		return nil, err
	}
	return out, nil
}

// send sends one request and decodes its answer into out.
func send(ctx context.Context, c *Client, kind KeyKind, method, path string, body, out any) error {
	req, err := c.NewRequest(ctx, kind, method, path, body)
	if err != nil {
		return err
	}
	return c.Do(req, out)
}

// callList is call for routes that answer a JSON array. The slice is made
// with room for as many elements as the last list of T had (at most
// maxListHint): the decoder appends into the room it finds, where an empty
// slice grows by doubling, copying every element decoded so far each time.
func callList[T any](ctx context.Context, c *Client, kind KeyKind, method, path string, body any) ([]T, error) {
	hint := listHint[T](c)
	out := make([]T, 0, hint.Load())
	if err := send(ctx, c, kind, method, path, body, &out); err != nil {
		return nil, err
	}
	hint.Store(int32(min(len(out), maxListHint)))
	return out, nil
}

// maxListHint bounds the room callList makes before a list is read: a
// huge list once does not make every later one allocate as much.
const maxListHint = 128

// listHint is c's length of the last list of T read.
func listHint[T any](c *Client) *atomic.Int32 {
	t := reflect.TypeFor[T]()
	if h, ok := c.listHints.Load(t); ok {
		return h.(*atomic.Int32)
	}
	h, _ := c.listHints.LoadOrStore(t, new(atomic.Int32))
	return h.(*atomic.Int32)
}

// BreakerState reports the circuit breakers' worst state ("closed", "half-open",
// "open") for readiness probes.
func (c *Client) BreakerState() string { return c.send.BreakerState() }

// SharedAnswers counts the reads answered by another caller's call to the
// same route with the same key (roundtrip.ShareFrom), not by a call of
// their own.
func (c *Client) SharedAnswers() uint64 { return c.send.SharedAnswers() }

// EventsBreakerState reports the state of the breaker of the event routes
// alone, which webhook enrichment depends on: other routes failing does not
// open it.
func (c *Client) EventsBreakerState() string { return c.send.GroupBreakerState("events") }
