package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// These tests count what the banking edges of a corporation cost upstream,
// in the sandbox's per-route counters.

// getCalls sums the GET calls the sandbox served on banking routes whose
// pattern ends in suffix.
func getCalls(s sandboxStats, suffix string) int {
	n := 0
	for route, c := range s.Routes {
		if strings.HasPrefix(route, "GET /banking/") && strings.HasSuffix(route, suffix) {
			n += c
		}
	}
	return n
}

func TestCorporationSettingsAndAPIKeysAreBatchedPerCorporation(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	staff := g.as(g.signInStaff(t))

	g.resetStats(t)
	var d struct {
		Corporations struct {
			Items nodes[struct {
				ID       string `json:"id"`
				Settings struct {
					CorporationID      string   `json:"corporationId"`
					AllowedPersonTypes []string `json:"allowedPersonTypes"`
				} `json:"settings"`
				APIKeys []struct {
					ID string `json:"id"`
				} `json:"apiKeys"`
			}] `json:"edges"`
		} `json:"corporations"`
	}
	staff.query(t, `{ corporations { edges { node { id settings { corporationId allowedPersonTypes } apiKeys { id } } } } }`, nil).decode(t, &d)
	n := len(d.Corporations.Items)
	if n < 2 {
		t.Fatalf("staff sees %d corporations, want the two seeded", n)
	}
	for _, c := range d.Corporations.Items {
		if c.Settings.CorporationID != c.ID || len(c.Settings.AllowedPersonTypes) == 0 {
			t.Errorf("corporation %s has settings %+v", c.ID, c.Settings)
		}
		if rawID(c.ID) == demoCorpID && len(c.APIKeys) == 0 {
			t.Errorf("the demo corporation's API keys are missing")
		}
	}
	s := g.stats(t)
	if getCalls(s, "/corporations") != 1 || getCalls(s, "/settings") != n || getCalls(s, "/api-keys") != n || s.Total != 1+2*n {
		t.Errorf("%d corporations with settings and keys cost %v; want one listing and one settings and one keys call per corporation", n, s.Routes)
	}

	// The same corporation asked for several times costs its calls once.
	g.resetStats(t)
	resp := staff.query(t, `{
  a: corporation(id: "`+demoCorpID+`") { settings { corporationId } apiKeys { id } }
  b: corporation(id: "`+demoCorpID+`") { settings { allowedPersonTypes } apiKeys { name } }
  c: corporation(id: "`+secondCorpID+`") { apiKeys { id } }
}`, nil)
	if len(resp.Errors) > 0 {
		t.Fatalf("errors: %+v", resp.Errors)
	}
	s = g.stats(t)
	if getCalls(s, "/corporations") != 1 || getCalls(s, "/settings") != 1 || getCalls(s, "/api-keys") != 2 || s.Total != 4 {
		t.Errorf("three aliases over two corporations cost %v; want one listing, one settings call, two keys calls", s.Routes)
	}
}

func TestCorporationWithMoreThanAPageOfPersons(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	const extra = 101
	created := g.createPersonsUpstream(t, extra)
	total := g.upstreamPersonCount(t)
	if total < extra+1 {
		t.Fatalf("the sandbox lists %d persons after creating %d", total, extra)
	}
	api := g.as(g.signInAPI(t))

	g.resetStats(t)
	var d struct {
		Corporation struct {
			ID      string `json:"id"`
			Persons []struct {
				ID          string `json:"id"`
				Corporation struct {
					ID string `json:"id"`
				} `json:"corporation"`
			} `json:"persons"`
		} `json:"corporation"`
	}
	api.query(t, `{ corporation(id: "`+demoCorpID+`") { id persons { id corporation { id } } } }`, nil).decode(t, &d)
	got := map[string]bool{}
	for _, p := range d.Corporation.Persons {
		got[rawID(p.ID)] = true
		if rawID(p.Corporation.ID) != demoCorpID {
			t.Errorf("person %s points at corporation %q", p.ID, p.Corporation.ID)
		}
	}
	if len(d.Corporation.Persons) != total || len(got) != total {
		t.Errorf("corporation.persons has %d persons (%d distinct); the upstream lists %d", len(d.Corporation.Persons), len(got), total)
	}
	for _, id := range created {
		if !got[id] {
			t.Fatalf("created person %s is missing: the listing was read only in part", id)
		}
	}
	pages := (total + 99) / 100
	s := g.stats(t)
	if getCalls(s, "/persons") != pages || getCalls(s, "/corporations") != 1 || s.Total != pages+1 {
		t.Errorf("%d persons cost %v; want %d person pages and one corporation listing", total, s.Routes, pages)
	}

	// Staff see every corporation's persons: one read of every page for all
	// of them, whatever the number of corporations.
	staff := g.as(g.signInStaff(t))
	g.resetStats(t)
	var c struct {
		Corporations struct {
			Items nodes[struct {
				ID      string `json:"id"`
				Persons []struct {
					ID string `json:"id"`
				} `json:"persons"`
			}] `json:"edges"`
		} `json:"corporations"`
	}
	staff.query(t, `{ corporations { edges { node { id persons { id } } } } }`, nil).decode(t, &c)
	all := 0
	for _, corp := range c.Corporations.Items {
		all += len(corp.Persons)
		if rawID(corp.ID) == demoCorpID && len(corp.Persons) != total {
			t.Errorf("staff see %d persons of the demo corporation, want %d", len(corp.Persons), total)
		}
	}
	s = g.stats(t)
	if want := (all + 99) / 100; getCalls(s, "/persons") != want || getCalls(s, "/corporations") != 1 {
		t.Errorf("%d persons of %d corporations cost %v; want %d person pages and one corporation listing", all, len(c.Corporations.Items), s.Routes, want)
	}
}

// upstreamCall calls the sandbox's banking interface directly, as its own
// client would, and returns the decoded answer and the refreshed token.
func (g *testGateway) upstreamCall(t *testing.T, method, path, token string, body any) (map[string]any, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, g.SandboxURL+"/banking/v2/"+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("x-access-token", token)
	}
	resp, err := g.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
	}
	return out, resp.Header.Get("x-access-token")
}

// apiToken signs the demo API client in at the sandbox itself.
func (g *testGateway) apiToken(t *testing.T) string {
	t.Helper()
	out, _ := g.upstreamCall(t, http.MethodPost, "api/signin", "", map[string]any{"apiKey": "demo-api-key"})
	tok, _ := out["token"].(string)
	if tok == "" {
		t.Fatalf("api sign-in at the sandbox answered %v", out)
	}
	return tok
}

// createPersonsUpstream creates n employees of the demo corporation at the
// sandbox, as its API client, and returns their ids.
func (g *testGateway) createPersonsUpstream(t *testing.T, n int) []string {
	t.Helper()
	tok := g.apiToken(t)
	ids := make([]string, 0, n)
	for i := range n {
		p, fresh := g.upstreamCall(t, http.MethodPost, "persons", tok, map[string]any{
			"first_name": fmt.Sprintf("Bulk%03d", i), "last_name": "Person", "gender": "female",
			"email": fmt.Sprintf("%s-%d@bulk.test", uniq("p"), i), "type": "employee",
		})
		if fresh != "" {
			tok = fresh
		}
		id, _ := p["id"].(string)
		if id == "" {
			t.Fatalf("create person %d answered %v", i, p)
		}
		ids = append(ids, id)
	}
	return ids
}

// upstreamPersonCount is how many persons the demo API client sees, by the
// sandbox's own count.
func (g *testGateway) upstreamPersonCount(t *testing.T) int {
	t.Helper()
	out, _ := g.upstreamCall(t, http.MethodGet, "persons?meta%5Blimit%5D=1", g.apiToken(t), nil)
	meta, _ := out["meta"].(map[string]any)
	n, _ := meta["number_of_records"].(float64)
	return int(n)
}
