package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// levelGate sits in front of the sandbox and, once armed, holds the calls
// that holds picks (by default the banking calls that carry an access
// token) until want of them have arrived: the held calls are answered only
// when all want are in flight at once. A screen whose calls form one level
// passes through; a screen with a call that waits for another's answer
// never reaches want, and the gate gives up after guard, records it, and
// lets the calls go so that the test fails rather than hangs. guard is a
// deadlock guard, not a time limit on the gateway: a passing run never
// waits for it.
type levelGate struct {
	want  int
	guard time.Duration
	holds func(*http.Request) bool // nil: bankingWithToken

	mu       sync.Mutex
	armed    bool
	arrived  int
	open     chan struct{}
	routes   []string
	timedOut bool
}

func (g *levelGate) arm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed, g.arrived, g.open, g.routes, g.timedOut = true, 0, make(chan struct{}), nil, false
}

// result disarms the gate and reports how many calls had arrived when the
// first was released (want when the gate opened) and whether it gave up.
func (g *levelGate) result() (arrived int, routes []string, timedOut bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = false
	return g.arrived, g.routes, g.timedOut
}

func (g *levelGate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		holds := g.holds
		if holds == nil {
			holds = bankingWithToken
		}
		if !g.armed || !holds(r) {
			g.mu.Unlock()
			next.ServeHTTP(w, r)
			return
		}
		open := g.open
		select {
		case <-open: // the level is complete: later calls pass
		default:
			g.arrived++
			g.routes = append(g.routes, r.Method+" "+r.URL.Path)
			if g.arrived == g.want {
				close(open)
			}
		}
		g.mu.Unlock()
		select {
		case <-open:
		case <-time.After(g.guard):
			g.mu.Lock()
			if !g.timedOut {
				g.timedOut = true
				close(open)
			}
			g.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// bankingWithToken is a banking call made with a session's access token.
func bankingWithToken(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/banking/") && r.Header.Get("x-access-token") != ""
}

// The corporation dashboard's banking calls, as the sandbox's stats name
// them: the corporation, its settings, its wallets (with their
// requisites), the person listing (persons and cardholders) and the card
// listing. None needs another's answer: the session knows the corporation's
// id from the sign-in.
var dashboardCalls = map[string]int{
	routeCurrentCorporation:                      1,
	"GET /banking/v2/corporations/{id}/settings": 1,
	routeWallets: 1,
	routePersons: 1,
	routeCards:   1,
}

// TestDashboardBankingCallsAreOneLevel: the corporation dashboard
// (bench/floor/dashboard.graphql) sends its 5 banking calls all at once,
// for a person and for an API client, none waiting for
// /corporations/current to learn the corporation's id: a REST client
// that signed in knows the id, and so does the session.
func TestDashboardBankingCallsAreOneLevel(t *testing.T) {
	t.Parallel()
	gate := &levelGate{want: 5, guard: 5 * time.Second}
	g := startGatewayWith(t, sandboxBehind(gate.wrap))
	dashboard, err := os.ReadFile("../bench/floor/dashboard.graphql")
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []struct{ name, token string }{
		{"person", g.signInPerson(t, "anna@demo.test")},
		{"api client", g.signInAPI(t)},
	} {
		t.Run(who.name, func(t *testing.T) {
			g.resetStats(t)
			gate.arm()
			r := g.as(who.token).query(t, string(dashboard), nil)
			arrived, routes, timedOut := gate.result()
			if len(r.Errors) > 0 {
				t.Fatalf("dashboard: %+v", r.Errors)
			}
			if timedOut {
				t.Fatalf("only %d of the dashboard's %d banking calls were in flight together (%v): "+
					"the others waited for an answer", arrived, gate.want, routes)
			}
			if s := g.stats(t); !maps.Equal(s.Routes, dashboardCalls) {
				t.Errorf("the dashboard cost %d upstream calls %v; want %v", s.Total, s.Routes, dashboardCalls)
			}
			var d struct {
				CurrentCorporation struct {
					ID       string `json:"id"`
					Name     string `json:"name"`
					Settings struct {
						AllowedPersonTypes []string `json:"allowedPersonTypes"`
					} `json:"settings"`
					Persons []struct{ ID string } `json:"persons"`
					Wallets []struct {
						Requisites []struct{ ID string } `json:"requisites"`
					} `json:"wallets"`
					Cards []struct {
						Cardholder *struct{ ID string } `json:"cardholder"`
					} `json:"cards"`
				} `json:"currentCorporation"`
			}
			r.decode(t, &d)
			c := d.CurrentCorporation
			if rawID(c.ID) != demoCorpID || c.Name == "" || len(c.Settings.AllowedPersonTypes) == 0 ||
				len(c.Persons) == 0 || len(c.Wallets) == 0 || len(c.Cards) == 0 {
				t.Fatalf("dashboard: %+v", c)
			}
			for _, card := range c.Cards {
				if card.Cardholder == nil || card.Cardholder.ID == "" {
					t.Errorf("a card without its cardholder: %+v", c.Cards)
				}
			}
		})
	}
}

// TestCurrentCorporationRefusedIsOneErrorOnItsPath: when the upstream
// refuses /corporations/current, the corporation's children, whose reads
// started before its answer, add nothing to the response: one error, the
// upstream's, on the corporation's own path, and the corporation null, as
// when the children waited for it.
func TestCurrentCorporationRefusedIsOneErrorOnItsPath(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	dashboard, err := os.ReadFile("../bench/floor/dashboard.graphql")
	if err != nil {
		t.Fatal(err)
	}
	viewer := `{ viewer { corporation { id name settings { allowedPersonTypes } persons { id } wallets { id }
	  cards { id cardholder { id } } limits { id } invoices { id } kycDocuments { name } walletRequisites { id } } } }`
	for _, c := range []struct {
		status int
		code   string
	}{{http.StatusNotFound, "NOT_FOUND"}, {http.StatusForbidden, "FORBIDDEN"}} {
		g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{
			"route": routeCurrentCorporation, "error_rate": 1, "status": c.status}, nil)
		for _, q := range []struct{ query, path string }{
			{string(dashboard), "currentCorporation"},
			{viewer, "viewer.corporation"},
		} {
			t.Run(fmt.Sprintf("%d %s", c.status, q.path), func(t *testing.T) {
				r := anna.query(t, q.query, nil)
				if len(r.Errors) != 1 {
					t.Fatalf("want one error, got %+v", r.Errors)
				}
				e := r.Errors[0]
				var path []string
				for _, p := range e.Path {
					path = append(path, fmt.Sprint(p))
				}
				if strings.Join(path, ".") != q.path || r.code() != c.code {
					t.Errorf("error %+v; want %s on %s", e, c.code, q.path)
				}
				var d map[string]any
				if err := json.Unmarshal(r.Data, &d); err != nil {
					t.Fatalf("data %s: %v", r.Data, err)
				}
				if q.path == "currentCorporation" && d["currentCorporation"] != nil {
					t.Errorf("currentCorporation = %v; want null", d["currentCorporation"])
				}
				if v, _ := d["viewer"].(map[string]any); q.path == "viewer.corporation" && (v == nil || v["corporation"] != nil) {
					t.Errorf("viewer = %v; want a viewer without a corporation", d["viewer"])
				}
			})
		}
	}
	g.sandbox(t, http.MethodPost, "/_sandbox/faults", map[string]any{"route": routeCurrentCorporation, "error_rate": 0}, nil)
	if r := anna.query(t, string(dashboard), nil); len(r.Errors) > 0 {
		t.Fatalf("after the faults: %+v", r.Errors)
	}
}
