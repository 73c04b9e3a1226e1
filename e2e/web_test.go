package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// get fetches a gateway path and returns status, headers and body.
func (g *testGateway) get(t *testing.T, path string) (int, http.Header, string) {
	t.Helper()
	resp, err := g.http.Get(g.URL + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// The playground and the dashboard are served from the binary, and load
// nothing from another origin: every script and stylesheet they name is a
// path on the gateway that answers 200, and the pages forbid the rest.
func TestPagesAreServedFromTheBinary(t *testing.T) {
	g := startGateway(t)
	for _, page := range []string{"/", "/dashboard"} {
		status, h, body := g.get(t, page)
		if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			t.Fatalf("GET %s: %d %s", page, status, h.Get("Content-Type"))
		}
		if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'self'") || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: security headers missing: %v", page, h)
		}
		if strings.Contains(body, "//cdn") || strings.Contains(body, "https://") {
			t.Errorf("GET %s names another origin:\n%s", page, body)
		}
		refs := 0
		for _, attr := range []string{`src="`, `href="`} {
			for _, part := range strings.Split(body, attr)[1:] {
				ref := part[:strings.IndexByte(part, '"')]
				if strings.HasPrefix(ref, "data:") {
					continue // inline, fetches nothing
				}
				if strings.HasPrefix(ref, g.SandboxURL+"/_sandbox/") {
					continue // a link to the sandbox's outboxes: navigation, loads nothing
				}
				refs++
				if s, _, _ := g.get(t, ref); s != http.StatusOK {
					t.Errorf("%s references %s, which answers %d", page, ref, s)
				}
			}
		}
		if refs < 2 {
			t.Errorf("%s references %d assets, want its script and stylesheet", page, refs)
		}
	}
	status, _, bundle := g.get(t, "/playground/dist/playground.js")
	if status != http.StatusOK || !strings.Contains(bundle, "graphql-transport-ws") {
		t.Errorf("the playground bundle does not carry graphql-ws (status %d)", status)
	}
	// The playground opens on its first tab: the README's first query,
	// which runs without signing in, not the sign-in mutation.
	if first, signIn := strings.Index(bundle, "query Customers"), strings.Index(bundle, "mutation SignIn"); first < 0 || signIn >= 0 && signIn < first {
		t.Errorf("the playground's first tab is not the README's query (Customers at %d, SignIn at %d)", first, signIn)
	}
	for _, path := range []string{"/playground/dist/", "/dashboard/index.html", "/nothing-here"} {
		if status, _, _ := g.get(t, path); status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, status)
		}
	}
}

// /schema.graphql is the executable schema as SDL: it parses, and it has
// what introspection reports. It is served only when introspection is on.
func TestSchemaIsPublishedAsSDLWithIntrospection(t *testing.T) {
	g := startGateway(t, "-introspection=true")
	status, h, sdl := g.get(t, "/schema.graphql")
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /schema.graphql: %d %s", status, h.Get("Content-Type"))
	}
	schema, err := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphql", Input: sdl})
	if err != nil {
		t.Fatalf("the published SDL does not load: %v", err)
	}
	var d struct {
		Schema struct {
			Types []struct {
				Name   string `json:"name"`
				Fields []struct {
					Name string `json:"name"`
				} `json:"fields"`
			} `json:"types"`
		} `json:"__schema"`
	}
	g.queryAs(t, g.signInAPI(t), `{ __schema { types { name fields(includeDeprecated: true) { name } } } }`, nil).decode(t, &d)
	if len(d.Schema.Types) < 50 {
		t.Fatalf("introspection gave %d types", len(d.Schema.Types))
	}
	for _, typ := range d.Schema.Types {
		def := schema.Types[typ.Name]
		if def == nil {
			t.Errorf("type %s is missing from the SDL", typ.Name)
			continue
		}
		for _, f := range typ.Fields {
			if def.Fields.ForName(f.Name) == nil {
				t.Errorf("field %s.%s is missing from the SDL", typ.Name, f.Name)
			}
		}
	}
	if _, _, again := g.get(t, "/schema.graphql"); again != sdl {
		t.Error("the SDL is not the same on every request")
	}

	off := startGateway(t, "-introspection=false")
	if status, _, _ := off.get(t, "/schema.graphql"); status != http.StatusNotFound {
		t.Errorf("with introspection off /schema.graphql answers %d, want 404", status)
	}
}

// POST /sandbox/trigger fires a sandbox event for the dashboard: it needs a
// session and a JSON body naming one of the sandbox's trigger events, and
// the event is the upstream's own. The route is registered only with an
// in-process sandbox, never in front of real upstreams.
func TestSandboxTriggerRoute(t *testing.T) {
	g := startGateway(t)
	post := func(token, ct, body string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/sandbox/trigger", bytes.NewBufferString(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := g.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	code := func(out map[string]any) string {
		errs, _ := out["errors"].([]any)
		if len(errs) == 0 {
			return ""
		}
		ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
		s, _ := ext["code"].(string)
		return s
	}
	if resp, err := g.http.Get(g.URL + "/sandbox/trigger"); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /sandbox/trigger: %v %v, want 405", err, resp.StatusCode)
	} else {
		resp.Body.Close()
	}
	if s, out := post("", "application/json", `{"name":"IndividualActivated"}`); s != http.StatusUnauthorized || code(out) != "UNAUTHENTICATED" {
		t.Errorf("signed out: %d %v", s, out)
	}
	tok := g.signInAPI(t)
	if s, out := post(tok, "application/x-www-form-urlencoded", `name=IndividualActivated`); s != http.StatusUnsupportedMediaType || code(out) != "BAD_USER_INPUT" {
		t.Errorf("form body: %d %v", s, out)
	}
	// Every payments event that `fingraph trigger --list` names is taken;
	// anything else is refused before the sandbox sees it.
	for _, body := range []string{`{"name":"OrderShipped"}`, `{"name":""}`, `not json`, `{"name":["x"]}`} {
		if s, out := post(tok, "application/json", body); s != http.StatusBadRequest || code(out) != "BAD_USER_INPUT" {
			t.Errorf("%s: %d %v", body, s, out)
		}
	}
	if s, out := post(tok, "application/json", `{"name":"OrderCaptured"}`); s != http.StatusOK || out["name"] != "OrderCaptured" {
		t.Errorf("OrderCaptured, a name trigger --list gives: %d %v", s, out)
	}
	s, out := post(tok, "application/json; charset=utf-8", `{"name":"IndividualActivated"}`)
	if s != http.StatusOK && s != http.StatusCreated {
		t.Fatalf("trigger: %d %v", s, out)
	}
	if out["name"] != "IndividualActivated" || out["id"] == "" {
		t.Fatalf("trigger answered %v", out)
	}
	var ev struct {
		Event *struct {
			Name string `json:"name"`
		} `json:"event"`
	}
	g.queryAs(t, tok, `query($id: ID!) { event(id: $id) { name } }`, map[string]any{"id": out["id"]}).decode(t, &ev)
	if ev.Event == nil || ev.Event.Name != "IndividualActivated" {
		t.Errorf("the upstream does not know the fired event: %+v", ev.Event)
	}
}
