package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"testing"
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

	mu      sync.Mutex
	closed  bool
	open    chan struct{}
	held    int // requests that reached the gate while closed
	through int // matching requests answered
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
	g.closed, g.open, g.through, g.held = true, make(chan struct{}), 0, 0
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
