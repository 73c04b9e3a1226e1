package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawResponse is an answer to a hand-built request.
type rawResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r rawResponse) decode(t testing.TB) gqlResponse {
	t.Helper()
	var out gqlResponse
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatalf("answer %d %q is not a GraphQL response: %v", r.Status, r.Body, err)
	}
	return out
}

// raw sends a request to /graphql exactly as given.
func (g *testGateway) raw(t testing.TB, method, contentType string, body []byte, h http.Header) rawResponse {
	t.Helper()
	req, _ := http.NewRequest(method, g.URL+"/graphql", bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := g.http.Do(req)
	if err != nil {
		t.Fatalf("%s /graphql: %v", method, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResponse{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// logLevels counts a gateway's log lines per level.
func logLevels(logs string) map[string]int {
	n := map[string]int{}
	for _, line := range strings.Split(logs, "\n") {
		var l struct {
			Level string `json:"level"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Level != "" {
			n[l.Level]++
		}
	}
	return n
}

// Defects issue, items 1 and 9: a bad request is the client's fault. It gets
// a 4xx with BAD_USER_INPUT, nothing of the body is echoed or logged, and
// nothing is logged at ERROR.
func TestBadRequestsAreClientErrorsAndNeverLogged(t *testing.T) {
	g := startGateway(t)
	const password = "Leak-Check-Passw0rd-7f3a"
	const cardToken = "tok_ok_leakcheck7f3a"
	seenSecrets.add("test password", password)
	seenSecrets.add("test card token", cardToken)
	signIn := `{"query":"mutation { signIn(input: {kind: PERSON, email: \"anna@demo.test\", password: \"` + password + `\"}) { __typename } }",}`
	card := `{"query":"mutation($t: String!) { addPaymentMethod(input: {customerId: \"c\", token: $t}) { __typename } }","variables":{"t":"` + cardToken + `"},}`
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	deepVars := `{"query":"{ __typename }","variables":{"v":` + strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000) + `}}`
	huge := `{"query":"{ __typename }","variables":{"pad":"` + strings.Repeat("x", 2<<20) + `"}}`

	cases := []struct {
		name, method, contentType, body string
		header                          http.Header
		status                          int
	}{
		{"trailing comma carrying a password", http.MethodPost, "application/json", signIn, nil, 400},
		{"trailing comma carrying a card token", http.MethodPost, "application/json", card, nil, 400},
		{"malformed over SSE", http.MethodPost, "application/json", signIn, http.Header{"Accept": {"text/event-stream"}}, 400},
		{"empty body", http.MethodPost, "application/json", "", nil, 400},
		{"whitespace body", http.MethodPost, "application/json", " \n ", nil, 400},
		{"batched array", http.MethodPost, "application/json", `[{"query":"{ __typename }"}]`, nil, 400},
		{"not an object", http.MethodPost, "application/json", `"{ __typename }"`, nil, 400},
		{"over-deep JSON", http.MethodPost, "application/json", deep, nil, 400},
		{"over-deep variables", http.MethodPost, "application/json", deepVars, nil, 400},
		{"query of the wrong type", http.MethodPost, "application/json", `{"query": 42}`, nil, 400},
		{"trailing data", http.MethodPost, "application/json", `{"query":"{ __typename }"} {"query":"x"}`, nil, 400},
		{"body over the limit", http.MethodPost, "application/json", huge, nil, 413},
		{"unsupported content type", http.MethodPost, "text/plain", `{"query":"{ __typename }"}`, nil, 415},
		{"unsupported method", http.MethodPut, "application/json", `{"query":"{ __typename }"}`, nil, 405},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := g.raw(t, tc.method, tc.contentType, []byte(tc.body), tc.header)
			if r.Status != tc.status {
				t.Errorf("status %d, want %d (%s)", r.Status, tc.status, r.Body)
			}
			if code := r.decode(t).code(); code != "BAD_USER_INPUT" {
				t.Errorf("code %q, want BAD_USER_INPUT: %s", code, r.Body)
			}
			for _, s := range []string{password, cardToken, "anna@demo.test"} {
				if bytes.Contains(r.Body, []byte(s)) {
					t.Errorf("the answer echoes the body: %s", r.Body)
				}
			}
		})
	}

	t.Run("a mutation over GET", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, g.URL+"/graphql?query="+urlQuery(`mutation { signOut }`), nil)
		resp, err := g.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusMethodNotAllowed || (rawResponse{Body: b}).decode(t).code() != "BAD_USER_INPUT" {
			t.Errorf("GET mutation: %d %s", resp.StatusCode, b)
		}
	})
	t.Run("bad event names", func(t *testing.T) {
		g := g.as(g.signInAPI(t))
		ws := g.dialWS(t, nil, nil)
		ws.subscribe("1", `subscription { events(names: ["a b"]) { cursor } }`, nil)
		m := ws.read()
		if m.Type != "error" && m.Type != "next" {
			t.Fatalf("want an error, got %s %s", m.Type, m.Payload)
		}
		if !strings.Contains(string(m.Payload), "BAD_USER_INPUT") {
			t.Errorf("bad event name: %s", m.Payload)
		}
	})

	logs := g.Logs.String()
	for _, s := range []string{password, cardToken, "anna@demo.test", "xxxxxxxxxxxxxxxx"} {
		if strings.Contains(logs, s) {
			t.Errorf("the log carries %q from a request body", s)
		}
	}
	if n := logLevels(logs)["ERROR"]; n > 0 {
		t.Errorf("client faults logged %d lines at ERROR:\n%s", n, logs)
	}
}

func urlQuery(s string) string {
	return strings.NewReplacer(" ", "%20", "{", "%7B", "}", "%7D").Replace(s)
}

// Defects issue, item 12: a client trickling its body cannot hold a
// connection for as long as it likes: the read deadline cuts it. What is
// counted is how much of the body the server took before it answered, not
// how long it took.
func TestATrickledBodyIsCut(t *testing.T) {
	g := startGateway(t, "-read-timeout", "300ms")
	conn, err := net.Dial("tcp", strings.TrimPrefix(g.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const total = 200 // bytes, one every 50 ms: 10 s if the server let it
	if _, err := io.WriteString(conn, "POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	answered := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(conn)
		answered <- string(b)
	}()
	sent := 0
	for ; sent < total; sent++ {
		select {
		case a := <-answered:
			if !strings.HasPrefix(a, "HTTP/1.1 400") && a != "" {
				t.Errorf("a trickled body got %q", a)
			}
			return
		default:
		}
		if _, err := conn.Write([]byte(" ")); err != nil {
			return // the server closed the connection
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the server read all %d trickled bytes without cutting the request", sent)
}

// Defects issue, item 8: without FINGRAPH_ALLOWED_ORIGINS no origin but the
// gateway's own may read answers with credentials.
func TestCORSAllowsNoForeignOriginByDefault(t *testing.T) {
	g := startGateway(t)
	pre, _ := http.NewRequest(http.MethodOptions, g.URL+"/graphql", nil)
	pre.Header.Set("Origin", "https://evil.example")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	pre.Header.Set("Access-Control-Request-Headers", "content-type")
	resp, err := g.http.Do(pre)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if v := resp.Header.Get("Access-Control-Allow-Origin"); v != "" {
		t.Errorf("preflight from a foreign origin allowed: %q", v)
	}
	r := g.raw(t, http.MethodPost, "application/json", []byte(`{"query":"{ __typename }"}`), http.Header{"Origin": {"https://evil.example"}})
	if v := r.Header.Get("Access-Control-Allow-Origin"); v != "" {
		t.Errorf("answer to a foreign origin carries Access-Control-Allow-Origin: %q", v)
	}
	if v := r.Header.Get("Access-Control-Allow-Credentials"); v != "" {
		t.Errorf("answer to a foreign origin carries Access-Control-Allow-Credentials: %q", v)
	}

	allowed := startGateway(t, "-allowed-origins", "https://app.example")
	r = allowed.raw(t, http.MethodPost, "application/json", []byte(`{"query":"{ __typename }"}`), http.Header{"Origin": {"https://app.example"}})
	if v := r.Header.Get("Access-Control-Allow-Origin"); v != "https://app.example" {
		t.Errorf("a configured origin is not allowed: %q", v)
	}
}

// Defects issue, item 12, the other half: the read deadline bounds reading a
// request, never a subscription. An SSE stream and a websocket opened before
// the deadline passes still deliver an event after it.
func TestSubscriptionsOutliveTheReadDeadline(t *testing.T) {
	g := liveGateway(t, "-read-timeout", "200ms")
	g = g.as(g.signInAPI(t))
	const sub = `subscription($after: String) { events(names: ["IndividualActivated"], after: $after) ` + liveFields + ` }`
	after := g.cursorNow(t)

	ws := g.dialWS(t, nil, nil)
	ws.subscribe("1", sub, map[string]any{"after": after})

	resp := g.openSSE(t, sub, map[string]any{"after": after})
	// A GET stream too (EventSource): its operation is in the URL.
	get := g.getStream(t, nil, sub, map[string]any{"after": after})
	wantEventStream(t, get)

	time.Sleep(time.Second) // every connection is now past the read deadline
	var ev sandboxEvent
	g.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "IndividualActivated"}, &ev)

	if e := ws.next("1", "events"); e.Event.UpstreamID != ev.ID {
		t.Errorf("websocket: want %s, got %+v", ev.ID, e)
	}
	for name, body := range map[string]io.Reader{"SSE": resp.Body, "SSE over GET": get.Body} {
		sc := bufio.NewScanner(body)
		got := false
		for !got && sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || line == "" {
				continue
			}
			if !strings.Contains(line, ev.ID) {
				t.Fatalf("%s: want %s, got %s", name, ev.ID, line)
			}
			got = true
		}
		if !got {
			t.Errorf("the %s stream ended without the event: %v", name, sc.Err())
		}
	}
}
