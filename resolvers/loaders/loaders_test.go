package loaders_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
	"github.com/fingraph/fingraph/upstream/roundtrip"
	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// upstream is the seeded sandbox over real HTTP, with the clients the
// loaders use. intercept, when set, answers a request before the sandbox
// does (return false to pass it on).
type upstream struct {
	sb        *sandbox.Sandbox
	url       string
	payments  *payments.Client
	banking   *banking.Client
	mu        sync.Mutex
	intercept func(w http.ResponseWriter, r *http.Request) bool
	requests  map[string]int // "METHOD path?query" as the upstream received it
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{sb: sandbox.New(sandbox.Config{}), requests: map[string]int{}}
	u.sb.Seed()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.requests[r.Method+" "+r.URL.RequestURI()]++
		icpt := u.intercept
		u.mu.Unlock()
		if icpt != nil && icpt(w, r) {
			return
		}
		u.sb.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); u.sb.Close() })
	u.url = srv.URL
	var err error
	u.payments, err = payments.NewClient(srv.URL+"/payments", payments.Keys{
		Public: paymentsim.PublicKey, Private: paymentsim.PrivateKey, AccessToken: paymentsim.AccessToken,
	}, roundtrip.WithRetries(0))
	require.NoError(t, err)
	u.banking, err = banking.NewClient(srv.URL + "/banking")
	require.NoError(t, err)
	return u
}

// paymentsSource is the payments client's services as the loaders read
// them.
func (u *upstream) paymentsSource() loaders.PaymentsSource {
	return loaders.PaymentsSource{Customers: u.payments.Customers, Orders: u.payments.Orders, PendingActions: u.payments.PendingActions}
}

// bankingSource is the banking client's services as the loaders read them.
func (u *upstream) bankingSource() loaders.BankingSource {
	b := u.banking
	return loaders.BankingSource{Persons: b.Persons, Corporations: b.Corporations, Cards: b.Cards, Transactions: b.Transactions,
		APIKeys: b.APIKeys, KYC: b.KYC, Wallets: b.Wallets, Requisites: b.Requisites, Invoices: b.Invoices, Limits: b.Limits}
}

// calls is how often the sandbox served route ("GET /payments/v1/customer").
func (u *upstream) calls(route string) int { return u.sb.Calls()[route] }

// received is how often the upstream received exactly this request.
func (u *upstream) received(methodURI string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.requests[methodURI]
}

// customerIDs are the seeded customers' ids, read around the loaders.
func (u *upstream) customerIDs(t *testing.T) []string {
	t.Helper()
	list, err := u.payments.Customers.List(context.Background())
	require.NoError(t, err)
	ids := make([]string, 0, len(list))
	for _, c := range list {
		ids = append(ids, c.ID)
	}
	require.GreaterOrEqual(t, len(ids), 4)
	return ids
}

// signedIn returns a context whose banking calls carry a fresh session of
// the demo staff member (two-factor by SMS, read from the sandbox outbox).
func (u *upstream) staff(t *testing.T) context.Context {
	t.Helper()
	ctx := context.Background()
	in := banking.SignInRequest{Email: bankingsim.StaffEmail, Password: bankingsim.DemoPassword}
	res, err := u.banking.Auth.SignInStaff(ctx, in)
	require.NoError(t, err)
	require.NotNil(t, res.TwoFactor)
	resp, err := http.Get(u.url + "/_sandbox/sms")
	require.NoError(t, err)
	defer resp.Body.Close()
	var sms []struct{ Code string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&sms))
	require.NotEmpty(t, sms)
	in.TwoFactorCode, in.ChallengeID = sms[0].Code, res.TwoFactor.ChallengeID
	res, err = u.banking.Auth.SignInStaff(ctx, in)
	require.NoError(t, err)
	return banking.WithTokenSource(ctx, banking.NewTokenStore(res.Token.Reveal()))
}

// person returns a context acting as the demo person Anna.
func (u *upstream) person(t *testing.T) context.Context {
	t.Helper()
	ctx := context.Background()
	res, err := u.banking.Auth.SignInPerson(ctx, banking.SignInRequest{Email: bankingsim.AnnaEmail, Password: bankingsim.DemoPassword, Fingerprint: 42})
	require.NoError(t, err)
	require.NotEmpty(t, res.Token.Reveal())
	return banking.WithTokenSource(ctx, banking.NewTokenStore(res.Token.Reveal()))
}

func TestCustomerLoaderBatchesKeysIntoOneListing(t *testing.T) {
	u := newUpstream(t)
	ids := u.customerIDs(t)
	keys := []string{ids[3], "no-such-customer", ids[0], ids[2], ids[0]}
	before := u.calls("GET /payments/v1/customer")

	l := u.loaders()
	got, errs := getMany(context.Background(), &l.Customer, keys)

	assert.Equal(t, 1, u.calls("GET /payments/v1/customer")-before, "N keys, one listing")
	assert.Zero(t, u.calls("GET /payments/v1/customer/{customer_id}"), "no read by id for a batch")
	require.Len(t, got, len(keys))
	for i, k := range keys {
		if k == "no-such-customer" {
			assert.Nil(t, got[i], "a missing customer loads as nil")
			continue
		}
		require.NotNil(t, got[i], "key %d", i)
		assert.Equal(t, k, got[i].ID, "results come in key order")
	}
	noErrors(t, errs) // a missing key is no error of its own nor of the others
}

func TestCustomerLoaderReadsOneKeyByID(t *testing.T) {
	u := newUpstream(t)
	ids := u.customerIDs(t)
	l := u.loaders()

	c, err := l.Customer.Get(context.Background(), ids[1])
	require.NoError(t, err)
	assert.Equal(t, ids[1], c.ID)
	missing, err := u.loaders().Customer.Get(context.Background(), "no-such-customer")
	require.NoError(t, err, "404 of one key is an absent customer, not an error")
	assert.Nil(t, missing)
	assert.Equal(t, 2, u.calls("GET /payments/v1/customer/{customer_id}"))
}

func TestCustomerLoaderInACustomerSessionSeesOnlyItself(t *testing.T) {
	u := newUpstream(t)
	ids := u.customerIDs(t)
	ctx := payments.WithCustomerKey(context.Background(), paymentsim.DemoCustomerKey)
	me, err := u.payments.Customers.Get(ctx, "me")
	require.NoError(t, err)
	before := u.calls("GET /payments/v1/customer")

	other := ids[0]
	if other == me.ID {
		other = ids[1]
	}
	got, errs := getMany(ctx, &u.loaders().Customer, []string{other, me.ID})
	assert.Nil(t, got[0], "another customer must not load in a customer session")
	require.NotNil(t, got[1])
	assert.Equal(t, me.ID, got[1].ID)
	noErrors(t, errs)
	assert.Equal(t, before, u.calls("GET /payments/v1/customer"), "never the merchant listing")
}

// The Orders read lists each window once, however many customers' orders
// are asked for in it; each customer gets exactly its orders of the window;
// a malformed window fails alone.
func TestOrdersAreListedOncePerWindowAndABadWindowFailsAlone(t *testing.T) {
	u := newUpstream(t)
	ids := u.customerIDs(t)
	today := time.Now().UTC()
	recent := loaders.WindowOf(today.AddDate(0, 0, -30), today)
	week := loaders.WindowOf(today.AddDate(0, 0, -7), today)
	type ask struct {
		w        loaders.Window
		customer string
	}
	asks := []ask{{recent, ids[0]}, {recent, ids[1]}, {week, ids[0]}, {recent, ids[3]}}
	l := u.loaders()
	for _, a := range asks {
		l.Orders.Start(context.Background(), a.w)
	}
	_, err := l.Orders.Get(context.Background(), loaders.Window{Start: "last week", End: "today"})
	assert.Error(t, err, "a malformed window fails")

	var got [][]payments.Order
	for i, a := range asks {
		list, err := l.Orders.Get(context.Background(), a.w)
		require.NoError(t, err, "ask %d", i)
		got = append(got, list.Of(a.customer))
	}
	assert.Equal(t, 2, u.calls("GET /payments/v1/order"), "one listing per distinct window")

	for i, a := range asks {
		start, _ := time.Parse(payments.DateLayout, a.w.Start)
		end, _ := time.Parse(payments.DateLayout, a.w.End)
		all, err := u.payments.Orders.List(context.Background(), start, end)
		require.NoError(t, err)
		var want, have []string
		for _, o := range all {
			if o.Customer.ID == a.customer {
				want = append(want, o.ID)
			}
		}
		for _, o := range got[i] {
			have = append(have, o.ID)
		}
		sort.Strings(want)
		sort.Strings(have)
		assert.Equal(t, want, have, "ask %d", i)
	}
	assert.NotEmpty(t, got[0], "the seed's first customer has recent orders")
	assert.NotEqual(t, len(got[0]), len(got[2]), "the seed has orders older than a week: the windows differ")
}

// beforeTheWindow runs f, which must not wait for an hour-long batch
// window, and fails the test at once if it does (a deadlock guard, not a
// timing: f takes milliseconds or an hour).
func beforeTheWindow(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("waited for the loader's window")
	}
}

// pendingEvent fires a PendingActionCreated event and returns its id.
func (u *upstream) pendingEvent(t *testing.T) string {
	t.Helper()
	resp, err := http.Post(u.url+"/_sandbox/trigger", "application/json", jsonBody(`{"name":"PendingActionCreated"}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var ev struct{ ID string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&ev))
	require.NotEmpty(t, ev.ID)
	return ev.ID
}

func TestPendingActionLoaderDedupesAndFailsPerKey(t *testing.T) {
	u := newUpstream(t)
	e1, e2 := u.pendingEvent(t), u.pendingEvent(t)
	const broken = "event-the-upstream-fails-on"
	u.intercept = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Query().Get("event_id") != broken {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"code":"internal","message":"boom"}}`))
		return true
	}
	keys := []string{e2, broken, e1, "no-such-event", e2, e1}

	got, errs := getMany(context.Background(), &u.loaders().PendingActionByEvent, keys)

	for _, id := range []string{e1, e2, broken, "no-such-event"} {
		assert.Equal(t, 1, u.received("GET /payments/v3/pending_actions?event_id="+id), "one upstream read of %s", id)
	}
	require.Len(t, got, len(keys))
	for i, k := range keys {
		switch k {
		case broken:
			assert.Error(t, errs[i], "the failing key fails")
		case "no-such-event":
			assert.NoError(t, errs[i])
			assert.Nil(t, got[i], "an event without a pending action loads as nil")
		default:
			require.NoError(t, errs[i], "key %d fails with another key's error", i)
			require.NotNil(t, got[i])
			assert.Equal(t, k, got[i].EventID, "results come in key order")
		}
	}
}

func TestCorporationLoaderOneListingKeyOrder(t *testing.T) {
	u := newUpstream(t)
	ctx := u.staff(t)
	before := u.calls("GET /banking/v2/corporations")
	keys := []string{bankingsim.SecondCorporationID, "no-such-corporation", bankingsim.DemoCorporationID, bankingsim.DemoAccountID}

	got, errs := getMany(ctx, &u.loaders().Corporation, keys)

	assert.Equal(t, 1, u.calls("GET /banking/v2/corporations")-before)
	noErrors(t, errs)
	require.Len(t, got, len(keys))
	assert.Equal(t, bankingsim.SecondCorporationID, got[0].ID)
	assert.Nil(t, got[1])
	assert.Equal(t, bankingsim.DemoCorporationID, got[2].ID)
	assert.Equal(t, bankingsim.DemoCorporationID, got[3].ID, "an account id finds its corporation")
}

func TestCorporationPersonsLoaderGroupsOneListing(t *testing.T) {
	u := newUpstream(t)
	ctx := u.staff(t)
	before := u.calls("GET /banking/v2/persons")

	got, errs := getMany(ctx, &u.loaders().CorporationPersons,
		[]string{bankingsim.DemoCorporationID, bankingsim.SecondCorporationID, "no-such-corporation"})

	assert.Equal(t, 1, u.calls("GET /banking/v2/persons")-before)
	noErrors(t, errs)
	for i, corp := range []string{bankingsim.DemoCorporationID, bankingsim.SecondCorporationID} {
		require.NotEmpty(t, got[i])
		for _, p := range got[i] {
			assert.Equal(t, corp, loaders.CorporationOf(p), "%s is listed under %s", p.ID, corp)
		}
	}
	assert.Empty(t, got[2])
}

func TestLoadersArePerRequest(t *testing.T) {
	u := newUpstream(t)
	ids := u.customerIDs(t)
	ctx := context.Background()
	first := u.loaders()
	c, err := first.Customer.Get(ctx, ids[0])
	require.NoError(t, err)
	oldName := c.Contact.Name

	// The customer changes upstream between two requests.
	contact := c.Contact
	contact.Name = "Renamed Between Requests"
	_, err = u.payments.Customers.UpdateContact(ctx, ids[0], contact)
	require.NoError(t, err)

	reads := u.calls("GET /payments/v1/customer/{customer_id}")
	again, err := first.Customer.Get(ctx, ids[0])
	require.NoError(t, err)
	assert.Equal(t, oldName, again.Contact.Name, "within a request the loader answers from its cache")
	assert.Equal(t, reads, u.calls("GET /payments/v1/customer/{customer_id}"))

	next, err := u.loaders().Customer.Get(ctx, ids[0])
	require.NoError(t, err)
	assert.Equal(t, "Renamed Between Requests", next.Contact.Name, "a new request must not see the last one's cache")
	assert.Equal(t, reads+1, u.calls("GET /payments/v1/customer/{customer_id}"))
}

func TestMeIsReadOncePerRequestAndPerSession(t *testing.T) {
	u := newUpstream(t)
	anna, staff := u.person(t), u.staff(t)
	l := u.loaders()

	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			me, err := l.Me.Get(anna, loaders.Whole{})
			assert.NoError(t, err)
			assert.Equal(t, bankingsim.AnnaEmail, me.Email)
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, u.calls("GET /banking/v2/persons/me"), "five fields asking, one read")

	// Another request of another session has its own answer.
	_, err := u.loaders().Me.Get(staff, loaders.Whole{})
	assert.Error(t, err, "staff have no person profile; Anna's must not leak into their request")
}

func TestPerOperationGivesEachOperationAndEventItsOwnLoaders(t *testing.T) {
	u := newUpstream(t)
	ext := loaders.PerOperation{Payments: u.paymentsSource(), Banking: u.bankingSource()}
	seen := map[*loaders.Loaders]int{}
	// One socket's context, shared by its operations (as gqlgen's websocket
	// transport shares the upgrade request's).
	socket := context.Background()
	for range 2 {
		rh := ext.InterceptOperation(socket, func(ctx context.Context) graphql.ResponseHandler {
			op := loaders.For(ctx)
			assert.Same(t, op, loaders.For(ctx), "one operation, one set")
			seen[op]++
			return func(ctx context.Context) *graphql.Response {
				seen[loaders.For(ctx)]++
				return &graphql.Response{}
			}
		})
		// Two responses, as a subscription's two events.
		for range 2 {
			ext.InterceptResponse(socket, rh)
		}
	}
	assert.Len(t, seen, 6, "two operations, each with two events: six sets, none shared")
	assert.Panics(t, func() { loaders.For(context.Background()) }, "a resolver without loaders is a wiring bug")
}

// getMany gets every key at once, as gqlgen's resolvers of a list's
// elements do, each on its own goroutine.
func getMany[K comparable, V any](ctx context.Context, r interface {
	Get(context.Context, K) (V, error)
}, keys []K) ([]V, []error) {
	vals, errs := make([]V, len(keys)), make([]error, len(keys))
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Go(func() { vals[i], errs[i] = r.Get(ctx, k) })
	}
	wg.Wait()
	return vals, errs
}

func jsonBody(s string) *strings.Reader { return strings.NewReader(s) }

// noErrors asserts a getMany with no failed key.
func noErrors(t *testing.T, errs []error) {
	t.Helper()
	for i, err := range errs {
		assert.NoError(t, err, "key %d", i)
	}
}

// loaders returns a fresh read cache whose Customer batch window is long
// enough that a slow (or -race) run never splits a test's batch: what the
// tests assert is how one batch is served, not how the window splits keys.
func (u *upstream) loaders() *loaders.Loaders {
	return loaders.New(u.paymentsSource(), u.bankingSource(), loaders.WithWait(50*time.Millisecond))
}

func TestPersonLoaderAndCorporationPersonsShareOnePageAndAMissingPersonIsOnlyItsOwn(t *testing.T) {
	u := newUpstream(t)
	anna := u.person(t)
	l := u.loaders()
	before := u.calls("GET /banking/v2/persons")

	got, errs := getMany(anna, &l.Person, []string{bankingsim.AnnaID, "no-such-person", bankingsim.DaceID})
	byCorp, err := l.PersonsByCorporation.Get(anna, loaders.Whole{})
	require.NoError(t, err)
	noErrors(t, errs)
	require.Len(t, got, 3)
	assert.Equal(t, bankingsim.AnnaID, got[0].ID)
	assert.Nil(t, got[1], "an unknown person loads as nil, with no error for it or the others")
	assert.Equal(t, bankingsim.DaceID, got[2].ID)
	assert.NotEmpty(t, byCorp[bankingsim.DemoCorporationID])
	assert.Equal(t, 1, u.calls("GET /banking/v2/persons")-before,
		"cardholders and the corporation's persons read the same first page once")
}

// PersonsOf, a batch resolver's read, answers at once (no batch window: the
// Customer loader's is an hour here, and beforeTheWindow fails the test if
// anything waits for it), from one page of the listing, asks for a repeated
// id once, and its answers are the Person read's.
func TestPersonsOfAnswersAtOnceFromOnePageAsThePersonRead(t *testing.T) {
	u := newUpstream(t)
	anna := u.person(t)
	l := loaders.New(u.paymentsSource(), u.bankingSource(), loaders.WithWait(time.Hour))
	before := u.calls("GET /banking/v2/persons")

	var got []*banking.Person
	var errs []error
	beforeTheWindow(t, func() {
		got, errs = l.PersonsOf(anna, []string{bankingsim.DaceID, "no-such-person", bankingsim.AnnaID, bankingsim.DaceID})
	})

	noErrors(t, errs)
	require.Len(t, got, 4)
	assert.Equal(t, bankingsim.DaceID, got[0].ID)
	assert.Nil(t, got[1], "an unknown person is nil, with no error")
	assert.Equal(t, bankingsim.AnnaID, got[2].ID)
	assert.Same(t, got[0], got[3], "a repeated id is one answer")
	assert.Equal(t, 1, u.calls("GET /banking/v2/persons")-before, "one page of the listing")

	var p *banking.Person
	var err error
	beforeTheWindow(t, func() { p, err = l.Person.Get(anna, bankingsim.AnnaID) })
	require.NoError(t, err)
	assert.Same(t, got[2], p, "the Person read answers from what PersonsOf read")
	assert.Equal(t, 1, u.calls("GET /banking/v2/persons")-before, "no second listing")
}

// A person past the first page of the listing is read by id, once per
// operation, however many ask: two lists' batch resolvers (PersonsOf) and
// the Person read read Dace with one GET between them.
func TestAPersonPastTheFirstPageIsReadOnceAcrossBatches(t *testing.T) {
	u := newUpstream(t)
	anna := u.person(t)
	// The listing answers a first page without Dace, and says there is more.
	u.intercept = func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || r.URL.Path != "/banking/v2/persons" {
			return false
		}
		rec := httptest.NewRecorder()
		u.sb.ServeHTTP(rec, r)
		var page struct {
			List []map[string]any `json:"list"`
			Meta map[string]any   `json:"meta"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &page))
		kept := page.List[:0]
		for _, p := range page.List {
			if p["id"] != bankingsim.DaceID {
				kept = append(kept, p)
			}
		}
		page.List, page.Meta["has_more"] = kept, true
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		_ = json.NewEncoder(w).Encode(page)
		return true
	}
	l := loaders.New(u.paymentsSource(), u.bankingSource(), loaders.WithWait(time.Millisecond))
	dace := "GET /banking/v2/persons/" + bankingsim.DaceID

	first, errs := l.PersonsOf(anna, []string{bankingsim.DaceID, bankingsim.AnnaID})
	noErrors(t, errs)
	second, errs := l.PersonsOf(anna, []string{bankingsim.DaceID})
	noErrors(t, errs)
	loaded, err := l.Person.Get(anna, bankingsim.DaceID)
	require.NoError(t, err)

	require.NotNil(t, first[0])
	assert.Equal(t, bankingsim.DaceID, first[0].ID, "read by id past the first page")
	assert.Equal(t, bankingsim.AnnaID, first[1].ID, "from the first page")
	assert.Same(t, first[0], second[0])
	assert.Same(t, first[0], loaded)
	assert.Equal(t, 1, u.received(dace), "one read of Dace in the operation")
}

// A query's reads, and each subscription event's, may share upstream calls
// begun after they started; a mutation's never do, so that a read that
// checks what the mutation wrote sees it.
func TestOnlyReadsOfQueriesAndEventsShareCalls(t *testing.T) {
	for op, shares := range map[ast.Operation]bool{ast.Query: true, ast.Subscription: true, ast.Mutation: false} {
		ctx := graphql.WithOperationContext(context.Background(),
			&graphql.OperationContext{Operation: &ast.OperationDefinition{Operation: op}})
		before := time.Now()
		var from time.Time
		var ok bool
		loaders.PerOperation{}.InterceptResponse(ctx, func(ctx context.Context) *graphql.Response {
			from, ok = roundtrip.SharesFrom(ctx)
			return nil
		})
		assert.Equal(t, shares, ok, "%s", op)
		if shares {
			assert.False(t, from.Before(before), "%s: shares calls begun before it started", op)
		}
	}
}
