package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// Incremental delivery (@defer) through real HTTP, SSE and websockets: the
// first part leaves before the deferred work is done (an upstream route is
// held by a gate, and the first part is read while the gate has let nothing
// through: counted, never timed), parts carry their label, path and
// hasNext, and the deferred screen costs what the undeferred one does.

// upstreamGate holds the sandbox requests it matches while closed, and
// counts them.
type upstreamGate struct {
	match func(*http.Request) bool

	mu        sync.Mutex
	closed    bool
	open      chan struct{}
	held      int // requests that reached the gate while closed
	through   int // matching requests answered
	cancelled int // held requests whose caller went away
}

func newUpstreamGate(match func(*http.Request) bool) *upstreamGate {
	return &upstreamGate{match: match, open: make(chan struct{})}
}

func (g *upstreamGate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.match(r) {
			next.ServeHTTP(w, r)
			return
		}
		g.mu.Lock()
		closed, open := g.closed, g.open
		if closed {
			g.held++
		}
		g.mu.Unlock()
		if closed {
			select {
			case <-open:
			case <-r.Context().Done():
				g.mu.Lock()
				g.cancelled++
				g.mu.Unlock()
				return
			}
		}
		next.ServeHTTP(w, r)
		g.mu.Lock()
		g.through++
		g.mu.Unlock()
	})
}

func (g *upstreamGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed, g.open, g.through, g.held, g.cancelled = true, make(chan struct{}), 0, 0, 0
}

func (g *upstreamGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		g.closed = false
		close(g.open)
	}
}

func (g *upstreamGate) counts() (held, through int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held, g.through
}

func (g *upstreamGate) cancelledCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cancelled
}

// cardRoutes matches the upstream reads behind a wallet's cards: the card
// listing and each card's transactions.
func cardRoutes(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/banking/v2/cards")
}

// incrementalPart is one part of an incremental answer: the first (data,
// errors, hasNext) or a later one (incremental, hasNext).
type incrementalPart struct {
	Data        json.RawMessage `json:"data"`
	Errors      []gqlError      `json:"errors"`
	HasNext     *bool           `json:"hasNext"`
	Label       string          `json:"label"` // SSE and websockets: a later payload's own
	Path        []any           `json:"path"`
	Incremental []struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
		Label  string          `json:"label"`
		Path   []any           `json:"path"`
	} `json:"incremental"`
}

// multipartStream is an open multipart/mixed answer read part by part.
type multipartStream struct {
	resp *http.Response
	mr   *multipart.Reader
}

// postMultipart POSTs a query as Apollo Client does for a deferred query
// and returns the open answer.
func (g *testGateway) postMultipart(t *testing.T, ctx context.Context, query string, vars map[string]any) *multipartStream {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json")
	if g.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+g.bearer)
	}
	resp, err := g.http.Do(req)
	if err != nil {
		t.Fatalf("POST /graphql: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" || params["deferspec"] != "20220824" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("a deferred query answered %d %q, want multipart/mixed with deferSpec=20220824: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	return &multipartStream{resp: resp, mr: multipart.NewReader(resp.Body, params["boundary"])}
}

// next reads the next part; ok is false after the closing boundary.
func (s *multipartStream) next(t *testing.T) (incrementalPart, bool) {
	t.Helper()
	p, err := s.mr.NextPart()
	if err == io.EOF {
		return incrementalPart{}, false
	}
	if err != nil {
		t.Fatalf("multipart: %v", err)
	}
	if ct := p.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("part Content-Type %q", ct)
	}
	raw, err := io.ReadAll(p)
	if err != nil {
		t.Fatalf("multipart part: %v", err)
	}
	noteResponse(raw)
	var out incrementalPart
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("part %q: %v", raw, err)
	}
	return out, true
}

// rest reads every remaining part and checks that hasNext is true on all
// but the last.
func (s *multipartStream) rest(t *testing.T) []incrementalPart {
	t.Helper()
	var parts []incrementalPart
	for {
		p, ok := s.next(t)
		if !ok {
			break
		}
		parts = append(parts, p)
	}
	if len(parts) == 1 && parts[0].HasNext == nil {
		return parts // nothing was deferred: one answer, as without @defer
	}
	for i, p := range parts {
		if p.HasNext == nil || *p.HasNext != (i < len(parts)-1) {
			t.Errorf("part %d of %d: hasNext %v", i+1, len(parts), p.HasNext)
		}
	}
	return parts
}

// dashboardSetup gives anna's corporation 6 cards on 3 wallets, as
// TestScreenCorporationDashboard does, so that the costs of docs/screens.md
// hold.
func dashboardSetup(t *testing.T, g *testGateway) *testGateway {
	t.Helper()
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	staff := g.signInStaff(t)
	corpID, holders := cardholders(t, anna)
	for i := range 2 {
		wallet := g.createWallet(t, staff, map[string]any{"corporationId": corpID,
			"adapter": "ADAPTER_A", "purpose": "CARD", "name": fmt.Sprintf("Deferred cards %d", i)})
		for j := range 2 {
			anna.issueCard(t, map[string]any{"fundingWalletId": wallet, "cardholderId": holders[j],
				"expiryMonth": 12, "expiryYear": 2031, "displayName": fmt.Sprintf("Deferred card %d.%d", i, j)})
		}
	}
	return anna
}

type deferredDashboard struct {
	CurrentCorporation struct {
		Wallets []map[string]json.RawMessage `json:"wallets"`
	} `json:"currentCorporation"`
}

// TestDeferredDashboardOverMultipart: the dashboard with each wallet's
// cards deferred answers its wallets while every card read is held, then
// one part per wallet with label "cards" at the wallet's path, and costs
// the upstream calls of the undeferred dashboard, no more.
func TestDeferredDashboardOverMultipart(t *testing.T) {
	t.Parallel()
	gate := newUpstreamGate(cardRoutes)
	g := startGatewayWith(t, sandboxBehind(gate.wrap))
	anna := dashboardSetup(t, g)

	g.resetStats(t)
	gate.close()
	s := anna.postMultipart(t, context.Background(), screenQuery(t, "corporation_dashboard_deferred"), nil)
	first, ok := s.next(t)
	_, through := gate.counts()
	gate.release()
	if !ok {
		t.Fatal("no first part")
	}
	if through != 0 {
		t.Errorf("the first part came after %d card reads were answered; want it before any", through)
	}
	if len(first.Errors) > 0 || first.HasNext == nil || !*first.HasNext {
		t.Fatalf("first part: errors %+v, hasNext %v", first.Errors, first.HasNext)
	}
	var d deferredDashboard
	if err := json.Unmarshal(first.Data, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.CurrentCorporation.Wallets) < 3 {
		t.Fatalf("the first part shows %d wallets", len(d.CurrentCorporation.Wallets))
	}
	for i, w := range d.CurrentCorporation.Wallets {
		// gqlgen writes a deferred field as null in the first part;
		// clients merge the later part over it.
		if c, has := w["cards"]; has && string(c) != "null" {
			t.Errorf("wallet %d has its cards in the first part: %s", i, c)
		}
	}

	rest := s.rest(t)
	cards, walletsWithCards := 0, 0
	seen := map[float64]bool{}
	for _, p := range rest {
		for _, inc := range p.Incremental {
			if inc.Label != "cards" || len(inc.Path) != 3 || inc.Path[0] != "currentCorporation" || inc.Path[1] != "wallets" {
				t.Errorf("a part labelled %q at %v", inc.Label, inc.Path)
				continue
			}
			if len(inc.Errors) > 0 {
				t.Errorf("part at %v: errors %+v", inc.Path, inc.Errors)
			}
			seen[inc.Path[2].(float64)] = true
			var w struct {
				Cards []struct {
					ID string `json:"id"`
				} `json:"cards"`
			}
			if err := json.Unmarshal(inc.Data, &w); err != nil {
				t.Fatalf("part %s: %v", inc.Data, err)
			}
			if len(w.Cards) > 0 {
				walletsWithCards++
			}
			cards += len(w.Cards)
		}
	}
	if len(seen) != len(d.CurrentCorporation.Wallets) {
		t.Errorf("deferred parts for %d wallets of %d", len(seen), len(d.CurrentCorporation.Wallets))
	}
	if cards != 6 || walletsWithCards != 3 {
		t.Errorf("the deferred parts show %d cards on %d wallets; the test made 6 on 3", cards, walletsWithCards)
	}
	want := screenCostOf(t, "corporation_dashboard")
	if st := g.stats(t); !maps.Equal(map[string]int(want), st.Routes) {
		t.Errorf("the deferred dashboard cost %d upstream calls %v; the undeferred one costs %d: %v", st.Total, st.Routes, want.total(), want)
	}
}

// screenCostOf is the counted cost of a screen of screens_test.go.
func screenCostOf(t *testing.T, name string) screenCost {
	t.Helper()
	for _, s := range screens {
		if s.name == name {
			return s.cost
		}
	}
	t.Fatalf("no screen %q", name)
	return nil
}

const (
	walletCards         = `{ currentCorporation { wallets { id cards { id displayName } } } }`
	walletCardsDeferred = `query($d: Boolean = true) { currentCorporation { wallets { id ... @defer(if: $d, label: "cards") { cards { id displayName } } } } }`
)

// TestDeferredLabelIfAndOneJSONAnswer: without multipart/mixed in Accept, a
// deferred query is one JSON answer with the same data as the undeferred
// query; with it, @defer(if: false) is one part with everything, and two
// labelled fragments arrive as parts with their own labels and paths.
func TestDeferredLabelIfAndOneJSONAnswer(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))

	var plain, merged any
	anna.query(t, walletCards, nil).decode(t, &plain)
	anna.query(t, walletCardsDeferred, nil).decode(t, &merged)
	if !reflect.DeepEqual(plain, merged) {
		a, _ := json.Marshal(plain)
		b, _ := json.Marshal(merged)
		t.Errorf("a deferred query as one JSON answer differs from the undeferred one:\n %s\n %s", b, a)
	}

	parts := anna.postMultipart(t, context.Background(), walletCardsDeferred, map[string]any{"d": false}).rest(t)
	if len(parts) != 1 {
		t.Fatalf("@defer(if: false) answered %d parts, want 1", len(parts))
	}
	var one any
	if err := json.Unmarshal(parts[0].Data, &one); err != nil || !reflect.DeepEqual(one, plain) {
		t.Errorf("@defer(if: false) answered %s", parts[0].Data)
	}

	// A query without @defer is one JSON answer to a client that accepts
	// multipart/mixed too (GraphiQL asks for it with every operation).
	body, _ := json.Marshal(map[string]any{"query": walletCards})
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, multipart/mixed")
	req.Header.Set("Authorization", "Bearer "+anna.bearer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var one2 gqlResponse
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") || json.Unmarshal(raw, &one2) != nil || len(one2.Errors) > 0 {
		t.Errorf("a query without @defer, multipart accepted: %s %s", ct, raw)
	}

	// A deferred named fragment, as Relay writes it.
	spread := anna.postMultipart(t, context.Background(), `query { currentCorporation { id ...People @defer(label: "people") } }
	fragment People on Corporation { persons { id } }`, nil).rest(t)
	if len(spread) != 2 || len(spread[1].Incremental) != 1 || spread[1].Incremental[0].Label != "people" {
		t.Errorf("a deferred fragment spread answered %+v", spread)
	}

	const twoLabels = `{ currentCorporation { id
	  ... @defer(label: "people") { persons { id } }
	  ... @defer(label: "money") { invoices { id } }
	} }`
	labels := map[string]int{}
	for _, p := range anna.postMultipart(t, context.Background(), twoLabels, nil).rest(t)[1:] {
		for _, inc := range p.Incremental {
			labels[inc.Label]++
			if !reflect.DeepEqual(inc.Path, []any{"currentCorporation"}) {
				t.Errorf("part %q at %v, want [currentCorporation]", inc.Label, inc.Path)
			}
		}
	}
	if !maps.Equal(labels, map[string]int{"people": 1, "money": 1}) {
		t.Errorf("labelled parts %v, want people and money once each", labels)
	}
}

// TestDeferredPartCarriesItsOwnError: when the card listing fails, each
// wallet's deferred part carries the error on its path, and the first part
// has none.
func TestDeferredPartCarriesItsOwnError(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": routeCards, "error_rate": 1, "status": 500}, nil)

	parts := anna.postMultipart(t, context.Background(), walletCardsDeferred, nil).rest(t)
	if len(parts) < 2 {
		t.Fatalf("%d parts", len(parts))
	}
	if len(parts[0].Errors) > 0 {
		t.Errorf("the first part carries the deferred fragment's errors: %+v", parts[0].Errors)
	}
	withError := 0
	for _, p := range parts[1:] {
		for _, inc := range p.Incremental {
			if len(inc.Errors) == 0 {
				continue
			}
			withError++
			e := inc.Errors[0]
			if len(e.Path) != 4 || e.Path[3] != "cards" || e.Extensions["code"] == "" || e.Extensions["code"] == "INTERNAL" {
				t.Errorf("deferred error %+v", e)
			}
		}
	}
	if withError == 0 {
		t.Error("no deferred part carries the card listing's failure")
	}
}

// TestDeferredOverSSEAndWebsocket: over server-sent events and
// graphql-transport-ws, a deferred query is several next payloads, the
// first with hasNext true, the last with hasNext false, then complete.
func TestDeferredOverSSEAndWebsocket(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))

	check := func(transport string, payloads []incrementalPart) {
		t.Helper()
		if len(payloads) < 2 {
			t.Fatalf("%s: %d payloads, want the first and the deferred ones", transport, len(payloads))
		}
		labels := 0
		for i, p := range payloads {
			if p.HasNext == nil || *p.HasNext != (i < len(payloads)-1) {
				t.Errorf("%s payload %d of %d: hasNext %v", transport, i+1, len(payloads), p.HasNext)
			}
		}
		for _, p := range payloads[1:] {
			if p.Label == "cards" && len(p.Path) == 3 {
				labels++
			}
		}
		if labels != len(payloads)-1 {
			t.Errorf("%s: %d of %d later payloads labelled cards at a wallet", transport, labels, len(payloads)-1)
		}
	}

	// SSE: events until complete.
	body, _ := json.Marshal(map[string]any{"query": walletCardsDeferred})
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+anna.bearer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sse []incrementalPart
	event := readSSE(resp.Body, func(data string) {
		var p incrementalPart
		if err := json.Unmarshal([]byte(data), &p); err != nil {
			t.Fatalf("SSE data %q: %v", data, err)
		}
		sse = append(sse, p)
	})
	if event != "complete" {
		t.Errorf("the SSE stream ended after %q, want complete", event)
	}
	check("SSE", sse)

	// graphql-transport-ws: next messages until complete.
	ws := anna.dialWS(t, nil, nil)
	ws.subscribe("1", walletCardsDeferred, nil)
	var wsParts []incrementalPart
	for {
		m := ws.read()
		if m.Type == "complete" {
			break
		}
		if m.Type != "next" {
			t.Fatalf("websocket: %+v", m)
		}
		var p incrementalPart
		if err := json.Unmarshal(m.Payload, &p); err != nil {
			t.Fatal(err)
		}
		wsParts = append(wsParts, p)
	}
	check("websocket", wsParts)
}

// TestDeferredFragmentsCountAgainstLimits: depth and complexity count the
// fields of deferred fragments as any others; a trusted-documents gateway
// runs a registered deferred query over multipart and refuses an
// unregistered one.
func TestDeferredFragmentsCountAgainstLimits(t *testing.T) {
	t.Parallel()
	g := startGateway(t, "-limits", "depth=3,complexity=10")
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	if r := anna.query(t, `{ currentCorporation { id } }`, nil); len(r.Errors) > 0 {
		t.Fatalf("a shallow query: %+v", r.Errors)
	}
	for want, q := range map[string]string{
		"levels deep":    `{ currentCorporation { id ... @defer { wallets { balance { amount } } } } }`,
		"has complexity": `{ currentCorporation { id ... @defer { wallets { id name currency } persons { id firstName } invoices { id } } } }`,
	} {
		r := anna.query(t, q, nil)
		if r.code() != "BAD_USER_INPUT" || !strings.Contains(r.Errors[0].Message, want) {
			t.Errorf("%q beyond the limit inside @defer: %+v, want refused", want, r.Errors)
		}
	}

	hash := func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }
	manifest, _ := json.Marshal(map[string]any{"format": "apollo-persisted-query-manifest", "version": 1,
		"operations": []map[string]any{
			{"id": hash(walletCardsDeferred), "name": "WalletCards", "type": "query", "body": walletCardsDeferred},
			{"id": hash(signInMutation), "name": "SignIn", "type": "mutation", "body": signInMutation},
		}})
	path := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(path, manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	tg := startGateway(t, "-trusted-documents", path)
	tanna := tg.as(tg.signInPerson(t, "anna@demo.test"))
	if parts := tanna.postMultipart(t, context.Background(), walletCardsDeferred, nil).rest(t); len(parts) < 2 {
		t.Errorf("a trusted deferred query answered %d parts", len(parts))
	}
	r := tanna.query(t, `{ currentCorporation { id ... @defer { wallets { id } } } }`, nil)
	if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["reason"] != "UNTRUSTED_DOCUMENT" {
		t.Errorf("an untrusted deferred query: %+v", r.Errors)
	}
}

// TestDeferredFieldsKeepTheAccessPolicy: a field the viewer may not read
// is refused inside a deferred fragment as outside one, in its own part.
func TestDeferredFieldsKeepTheAccessPolicy(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	parts := anna.postMultipart(t, context.Background(), `{ currentCorporation { id ... @defer(label: "keys") { apiKeys { id } } } }`, nil).rest(t)
	var errs []gqlError
	for _, p := range parts {
		errs = append(errs, p.Errors...)
		for _, inc := range p.Incremental {
			errs = append(errs, inc.Errors...)
			if bytes.Contains(inc.Data, []byte(`"apiKeys":[`)) {
				t.Errorf("a person read the API keys in a deferred part: %s", inc.Data)
			}
		}
	}
	if len(errs) == 0 || errs[0].Extensions["code"] != "FORBIDDEN" {
		t.Errorf("a person's deferred apiKeys: errors %+v, want FORBIDDEN", errs)
	}
}

// TestCancellingADeferredQueryStopsItsWork: a client that goes away after
// the first part ends the deferred upstream reads (the held card listing is
// cancelled) and none is answered.
func TestCancellingADeferredQueryStopsItsWork(t *testing.T) {
	t.Parallel()
	gate := newUpstreamGate(cardRoutes)
	g := startGatewayWith(t, sandboxBehind(gate.wrap))
	anna := g.as(g.signInPerson(t, "anna@demo.test"))

	gate.close()
	defer gate.release()
	ctx, cancel := context.WithCancel(context.Background())
	s := anna.postMultipart(t, ctx, walletCardsDeferred, nil)
	if _, ok := s.next(t); !ok {
		t.Fatal("no first part")
	}
	// Wait until the deferred work has reached the upstream, then go away.
	waitFor(t, "a deferred card read held at the upstream", func() bool { held, _ := gate.counts(); return held > 0 })
	cancel()
	waitFor(t, "the held card read cancelled", func() bool { return gate.cancelledCount() > 0 })
	if _, through := gate.counts(); through != 0 {
		t.Errorf("%d card reads answered after the client went away", through)
	}
}

// waitFor polls cond until it holds; the deadline only bounds a hung test.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
