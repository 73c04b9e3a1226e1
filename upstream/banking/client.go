// Package banking is the typed client of the banking upstream: sign-in with
// SMS two-factor, persons, corporations, API keys, feedback and lookups.
//
// The shape follows go-github: one Client, one service per upstream resource
// (client.Auth, client.Persons, client.Corporations, client.APIKeys,
// client.Feedback, client.Lookup), each in its own file. A route is a
// declaration on call (protected routes) or callPublic (routes without a
// token): method, path, input and output type; every non-2xx answer becomes
// a typed *ErrorResponse through one CheckResponse.
//
// # Credentials
//
// One Client serves every gateway session, so it holds no credentials of its
// own. The upstream access token travels per call, in the context, behind the
// TokenSource interface:
//
//	store := banking.NewTokenStore(sessionToken)          // or the session itself
//	ctx = banking.WithTokenSource(ctx, store)
//	me, err := client.Persons.Me(ctx)
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
// can start a session with an empty TokenStore. A TokenSource that also
// implements TokenRefuser learns when the upstream refuses its token outright
// (401 naming no field), so that a session that cannot work any more ends
// where that answer is seen. TokenStore is safe for
// concurrent use; concurrent calls of one session each write back the token of
// their own response, and the last one wins (every refreshed token is valid).
//
// A TokenSource that also implements CallFollower (the gateway's session)
// follows each protected call instead, from its start to its outcome,
// through the shared sender's hooks: the call's TokenCall names the token
// of each attempt, is handed each refreshed token once (SetToken is not
// called for them), and, when the upstream refuses the token sent outright,
// may offer another that the sender resends the call with.
//
// Tokens, passwords, API keys and two-factor codes never appear in error
// strings: the Secret type prints as [REDACTED], and CheckResponse scrubs the
// secrets a request carried from any upstream message it echoes.
//
// # Resilience
//
// Requests go out through upstream/roundtrip, the send path this client
// shares with the payments client: a deadline on every call, retries of
// idempotent calls only (GET, HEAD, DELETE) with full-jitter backoff that
// honours Retry-After, and a circuit breaker per route group (the first
// path segment after the version: cards, persons, corporations, ...;
// consecutive 5xx answers and network failures open it; 4xx answers and a
// caller's cancellation do not count). Failures where the upstream could not answer
// are *roundtrip.UnavailableError; an open breaker's wraps
// roundtrip.ErrCircuitOpen. NewClient takes roundtrip's options and
// WithVersion.
//
// Outbound headers come from an allowlist: the client sets Accept,
// Content-Type, User-Agent and x-access-token itself and forwards only
// X-Request-Id, Traceparent, Tracestate and Accept-Language from a request
// given to Do. Any other header on it is dropped, so an incoming request's
// cookies or authorization can never leak upstream. The trace context of
// the gateway's own requests reaches the upstream through the transport the
// gateway gives the client (its tracing), not through these headers.
package banking

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/fingraph/fingraph/upstream/roundtrip"
)

const (
	// DefaultVersion is the API version the client speaks; the spec's minimum.
	DefaultVersion = "v2"

	// HeaderAccessToken carries the JWT on requests and its refresh on responses.
	HeaderAccessToken = "x-access-token"
)

// forwardable lists the caller headers that may travel upstream; everything
// else a frontend sends stays in the gateway.
var forwardable = []string{"X-Request-Id", "Traceparent", "Tracestate", "Accept-Language"}

// clientSet lists the headers the client itself sets on requests it builds.
var clientSet = []string{"Accept", "Content-Type", "User-Agent"}

// Client talks to one banking upstream. It is safe for concurrent use and is
// meant to be shared by all sessions; credentials travel per call in the
// context (see TokenSource).
type Client struct {
	// SpecOnly says the upstream serves only what the spec shows: none of
	// the additions Offers names. A listing asking for an offset
	// (meta[offset]) fails with ErrOffsetNotShown before any call.
	SpecOnly bool

	baseURL string
	version string
	send    *roundtrip.Sender

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

var versionRE = regexp.MustCompile(`^v([0-9]+)$`)

// WithVersion selects the API version path segment ("v2" or "v3"). Versions
// below v2 are refused here because the upstream refuses them (21001/21002).
// From v3 on, two-factor answers are sent in the challenge.two_fa shape.
func WithVersion(v string) roundtrip.Option {
	return roundtrip.ClientOption(func(c *Client) error {
		m := versionRE.FindStringSubmatch(v)
		if m == nil {
			return fmt.Errorf("version %q is not of the form vN", v)
		}
		if n, _ := strconv.Atoi(m[1]); n < 2 {
			return fmt.Errorf("version %q is below the supported minimum v2", v)
		}
		c.version = v
		return nil
	})
}

// NewClient returns a client of the banking upstream at baseURL, for example
// http://127.0.0.1:9090/banking; requests go to {baseURL}/{version}/....
// opts are roundtrip's shared options (timeout, retries, breaker, HTTP
// client, logger, user agent) and WithVersion.
func NewClient(baseURL string, opts ...roundtrip.Option) (*Client, error) {
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
	c := &Client{baseURL: strings.TrimRight(u.String(), "/"), version: DefaultVersion}
	c.send, err = roundtrip.New(roundtrip.Upstream{Name: upstreamName, BasePath: u.Path, Check: CheckResponse, Prepare: c.prepare, Answered: c.answered, Begin: c.begin, Refused: c.refused}, c, opts...)
	if err != nil {
		return nil, err
	}
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

// Version reports the API version the client speaks, such as "v2".
func (c *Client) Version() string { return c.version }

// versionNumber is the numeric part of the version; WithVersion validated it.
func (c *Client) versionNumber() int {
	n, _ := strconv.Atoi(strings.TrimPrefix(c.version, "v"))
	return n
}

// BreakerState reports the circuit breakers' worst state ("closed", "half-open",
// "open") for readiness probes and metrics.
func (c *Client) BreakerState() string { return c.send.BreakerState() }

type ctxKey int

const (
	keyTokenSource ctxKey = iota
	keyPublic
	keySecrets
	keyCall
)

// NewRequest builds a request for a protected route. path is relative to
// {baseURL}/{version} ("persons/me", optionally with a query); body, when
// not nil, is encoded as JSON. Every route is versioned: the spec's
// Versioning rule 1 puts the version in the path of all endpoints.
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
	prefix := c.baseURL + "/" + c.version + "/"
	rel, err := url.Parse(strings.TrimLeft(path, "/"))
	if err == nil && roundtrip.DotSegment(rel.Path) {
		return nil, fmt.Errorf("banking: %w", roundtrip.ErrInvalidID)
	}
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
	req.Header.Set("User-Agent", c.send.UserAgent())
	return req, nil
}

// Do sends req through the shared send path and decodes a 2xx JSON body
// into v (when v is not nil; an io.Writer receives the raw body). Each
// attempt carries the access token of the context's TokenSource and only
// allowlisted headers; every answer's refreshed token is written back.
// Non-2xx answers are *ErrorResponse; a refused token is reported to a
// TokenSource that is a TokenRefuser.
func (c *Client) Do(req *http.Request, v any) error {
	err := c.send.Do(req, v)
	if e, ok := asErrorResponse(err); ok && e.StatusCode == http.StatusUnauthorized && e.First().Field == "" {
		ctx := req.Context()
		if r, ok := TokenSourceFrom(ctx).(TokenRefuser); ok && ctx.Value(keyPublic) == nil {
			r.TokenRefused(ctx)
		}
	}
	return err
}

// begin starts a protected call of a TokenSource that follows its calls
// (CallFollower): the call's TokenCall travels in its context for the
// other hooks.
func (c *Client) begin(ctx context.Context) (context.Context, func()) {
	f, ok := TokenSourceFrom(ctx).(CallFollower)
	if !ok || ctx.Value(keyPublic) != nil {
		return ctx, nil
	}
	call := f.FollowCall(ctx)
	if call == nil {
		return ctx, nil
	}
	return context.WithValue(ctx, keyCall, call), call.End
}

// followed returns the TokenCall of a call begin started, or nil.
func followed(ctx context.Context) TokenCall {
	call, _ := ctx.Value(keyCall).(TokenCall)
	return call
}

// prepare finishes one attempt: headers from the allowlists only, and the
// TokenSource's current token on protected routes (asked on every attempt,
// so that a retry sends the freshest one, and a resend the other token its
// TokenCall offered).
func (c *Client) prepare(req *http.Request) error {
	ctx := req.Context()
	req.Header = outboundHeaders(req.Header)
	ts := TokenSourceFrom(ctx)
	if ts == nil || ctx.Value(keyPublic) != nil {
		return nil
	}
	var tok string
	if call := followed(ctx); call != nil {
		tok = call.Token()
	} else {
		var err error
		if tok, err = ts.Token(ctx); err != nil {
			return &tokenSourceError{err: err}
		}
	}
	if tok != "" {
		req.Header.Set(HeaderAccessToken, tok)
	}
	return nil
}

// answered writes the refreshed token of every answer back, once per
// upstream answer, before any status handling, and only when it changed:
// to the call's TokenCall when it is followed, else with SetToken. A failed
// write-back is logged and does not fail the call: the upstream has already
// acted.
func (c *Client) answered(req *http.Request, resp *http.Response) {
	ctx := req.Context()
	ts := TokenSourceFrom(ctx)
	fresh := resp.Header.Get(HeaderAccessToken)
	if ts == nil || fresh == "" || fresh == req.Header.Get(HeaderAccessToken) {
		return
	}
	if call := followed(ctx); call != nil {
		call.Refreshed(ctx, fresh)
		return
	}
	if err := ts.SetToken(ctx, fresh); err != nil {
		c.send.Logger().Warn("banking: token write-back failed", "method", req.Method, "path", req.URL.Path, "error", err.Error())
	}
}

// refused tells the shared sender when the upstream refused a followed
// call's token outright (a 401 carrying no refreshed token), and whether
// the call's TokenCall has another token to send it again with.
func (c *Client) refused(req *http.Request, resp *http.Response) (refused, again bool) {
	call := followed(req.Context())
	if call == nil || resp.StatusCode != http.StatusUnauthorized {
		return false, false
	}
	sent := req.Header.Get(HeaderAccessToken)
	if fresh := resp.Header.Get(HeaderAccessToken); fresh != "" && fresh != sent {
		return false, false
	}
	return true, call.Refused(req.Context(), sent)
}

// tokenSourceError keeps a failing TokenSource distinct from upstream
// trouble: it is neither retried nor reported as unavailability.
type tokenSourceError struct{ err error }

func (e *tokenSourceError) Error() string { return "banking: token source: " + e.err.Error() }
func (e *tokenSourceError) Unwrap() error { return e.err }

// outboundHeaders rebuilds the header set from the allowlists instead of
// trusting whatever a request carries. The values are shared with in, not
// copied: a slice capped at its length cannot be appended to in place, and
// Set replaces a slice instead of writing to it.
func outboundHeaders(in http.Header) http.Header {
	out := make(http.Header, len(clientSet)+len(forwardable)+1)
	for _, k := range clientSet {
		if v := in.Values(k); len(v) > 0 {
			out[k] = v[:len(v):len(v)]
		}
	}
	for _, k := range forwardable {
		if v := in.Values(k); len(v) > 0 {
			out[k] = v[:len(v):len(v)]
		}
	}
	return out
}

// pathEscape escapes one path segment such as an id.
func pathEscape(s string) string { return url.PathEscape(s) }

// call sends one request to a protected route and decodes the answer into a
// new T: the whole body of most service methods, so that a route is a
// declaration of method, path, input and output.
func call[T any](ctx context.Context, c *Client, method, path string, body any) (*T, error) {
	if c.SpecOnly && strings.Contains(path, offsetParam) {
		return nil, ErrOffsetNotShown
	}
	req, err := c.NewRequest(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	return send[T](c, req)
}

// offsetParam is meta[offset] as ListOptions encodes it into a path.
var offsetParam = url.Values{"meta[offset]": {""}}.Encode()[:len("meta%5Boffset%5D")]

// ErrOffsetNotShown is the answer of a listing with an offset when the
// upstream serves only what the spec shows (Client.SpecOnly).
var ErrOffsetNotShown = errors.New("banking: offset paging (meta[offset]) is not in the spec and this upstream does not serve it")

// callPublic is call for routes that take no access token (sign-in,
// recovery, feedback, sign-up).
func callPublic[T any](ctx context.Context, c *Client, method, path string, body any) (*T, error) {
	req, err := c.newPublicRequest(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	return send[T](c, req)
}

// send is the common tail of call and callPublic.
func send[T any](c *Client, req *http.Request) (*T, error) {
	out := new(T)
	if err := c.Do(req, out); err != nil {
		return nil, err
	}
	return out, nil
}
