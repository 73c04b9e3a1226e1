package session_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// fakeBank is a banking upstream that enforces the token chain the way the
// spec and the sandbox do: every accepted call issues the chain's next
// token and supersedes the previous newest one, which keeps working for
// the grace period on the fake's own clock, then 401 with no token. Gate,
// when set, holds each accepted call after its token was issued, so a test
// decides when (and in which order) the answers arrive.
type fakeBank struct {
	mu          sync.Mutex
	now         time.Time
	grace       time.Duration
	seq         int
	superseded  map[string]time.Time // zero while newest
	newest      string
	blocked     bool
	inflight    int
	maxInflight int
	calls       int
	refused     int
	bodies      []string
	issued      []string

	gate func(tok string)
}

func newFakeBank(first string) *fakeBank {
	return &fakeBank{
		now: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC), grace: 10 * time.Second,
		superseded: map[string]time.Time{first: {}}, newest: first,
	}
}

func (f *fakeBank) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		_ = req.Body.Close()
	}
	tok := req.Header.Get(session.TokenHeader)
	f.mu.Lock()
	f.calls++
	f.bodies = append(f.bodies, string(body))
	at, known := f.superseded[tok]
	if !known || f.blocked || (!at.IsZero() && f.now.After(at.Add(f.grace))) {
		f.refused++
		n := f.refused
		f.mu.Unlock()
		return answer(req, http.StatusUnauthorized, "", fmt.Sprintf(`{"errors":[{"field":"","message":"refused #%d"}]}`, n)), nil
	}
	f.seq++
	fresh := fmt.Sprintf("secret-bank-token-%03d", f.seq)
	f.superseded[f.newest] = f.now
	f.superseded[fresh] = time.Time{}
	f.newest = fresh
	f.issued = append(f.issued, fresh)
	f.inflight++
	f.maxInflight = max(f.maxInflight, f.inflight)
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		gate(fresh)
	}
	f.mu.Lock()
	f.inflight--
	f.mu.Unlock()
	return answer(req, http.StatusOK, fresh, `{}`), nil
}

func answer(req *http.Request, status int, tok, body string) *http.Response {
	h := http.Header{"Content-Type": {"application/json"}}
	if tok != "" {
		h.Set(session.TokenHeader, tok)
	}
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: req}
}

func (f *fakeBank) advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

func (f *fakeBank) counts() (calls, refused, maxInflight int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, f.refused, f.maxInflight
}

// writebackRig is one replica: a session store, the session handler, and a
// banking client straight over the fake: the client's own hooks write tokens back.
type writebackRig struct {
	store  *session.JetStreamStore
	h      *session.Handler
	bank   *fakeBank
	client *banking.Client
	logs   *lockedBuffer
	token  string // the session token
}

type lockedBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.String()
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

func newWritebackRig(t *testing.T) *writebackRig {
	t.Helper()
	store, _ := openStore(t, time.Hour)
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	bank := newFakeBank("secret-bank-token-000")
	client, err := banking.NewClient("http://bank.test", roundtrip.WithTransport(bank),
		roundtrip.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	token, err := store.Create(context.Background(), &session.Session{Kind: session.Person,
		BankingToken: "secret-bank-token-000", BankingTokenAt: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	return &writebackRig{store: store, h: session.NewHandler(store, logger), bank: bank, client: client, logs: logs, token: token}
}

// request runs fn as one gateway request of the rig's session: the session
// is read from the store when it begins, as the middleware does.
func (r *writebackRig) request(t *testing.T, fn func(ctx context.Context)) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
	req.Header.Set("Authorization", "Bearer "+r.token)
	r.h.Middleware(http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) { fn(req.Context()) })).
		ServeHTTP(httptest.NewRecorder(), req)
}

func (r *writebackRig) stored(t *testing.T) *session.Session {
	t.Helper()
	s, err := r.store.Get(context.Background(), r.token)
	if err != nil {
		t.Fatalf("stored session: %v", err)
	}
	return s
}

// callsAtOnce makes n calls of the session at once, within the request
// of ctx, runs meanwhile (when not nil) while they are under way, and
// waits for them; what names them in a failure.
func (r *writebackRig) callsAtOnce(ctx context.Context, t *testing.T, n int, what string, meanwhile func()) {
	t.Helper()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := r.client.Persons.Me(ctx); err != nil {
				t.Errorf("%s: %v", what, err)
			}
		})
	}
	if meanwhile != nil {
		meanwhile()
	}
	wg.Wait()
}

// gateAll holds the bank's answers until n calls are in flight at once,
// runs then (when not nil), and lets them all go: meanwhile for
// callsAtOnce.
func (r *writebackRig) gateAll(t *testing.T, n int, then func()) (meanwhile func()) {
	release := make(chan struct{})
	r.bank.gate = func(string) { <-release }
	return func() {
		waitFor(t, "all calls in flight at once", func() bool { _, _, m := r.bank.counts(); return m == n })
		if then != nil {
			then()
		}
		close(release)
	}
}

// waitFor polls cond; it only guards against a hang (a broken transport
// that serialises calls never reaches cond), it measures nothing.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSessionCallsOverlap(t *testing.T) {
	r := newWritebackRig(t)
	const n = 6
	// All n calls of the one session reach the upstream before any
	// answers: nothing holds a call back behind its siblings.
	allInFlight := r.gateAll(t, n, nil)
	r.request(t, func(ctx context.Context) { r.callsAtOnce(ctx, t, n, "call", allInFlight) })
	if _, _, m := r.bank.counts(); m != n {
		t.Fatalf("max in flight = %d, want %d", m, n)
	}
}

// burstOutOfOrder makes n overlapping calls in one request whose answers
// arrive in the reverse of their issue order, so the last arrival (which
// write-back stores) is the oldest token of the burst. It returns the
// tokens in issue order.
func (r *writebackRig) burstOutOfOrder(t *testing.T, n int) []string {
	t.Helper()
	var mu sync.Mutex
	gates := map[string]chan struct{}{}
	r.bank.gate = func(tok string) {
		ch := make(chan struct{})
		mu.Lock()
		gates[tok] = ch
		mu.Unlock()
		<-ch
	}
	defer func() { r.bank.gate = nil }()
	r.request(t, func(ctx context.Context) {
		done := make(chan error)
		for range n {
			go func() {
				_, err := r.client.Persons.Me(ctx)
				done <- err
			}()
		}
		waitFor(t, "the burst in flight", func() bool { mu.Lock(); defer mu.Unlock(); return len(gates) == n })
		r.bank.mu.Lock()
		issued := slices.Clone(r.bank.issued[len(r.bank.issued)-n:])
		r.bank.mu.Unlock()
		for _, tok := range slices.Backward(issued) {
			mu.Lock()
			close(gates[tok])
			mu.Unlock()
			if err := <-done; err != nil {
				t.Errorf("burst call: %v", err)
			}
		}
	})
	r.bank.mu.Lock()
	defer r.bank.mu.Unlock()
	return slices.Clone(r.bank.issued[len(r.bank.issued)-n:])
}

func TestOutOfOrderBurstRecoversThroughACandidate(t *testing.T) {
	r := newWritebackRig(t)
	issued := r.burstOutOfOrder(t, 4)
	s := r.stored(t)
	// The last arrival is stored; the newest issued token is a candidate.
	if got := s.BankingToken.Reveal(); got != issued[0] {
		t.Fatalf("stored %q, want the last arrival %q", got, issued[0])
	}
	if !slices.Contains(s.BankingCandidates, session.Secret(issued[3])) || len(s.BankingCandidates) != 3 {
		t.Fatalf("candidates %v do not hold the burst's other 3 tokens", len(s.BankingCandidates))
	}

	// Past the grace the stored token is refused; the call (a PUT: its
	// body is sent again) succeeds through the candidates, latest arrival
	// first: issued[1] and issued[2] are refused too, issued[3] is newest.
	r.bank.advance(r.bank.grace + time.Second)
	calls0, refused0, _ := r.bank.counts()
	r.request(t, func(ctx context.Context) {
		yes := true
		if _, err := r.client.Persons.UpdateMe(ctx, &banking.MeUpdateRequest{IsUBO: &yes}); err != nil {
			t.Fatalf("call after the grace: %v", err)
		}
	})
	calls, refused, _ := r.bank.counts()
	if calls-calls0 != 4 || refused-refused0 != 3 {
		t.Fatalf("upstream calls %d (refused %d), want 4 (3 refused)", calls-calls0, refused-refused0)
	}
	for _, b := range r.bank.bodies[calls0:] {
		if b != r.bank.bodies[calls0] || b == "" {
			t.Fatalf("retried bodies differ: %q", r.bank.bodies[calls0:])
		}
	}
	s = r.stored(t)
	if s.BankingToken.Reveal() != r.bank.newest || len(s.BankingCandidates) != 0 {
		t.Fatalf("after recovery: stored newest %v, %d candidates", s.BankingToken.Reveal() == r.bank.newest, len(s.BankingCandidates))
	}

	// And the session is back to one call per call.
	r.bank.advance(r.bank.grace + time.Second)
	r.request(t, func(ctx context.Context) {
		if _, err := r.client.Persons.Me(ctx); err != nil {
			t.Fatalf("next call: %v", err)
		}
	})
	if c, _, _ := r.bank.counts(); c != calls+1 {
		t.Fatalf("next call took %d upstream calls, want 1", c-calls)
	}
}

func TestRefusalNoCandidateFixesGoesBackUnchanged(t *testing.T) {
	r := newWritebackRig(t)
	r.burstOutOfOrder(t, 3)
	r.bank.mu.Lock()
	r.bank.blocked = true
	r.bank.mu.Unlock()
	calls0, _, _ := r.bank.counts()
	var err error
	r.request(t, func(ctx context.Context) { _, err = r.client.Persons.Me(ctx) })
	var e *banking.ErrorResponse
	if !errors.As(err, &e) || e.StatusCode != http.StatusUnauthorized || e.First().Message != "refused #1" {
		t.Fatalf("err = %v, want the first 401 unchanged", err)
	}
	// Sent token, then the 2 candidates (the stored token was the one sent).
	if c, _, _ := r.bank.counts(); c-calls0 != 3 {
		t.Fatalf("upstream calls %d, want 3", c-calls0)
	}
	// The banking client ended the session on the refusal.
	if _, err := r.store.Get(context.Background(), r.token); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("session after a refusal: %v", err)
	}
}

func TestSignOutDuringABurst(t *testing.T) {
	r := newWritebackRig(t)
	// Another request signs the session out while the burst's calls run.
	signOut := r.gateAll(t, 3, func() {
		r.request(t, func(ctx context.Context) {
			if ended, err := session.End(ctx); !ended || err != nil {
				t.Errorf("End = %v, %v", ended, err)
			}
		})
	})
	r.request(t, func(ctx context.Context) { r.callsAtOnce(ctx, t, 3, "call", signOut) })
	// The write-backs of the answers did not bring the session back.
	if _, err := r.store.Get(context.Background(), r.token); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("session after sign-out: %v", err)
	}
}

func TestCandidatesNeverLogged(t *testing.T) {
	r := newWritebackRig(t)
	issued := r.burstOutOfOrder(t, 4)
	r.bank.advance(r.bank.grace + time.Second)
	r.request(t, func(ctx context.Context) {
		if _, err := r.client.Persons.Me(ctx); err != nil {
			t.Fatalf("call after the grace: %v", err)
		}
	})
	r.burstOutOfOrder(t, 3)
	s := r.stored(t)
	if len(s.BankingCandidates) == 0 {
		t.Fatal("no candidates to look for")
	}
	// A blocked principal: every candidate is tried and refused, the
	// session ends and that is logged.
	r.bank.mu.Lock()
	r.bank.blocked = true
	r.bank.mu.Unlock()
	r.request(t, func(ctx context.Context) { _, _ = r.client.Persons.Me(ctx) })

	printed := fmt.Sprintf("%v %+v %#v", *s, *s, *s)
	logs := r.logs.String()
	if !strings.Contains(logs, "session ended") {
		t.Fatalf("the refusal was not logged: %s", logs)
	}
	r.bank.mu.Lock()
	all := slices.Clone(r.bank.issued)
	r.bank.mu.Unlock()
	all = append(all, issued...)
	for _, tok := range all {
		if strings.Contains(logs, tok) || strings.Contains(printed, tok) {
			t.Fatalf("token %q in logs or print", tok)
		}
	}
}

func TestRefusedSiblingsRecoverOnce(t *testing.T) {
	r := newWritebackRig(t)
	r.burstOutOfOrder(t, 4) // stored: the oldest; candidates: 2 dead after the grace, 1 newest
	r.bank.advance(r.bank.grace + time.Second)
	_, refused0, _ := r.bank.counts()
	r.request(t, func(ctx context.Context) { r.callsAtOnce(ctx, t, 3, "call after the grace", nil) })
	// At most the 3 calls' own refusals and one pass over the 2 dead
	// candidates: the siblings that wait start from the token found.
	if _, refused, _ := r.bank.counts(); refused-refused0 > 3+2 {
		t.Fatalf("%d refusals, want at most 5", refused-refused0)
	}
	if s := r.stored(t); s.BankingToken.Reveal() != r.bank.newest && !slices.Contains(s.BankingCandidates, session.Secret(r.bank.newest)) {
		t.Fatal("the newest token is neither stored nor a candidate")
	}
}

func TestRefusedAnonymousSessionSignsInAgain(t *testing.T) {
	r := newWritebackRig(t)
	signIns := 0
	r.h.Anonymous = &session.Anonymous{Store: r.store, SignIn: func(context.Context) (*session.Session, error) {
		signIns++
		r.bank.mu.Lock()
		defer r.bank.mu.Unlock()
		tok := fmt.Sprintf("secret-bank-signin-%d", signIns)
		r.bank.superseded[tok] = time.Time{}
		return &session.Session{Kind: session.APIClient, BankingToken: session.Secret(tok), BankingTokenAt: time.Now().UTC()}, nil
	}}
	anonymous := func() (err error) {
		req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
		r.h.Middleware(http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) {
			_, err = r.client.Persons.Me(req.Context())
		})).ServeHTTP(httptest.NewRecorder(), req)
		return err
	}
	if err := anonymous(); err != nil {
		t.Fatalf("first anonymous call: %v", err)
	}
	// The demo principal's token is refused: that request fails, and the
	// shared session is dropped rather than kept refusing everyone.
	r.bank.mu.Lock()
	r.bank.blocked = true
	r.bank.mu.Unlock()
	if err := anonymous(); err == nil {
		t.Fatal("a refused token answered")
	}
	r.bank.mu.Lock()
	r.bank.blocked = false
	r.bank.mu.Unlock()
	if err := anonymous(); err != nil {
		t.Fatalf("after the refusal: %v", err)
	}
	if signIns != 2 {
		t.Fatalf("%d sign-ins, want 2", signIns)
	}
}

// countingStore counts the writes that reach the session store.
type countingStore struct {
	session.Store
	mu      sync.Mutex
	updates int
}

func (c *countingStore) Update(ctx context.Context, token string, fn func(*session.Session) error) (*session.Session, error) {
	c.mu.Lock()
	c.updates++
	c.mu.Unlock()
	return c.Store.Update(ctx, token, fn)
}

func (c *countingStore) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.updates
}

// A burst of overlapping calls writes its tokens to the store once, when
// it ends, in one compare-and-set; the stored token is the last arrival
// and the burst's other tokens are candidates. A call that overlaps
// nothing writes once, as before.
func TestABurstWritesTheStoreOnce(t *testing.T) {
	r := newWritebackRig(t)
	cs := &countingStore{Store: r.store}
	r.h = session.NewHandler(cs, slog.New(slog.NewJSONHandler(r.logs, nil)))

	r.request(t, func(ctx context.Context) {
		if _, err := r.client.Persons.Me(ctx); err != nil {
			t.Fatalf("single call: %v", err)
		}
	})
	if got := cs.count(); got != 1 {
		t.Fatalf("a lone call wrote the store %d times, want 1", got)
	}

	const n = 5
	issued := r.burstOutOfOrder(t, n)
	if got := cs.count(); got != 2 {
		t.Fatalf("a burst of %d calls wrote the store %d times, want 1 more", n, got-1)
	}
	s := r.stored(t)
	// The answers arrived newest first, so the last arrival, stored as the
	// token, is the burst's oldest; the others are candidates.
	if s.BankingToken.Reveal() != issued[0] {
		t.Errorf("stored token is not the last arrival")
	}
	for _, tok := range issued[1:] {
		if !slices.Contains(s.BankingCandidates, session.Secret(tok)) {
			t.Errorf("a token of the burst is not among the candidates")
		}
	}
}

// A request writes the tokens of its calls to the store at most twice,
// however many bursts its levels of calls make: its first burst's as soon
// as that burst ends, the rest together when the request ends. The stored
// token is then the newest, so the session's next request sends it, even
// past the grace of every older token.
func TestARequestWritesTheStoreAtMostTwice(t *testing.T) {
	r := newWritebackRig(t)
	cs := &countingStore{Store: r.store}
	r.h = session.NewHandler(cs, slog.New(slog.NewJSONHandler(r.logs, nil)))
	session.SetHoldFor(r.h, time.Hour) // only the request's end writes what is held

	r.request(t, func(ctx context.Context) {
		// Three levels of calls: one, then two at once, then one.
		if _, err := r.client.Persons.Me(ctx); err != nil {
			t.Fatalf("first level: %v", err)
		}
		r.callsAtOnce(ctx, t, 2, "second level", nil)
		if _, err := r.client.Persons.Me(ctx); err != nil {
			t.Fatalf("third level: %v", err)
		}
		if got := cs.count(); got > 1 {
			t.Errorf("the store was written %d times during the request, want at most 1 (the first level)", got)
		}
	})
	if got := cs.count(); got != 2 {
		t.Fatalf("a request of 3 levels of calls wrote the store %d times, want 2", got)
	}
	r.bank.mu.Lock()
	newest := r.bank.newest
	r.bank.mu.Unlock()
	if got := r.stored(t).BankingToken.Reveal(); got != newest {
		t.Fatalf("stored token is not the newest issued")
	}

	r.bank.advance(time.Minute) // every older token is past its grace
	r.request(t, func(ctx context.Context) {
		if _, err := r.client.Persons.Me(ctx); err != nil {
			t.Fatalf("next request: %v", err)
		}
	})
	if _, refused, _ := r.bank.counts(); refused != 0 {
		t.Fatalf("the next request sent a superseded token (%d refusals)", refused)
	}
}

// A request of one level of overlapping calls (a screen whose reads all
// start at once) writes the store once, and that write is done when the
// request ends.
func TestOneLevelOfCallsWritesOnceBeforeTheRequestEnds(t *testing.T) {
	r := newWritebackRig(t)
	cs := &countingStore{Store: r.store}
	r.h = session.NewHandler(cs, slog.New(slog.NewJSONHandler(r.logs, nil)))
	const n = 4
	allInFlight := r.gateAll(t, n, nil)
	r.request(t, func(ctx context.Context) { r.callsAtOnce(ctx, t, n, "call", allInFlight) })
	if got := cs.count(); got != 1 {
		t.Fatalf("one level of %d calls wrote the store %d times, want 1", n, got)
	}
	r.bank.mu.Lock()
	issued := slices.Clone(r.bank.issued)
	r.bank.mu.Unlock()
	s := r.stored(t)
	for _, tok := range issued {
		if s.BankingToken.Reveal() != tok && !slices.Contains(s.BankingCandidates, session.Secret(tok)) {
			t.Fatalf("a token of the level is neither stored nor a candidate when the request has ended")
		}
	}
}

// A request that goes on after its calls (waiting on something else) does
// not keep their tokens from the store past holdFor: the session's other
// requests, on this replica or another, read them from there.
func TestARequestThatGoesOnWritesItsTokensMeanwhile(t *testing.T) {
	r := newWritebackRig(t)
	session.SetHoldFor(r.h, 10*time.Millisecond)
	r.request(t, func(ctx context.Context) {
		if _, err := r.client.Persons.Me(ctx); err != nil {
			t.Fatalf("call: %v", err)
		}
		r.bank.mu.Lock()
		newest := r.bank.newest
		r.bank.mu.Unlock()
		waitFor(t, "the held token written while the request goes on", func() bool {
			return r.stored(t).BankingToken.Reveal() == newest
		})
	})
}
