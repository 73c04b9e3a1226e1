package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Transports other than POST: GET, automatic persisted queries, and
// subscriptions over server-sent events.

func TestGetServesQueriesButNotMutations(t *testing.T) {
	g := startGateway(t)
	token := g.signInAPI(t)
	get := func(q string) gqlResponse {
		req, _ := http.NewRequest(http.MethodGet, g.URL+"/graphql?query="+url.QueryEscape(q), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out gqlResponse
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return out
	}
	var d customersData
	get(readmeQuery).decode(t, &d)
	if len(d.Customers) == 0 {
		t.Fatal("GET query answered no customers")
	}
	if resp := get(`mutation { cancelOrder(input: {orderId: "x"}) { orderId } }`); len(resp.Errors) == 0 {
		t.Fatal("a mutation over GET was executed")
	}
}

func TestAutomaticPersistedQueries(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	sum := sha256.Sum256([]byte(readmeQuery))
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
	send := func(body map[string]any) gqlResponse {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/graphql", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+g.bearer)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out gqlResponse
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return out
	}
	if r := send(map[string]any{"extensions": ext}); len(r.Errors) == 0 || r.Errors[0].Message != "PersistedQueryNotFound" {
		t.Fatalf("unknown hash: %+v", r.Errors)
	}
	var d customersData
	send(map[string]any{"query": readmeQuery, "extensions": ext}).decode(t, &d)
	send(map[string]any{"extensions": ext}).decode(t, &d)
	if len(d.Customers) == 0 {
		t.Fatal("persisted query answered no customers")
	}
}

func TestSubscriptionOverServerSentEvents(t *testing.T) {
	g := liveGateway(t)
	g = g.as(g.signInAPI(t))
	// Subscribing after the current cursor makes the order of the request
	// and the trigger below irrelevant: the event is replayed if need be.
	body, _ := json.Marshal(map[string]any{
		"query":     `subscription($after: String) { events(names: ["IndividualActivated"], after: $after) ` + liveFields + ` }`,
		"variables": map[string]any{"after": g.cursorNow(t)},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+g.bearer)
	type result struct {
		resp *http.Response
		err  error
	}
	answered := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		answered <- result{resp, err}
	}()
	var ev sandboxEvent
	g.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "IndividualActivated"}, &ev)
	r := <-answered
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.resp.Body.Close()
	if !strings.HasPrefix(r.resp.Header.Get("Content-Type"), "text/event-stream") {
		raw, _ := io.ReadAll(r.resp.Body)
		t.Fatalf("not an event stream: %s %s", r.resp.Header.Get("Content-Type"), raw)
	}
	sc := bufio.NewScanner(r.resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || line == "" {
			continue
		}
		var p struct {
			Data struct {
				Events liveEvent `json:"events"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("event data %q: %v", line, err)
		}
		if p.Data.Events.Event.UpstreamID != ev.ID {
			t.Fatalf("want %s, got %+v", ev.ID, p.Data.Events)
		}
		return
	}
	t.Fatalf("stream ended without the event: %v", sc.Err())
}

func TestCORSAllowsOnlyConfiguredFrontends(t *testing.T) {
	g := startGateway(t, "-allowed-origins", "http://localhost:3000")
	preflight := func(origin string) *http.Response {
		req, _ := http.NewRequest(http.MethodOptions, g.URL+"/graphql", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type, x-csrf-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	ok := preflight("http://localhost:3000")
	if ok.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" || ok.Header.Get("Access-Control-Allow-Credentials") != "true" ||
		!strings.Contains(strings.ToLower(ok.Header.Get("Access-Control-Allow-Headers")), "x-csrf-token") {
		t.Errorf("allowed frontend's preflight: %v", ok.Header)
	}
	if bad := preflight("https://evil.example"); bad.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a foreign origin was allowed: %v", bad.Header)
	}
}
