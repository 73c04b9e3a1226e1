package resolvers

// The harness runs GraphQL operations against the real executable schema
// and these resolvers, over in-memory fakes of the upstreams (fakes_*_test.go)
// instead of the sandbox, and without HTTP: no listener, no transport. What
// app wires around resolvers is wired the same way here: the directives
// (Policy), the per-operation read cache (loaders.PerOperation), gqlhttp's
// error presenter, and the session of the request, put into the context by
// session.Handler's own middleware over an in-memory session store.
//
//	h := newHarness(t)
//	h.payments.customers.add(payments.Customer{ID: "cus-2", Number: "C-2"})
//	resp := h.as(staff).exec(`{ customers { id } }`, nil)
//	resp.noErrors(t)
//	assert.Equal(t, 1, h.payments.customers.calls("List"))
//
// Errors are injected per fake service and method: h.banking.persons.
// failNext("List", bankingRejection(...)), or failAlways for an upstream
// that is down. Money movements run through the real idempotency protocol
// over an embedded JetStream, started only by a test that moves money.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"

	"github.com/fingraph/fingraph/downloads"
	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/gqlhttp"
	"github.com/fingraph/fingraph/graph"
	"github.com/fingraph/fingraph/idempotency"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/session"
)

// Who the harness's seeded principals are. The demo corporation is the
// merchant's: its API clients operate payments, as in sandbox mode.
const (
	demoCorp      = "corp-demo"
	otherCorp     = "corp-other"
	demoPerson    = "person-anna"
	demoStaff     = "staff-1"
	demoAPIKey    = "key-demo"
	demoIntro     = "intro-1"
	demoCustomer  = "cus-1"
	demoWalletEUR = "wallet-eur"
	demoWalletUSD = "wallet-usd"
)

// principal is who an operation runs as (harness.as).
type principal struct {
	kind          session.Kind
	id            string
	personID      string
	corporationID string
}

// The principals a test runs as; anonymous has no session at all.
var (
	anonymous = principal{}
	staff     = principal{kind: session.Staff, id: demoStaff}
	person    = principal{kind: session.Person, id: demoPerson, personID: demoPerson, corporationID: demoCorp}
	apiClient = principal{kind: session.APIClient, id: demoAPIKey, corporationID: demoCorp}
	// outsider is an API client of a corporation that is not the
	// merchant's: signed in to banking, no payments operator.
	outsider   = principal{kind: session.APIClient, id: "key-other", corporationID: otherCorp}
	introducer = principal{kind: session.Introducer, id: demoIntro}
	customer   = principal{kind: session.Customer, id: demoCustomer}
)

// harness is one test's resolvers over fakes; see the top of this file.
type harness struct {
	t        *testing.T
	payments *fakePayments
	banking  *fakeBanking
	events   *fakeEvents
	// r is the Resolver under test; change its fields before the first
	// exec (e.g. r.Now).
	r        *Resolver
	policy   *Policy
	gql      *executor.Executor
	store    *memSessions
	sessions *session.Handler
	// who the next exec runs as (as), and its session token.
	who   principal
	token string
	// logs holds what the resolvers and the error presenter logged.
	logs *lockedWriter
}

// newHarness seeds the fakes with the demo corporation (two wallets, one
// person), another corporation, and one payments customer; the principals
// above are its sessions.
func newHarness(t *testing.T) *harness {
	t.Helper()
	logs := &lockedWriter{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := &harness{t: t, payments: newFakePayments(), banking: newFakeBanking(), events: &fakeEvents{}, logs: logs}
	h.policy = NewPolicy([]string{string(session.Staff), string(session.APIClient)}, []string{demoCorp}, 1000)
	h.r = &Resolver{
		Payments:  h.payments.resolvers(),
		Banking:   h.banking.resolvers(),
		Policy:    h.policy,
		Attempts:  &lazyAttempts{t: t},
		Events:    h.events,
		Logger:    logger,
		Downloads: downloads.NewSigner([]byte("harness-download-key-32-bytes-ok"), downloads.DefaultTTL),
	}
	es := graph.NewExecutableSchema(graph.Config{Resolvers: h.r, Directives: h.policy.Directives(), Complexity: Complexity()})
	h.gql = executor.New(es)
	readPayments, readBanking := h.payments.sources(), h.banking.sources()
	h.gql.Use(loaders.PerOperation{Payments: readPayments, Banking: readBanking})
	h.gql.SetErrorPresenter(gqlhttp.ErrorPresenter(logger))
	h.gql.SetRecoverFunc(func(ctx context.Context, v any) error {
		t.Errorf("resolver panic: %v", v)
		return errors.New("internal system error")
	})
	h.store = newMemSessions()
	h.sessions = session.NewHandler(h.store, logger)
	h.seed()
	return h
}

// seed puts the demo data into the fakes.
func (h *harness) seed() {
	b := h.banking
	b.corporations.add(&bankingCorporation{ID: demoCorp, Name: "Demo Corp", Currency: "EUR", IsOnboarded: true})
	b.corporations.add(&bankingCorporation{ID: otherCorp, Name: "Other Corp", Currency: "EUR", IsOnboarded: true})
	b.persons.add(demoCorp, &bankingPerson{ID: demoPerson, FirstName: "Anna", LastName: "Demo", Email: "anna@demo.test"})
	b.wallets.add(demoCorp, &bankingWallet{ID: demoWalletEUR, Name: "Main EUR", Currency: "EUR", Type: "real", Amount: 100_000, Adapter: "adapter_c"})
	b.wallets.add(demoCorp, &bankingWallet{ID: demoWalletUSD, Name: "Main USD", Currency: "USD", Type: "real", Amount: 50_000, Adapter: "adapter_c"})
	h.payments.customers.add(paymentsCustomer{ID: demoCustomer, Number: "C-1", Status: "active", Currency: "EUR"})
	for email, p := range map[string]principal{"staff@demo.test": staff, "anna@demo.test": person,
		"intro@demo.test": introducer, "key:demo-api-key": apiClient} {
		b.accounts[email] = p
	}
}

// as makes the following execs run as p: a fresh session of p in the
// session store (anonymous: none). It returns h, for h.as(p).exec(...).
func (h *harness) as(p principal) *harness {
	h.t.Helper()
	h.who, h.token = p, ""
	if p == anonymous {
		return h
	}
	s := &session.Session{Kind: p.kind, PrincipalID: p.id, PersonID: p.personID, CorporationID: p.corporationID}
	if p.kind == session.Customer {
		s.CustomerKey = session.Secret("ck_" + p.id)
		h.payments.customerKeys[string(s.CustomerKey)] = p.id
	} else {
		s.BankingToken = session.Secret(h.banking.tokenFor(p))
	}
	tok, err := h.store.Create(context.Background(), s)
	if err != nil {
		h.t.Fatal(err)
	}
	h.token = tok
	return h
}

// inSession runs fn with the context of a request of h's current principal
// (as), as the session middleware makes it.
func (h *harness) inSession(fn func(ctx context.Context)) {
	h.t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
	req.RemoteAddr = "192.0.2.10:40000"
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	ran := false
	rec := httptest.NewRecorder()
	h.sessions.Middleware(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		ran = true
		fn(r.Context())
	})).ServeHTTP(rec, req)
	if !ran {
		h.t.Fatalf("the session middleware answered %d without running the request: %s", rec.Code, rec.Body)
	}
}

// exec runs one GraphQL operation as the current principal (as) and
// returns its response. vars travel as JSON, as a transport decodes them.
func (h *harness) exec(query string, vars map[string]any) *response {
	h.t.Helper()
	return h.execRaw(query, jsonVars(h.t, vars))
}

// execRaw is exec with variables passed as they are, not through JSON: an
// upload's graphql.Upload, as the multipart transport puts it in the
// variables.
func (h *harness) execRaw(query string, vars map[string]any) *response {
	h.t.Helper()
	params := &graphql.RawParams{Query: query, Variables: vars}
	var out *graphql.Response
	h.inSession(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		out = h.run(ctx, params)
	})
	raw, err := json.Marshal(out)
	if err != nil {
		h.t.Fatal(err)
	}
	resp := &response{raw: raw}
	if err := json.Unmarshal(raw, resp); err != nil {
		h.t.Fatal(err)
	}
	return resp
}

// run is what gqlgen's transports do with one operation.
func (h *harness) run(ctx context.Context, params *graphql.RawParams) *graphql.Response {
	ctx = graphql.StartOperationTrace(ctx)
	params.ReadTime = graphql.TraceTiming{Start: graphql.Now(), End: graphql.Now()}
	oc, errs := h.gql.CreateOperationContext(ctx, params)
	if errs != nil {
		return h.gql.DispatchError(graphql.WithOperationContext(ctx, oc), errs)
	}
	handler, ctx := h.gql.DispatchOperation(ctx, oc)
	return handler(ctx)
}

// jsonVars round-trips vars through JSON with numbers kept as json.Number,
// as gqlgen's HTTP transports decode them.
func jsonVars(t *testing.T, vars map[string]any) map[string]any {
	t.Helper()
	if vars == nil {
		return nil
	}
	raw, err := json.Marshal(vars)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// response is a GraphQL response as a client reads it.
type response struct {
	raw    []byte
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

// gqlError is one error of a response.
type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Code is extensions.code.
func (e gqlError) Code() string { s, _ := e.Extensions["code"].(string); return s }

// Upstream is extensions.upstream (nil when absent).
func (e gqlError) Upstream() map[string]any {
	m, _ := e.Extensions["upstream"].(map[string]any)
	return m
}

// noErrors fails the test when the response has errors.
func (r *response) noErrors(t *testing.T) *response {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("unexpected errors: %s", r.raw)
	}
	return r
}

// decode decodes data into v, after noErrors.
func (r *response) decode(t *testing.T, v any) {
	t.Helper()
	r.noErrors(t)
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("decoding %s: %v", r.Data, err)
	}
}

// code is the extensions.code of the only error, failing the test when
// there is not exactly one.
func (r *response) code(t *testing.T) string {
	t.Helper()
	return r.only(t).Code()
}

// only is the response's one error.
func (r *response) only(t *testing.T) gqlError {
	t.Helper()
	if len(r.Errors) != 1 {
		t.Fatalf("want exactly one error, got %s", r.raw)
	}
	return r.Errors[0]
}

// String is the raw response, for failure messages.
func (r *response) String() string { return string(r.raw) }

// memSessions is an in-memory session.Store.
type memSessions struct {
	mu sync.Mutex
	n  int
	m  map[string]*session.Session
}

func newMemSessions() *memSessions { return &memSessions{m: map[string]*session.Session{}} }

var _ session.Store = (*memSessions)(nil)

func (s *memSessions) Create(_ context.Context, sess *session.Session) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	tok := fmt.Sprintf("harness-session-%d", s.n)
	c := *sess
	c.ID, c.CSRFToken = fmt.Sprintf("sid-%d", s.n), fmt.Sprintf("csrf-%d", s.n)
	c.CreatedAt, c.ExpiresAt = time.Now(), time.Now().Add(s.TTL())
	s.m[tok] = &c
	*sess = c
	return tok, nil
}

func (s *memSessions) Get(_ context.Context, tok string) (*session.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.m[tok]
	if !ok {
		return nil, session.ErrNotFound
	}
	c := *sess
	return &c, nil
}

func (s *memSessions) Update(_ context.Context, tok string, fn func(*session.Session) error) (*session.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.m[tok]
	if !ok {
		return nil, session.ErrNotFound
	}
	c := *sess
	if err := fn(&c); errors.Is(err, session.ErrNoChange) {
		return sess, nil
	} else if err != nil {
		return nil, err
	}
	s.m[tok] = &c
	return &c, nil
}

func (s *memSessions) Delete(_ context.Context, tok string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, tok)
	return nil
}

func (s *memSessions) TTL() time.Duration { return time.Hour }

// lazyAttempts is the real idempotency store, over an embedded JetStream
// started at the first money movement of the test (most tests move none).
type lazyAttempts struct {
	t     *testing.T
	once  sync.Once
	store *idempotency.Store
	err   error
}

func (a *lazyAttempts) Run(ctx context.Context, in idempotency.Intent) (idempotency.Outcome, error) {
	a.once.Do(func() {
		e, err := engine.Open(context.Background(), engine.Config{DataDir: a.t.TempDir()})
		if err != nil {
			a.err = err
			return
		}
		a.t.Cleanup(e.Close)
		kv, err := e.KeyValue(context.Background(), idempotency.Bucket, idempotency.TTL)
		if err != nil {
			a.err = err
			return
		}
		a.store = idempotency.New(kv)
	})
	if a.err != nil {
		return idempotency.Outcome{}, a.err
	}
	return a.store.Run(ctx, in)
}

// fakeEvents is an EventStream that records what resolvers publish and
// serves no subscriptions.
type fakeEvents struct {
	mu        sync.Mutex
	published []events.Event
}

var _ EventStream = (*fakeEvents)(nil)

func (f *fakeEvents) Publish(_ context.Context, e events.Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.published = append(f.published, e)
	return nil
}

// names are the names of the published events, in order.
func (f *fakeEvents) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.published))
	for i, e := range f.published {
		out[i] = e.Name
	}
	return out
}

var errNoStream = &gqlerr.Error{Code: gqlerr.UpstreamUnavailable, Message: "the harness's event stream serves no subscriptions"}

func (f *fakeEvents) SubscribeSink(context.Context, events.Filter, string, events.Sink) error {
	return errNoStream
}

func (f *fakeEvents) CursorFor(context.Context, events.Filter) (string, error) {
	return "", errNoStream
}

func (f *fakeEvents) History(context.Context, events.Filter, string, int) (*events.History, error) {
	return &events.History{}, nil
}

func (f *fakeEvents) Lookup(context.Context, string, string, string) (*events.Event, error) {
	return nil, nil
}

// lockedWriter serialises the logger's writes: resolvers of one operation
// run in parallel.
type lockedWriter struct {
	mu sync.Mutex
	w  bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// logged reports whether the logs hold s.
func (h *harness) logged(s string) bool {
	h.logs.mu.Lock()
	defer h.logs.mu.Unlock()
	return strings.Contains(h.logs.w.String(), s)
}
