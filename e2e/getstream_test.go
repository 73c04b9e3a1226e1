package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// getStream opens an operation as GET with Accept: text/event-stream, its
// query, variables and operation name in the URL (the browser's
// EventSource, graphql-sse's distinct connections, The Guild's HTTP
// executor), with header h besides g's bearer. The body stays open until
// the test ends.
func (g *testGateway) getStream(t *testing.T, h http.Header, query string, vars map[string]any) *http.Response {
	t.Helper()
	q := url.Values{"query": {query}}
	if vars != nil {
		b, _ := json.Marshal(vars)
		q.Set("variables", string(b))
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, g.URL+"/graphql?"+q.Encode(), nil)
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "text/event-stream")
	if g.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+g.bearer)
	}
	// A server that holds the headers (answering once, as JSON, at the
	// end) fails the test instead of hanging it.
	client := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 30 * time.Second}}
	t.Cleanup(client.CloseIdleConnections)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET /graphql: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sseEvent is one server-sent event.
type sseEvent struct{ id, name, data string }

// sseEvents reads the events of body onto a channel, closed when the stream
// ends.
func sseEvents(body io.Reader) <-chan sseEvent {
	ch := make(chan sseEvent, 16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(body)
		sc.Buffer(nil, 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" || ev.data != "" {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return ch
}

// nextSSE is the next event of ch within d.
func nextSSE(t *testing.T, ch <-chan sseEvent, d time.Duration) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(d):
		t.Fatalf("no event within %v", d)
	}
	return sseEvent{}
}

func wantEventStream(t *testing.T, resp *http.Response) {
	t.Helper()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("want an event stream, got %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
}

// TestSubscriptionOverGETReceivesASandboxEvent: a subscription sent as GET
// with Accept: text/event-stream, as EventSource and The Guild's HTTP
// executor send it, is an event stream that delivers a sandbox event, from
// the cursor in its URL's variables.
func TestSubscriptionOverGETReceivesASandboxEvent(t *testing.T) {
	g := liveGateway(t)
	g = g.as(g.signInAPI(t))
	const sub = `subscription($after: String) { events(names: ["OrderCreated"], after: $after) { cursor event { upstreamId name } } }`
	resp := g.getStream(t, nil, sub, map[string]any{"after": g.cursorNow(t)})
	wantEventStream(t, resp)
	evs := sseEvents(resp.Body)

	var fired sandboxEvent
	g.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "OrderCreated"}, &fired)
	ev := nextSSE(t, evs, 30*time.Second)
	var p struct {
		Data struct {
			Events struct {
				Cursor string `json:"cursor"`
				Event  struct {
					UpstreamID string `json:"upstreamId"`
					Name       string `json:"name"`
				} `json:"event"`
			} `json:"events"`
		} `json:"data"`
		Errors []gqlError `json:"errors"`
	}
	if ev.name != "next" || json.Unmarshal([]byte(ev.data), &p) != nil || len(p.Errors) > 0 {
		t.Fatalf("first event: %+v", ev)
	}
	if p.Data.Events.Event.UpstreamID != fired.ID || p.Data.Events.Cursor == "" {
		t.Fatalf("event %+v, want the sandbox's %s with a cursor", p.Data.Events, fired.ID)
	}

}

// TestLiveQueryOverGETIsAnEventStream: a query @live sent as GET with
// Accept: text/event-stream answers event: next and stays open, following
// a credit with a second answer, as it does over POST.
func TestLiveQueryOverGETIsAnEventStream(t *testing.T) {
	g := startGateway(t, livePollArgs...)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	resp := anna.getStream(t, nil, liveWallets, nil)
	wantEventStream(t, resp)
	evs := sseEvents(resp.Body)
	first := nextSSE(t, evs, 30*time.Second)
	if first.name != "next" || !strings.Contains(first.data, `"wallets"`) {
		t.Fatalf("first answer: %+v", first)
	}
	g.waitMetric(t, "fingraph_live_polls_total", atLeast(1))
	credited := g.credit(t, demoUSDWalletID, 777)
	// Still open: the credit's answer follows on the same stream.
	for {
		ev := nextSSE(t, evs, liveWait)
		if ev.name != "next" {
			t.Fatalf("after the first answer: %+v, want another next", ev)
		}
		var p struct {
			Data liveWalletsData `json:"data"`
		}
		if err := json.Unmarshal([]byte(ev.data), &p); err != nil {
			t.Fatal(err)
		}
		if p.Data.balance(t, bankingsim.DemoCorporationID, demoUSDWalletID) == credited {
			return
		}
	}
}

// TestMutationOverGETStaysRefused: a mutation is refused over GET, as an
// event stream or not, with a bearer or a cookie (which needs no CSRF token
// on GET), 405 before anything runs.
func TestMutationOverGETStaysRefused(t *testing.T) {
	g := startGateway(t)
	r, httpResp := g.post(t, nil, signInMutation, map[string]any{"input": map[string]any{
		"kind": "PERSON", "email": "anna@demo.test", "password": demoPassword, "deviceFingerprint": demoFingerprnt}})
	var d struct {
		SignIn signInResult `json:"signIn"`
	}
	r.decode(t, &d)
	var cookie string
	for _, c := range httpResp.Cookies() {
		if c.Name == "fingraph_session" {
			cookie = c.Value
		}
	}
	if cookie == "" {
		t.Fatal("no session cookie")
	}
	const mutation = `mutation { signOut }`
	byCookie := &testGateway{URL: g.URL, SandboxURL: g.SandboxURL, http: g.http}
	withCookie := http.Header{"Cookie": {"fingraph_session=" + cookie}}
	for name, resp := range map[string]*http.Response{
		"cookie, event stream": byCookie.getStream(t, withCookie, mutation, nil),
		"bearer, event stream": g.as(d.SignIn.SessionToken).getStream(t, nil, mutation, nil),
	} {
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" || !strings.Contains(string(body), `"BAD_USER_INPUT"`) {
			t.Errorf("%s: %d Allow=%q %s, want 405 BAD_USER_INPUT", name, resp.StatusCode, resp.Header.Get("Allow"), body)
		}
		if strings.Contains(string(body), "event:") {
			t.Errorf("%s: a stream began: %s", name, body)
		}
	}
	// The session is still there: signOut did not run.
	var v viewerData
	g.as(d.SignIn.SessionToken).query(t, viewerQuery, nil).decode(t, &v)
	if v.Viewer == nil || v.Viewer.Kind != "PERSON" {
		t.Fatalf("after the refused signOut over GET: %+v", v.Viewer)
	}
	// A plain GET of a subscription is refused too (it has no stream to
	// answer on).
	q := url.Values{"query": {`subscription { events { cursor } }`}}
	req, _ := http.NewRequest(http.MethodGet, g.URL+"/graphql?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+d.SignIn.SessionToken)
	resp, err := g.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("a subscription over GET without Accept: text/event-stream: %d, want 405", resp.StatusCode)
	}
}

// TestGETStreamWithABadURLIsAClientError: variables or extensions that
// are not JSON objects in a GET stream's URL are 400 BAD_USER_INPUT before
// a stream starts, quoting nothing from the URL.
func TestGETStreamWithABadURLIsAClientError(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	for name, raw := range map[string]string{
		"variables":  "query=" + url.QueryEscape(`subscription { events { cursor } }`) + "&variables=" + url.QueryEscape(`["secret-variable"]`),
		"extensions": "query=" + url.QueryEscape(`subscription { events { cursor } }`) + "&extensions=" + url.QueryEscape(`{"secret-extension"`),
	} {
		req, _ := http.NewRequest(http.MethodGet, g.URL+"/graphql?"+raw, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+g.bearer)
		resp, err := g.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"BAD_USER_INPUT"`) || !strings.Contains(string(body), name) {
			t.Errorf("bad %s: %d %s, want 400 BAD_USER_INPUT naming %s", name, resp.StatusCode, body, name)
		}
		if strings.Contains(string(body), "secret-") {
			t.Errorf("bad %s: the answer quotes the URL: %s", name, body)
		}
	}
}

// TestGETStreamResumesWithLastEventID: a GET stream of events gives each
// event its cursor as its SSE id, and a reconnection as EventSource makes
// it (the same URL, with Last-Event-ID) resumes after that event: the next
// event comes, the one already received does not come again.
func TestGETStreamResumesWithLastEventID(t *testing.T) {
	g := liveGateway(t)
	g = g.as(g.signInAPI(t))
	const sub = `subscription($after: String) { events(names: ["OrderCreated"], after: $after) { cursor event { upstreamId } } }`
	vars := map[string]any{"after": g.cursorNow(t)}
	type frame struct {
		Data struct {
			Events struct {
				Cursor string `json:"cursor"`
				Event  struct {
					UpstreamID string `json:"upstreamId"`
				} `json:"event"`
			} `json:"events"`
		} `json:"data"`
	}
	read := func(evs <-chan sseEvent) (sseEvent, frame) {
		t.Helper()
		ev := nextSSE(t, evs, 30*time.Second)
		var f frame
		if ev.name != "next" || json.Unmarshal([]byte(ev.data), &f) != nil {
			t.Fatalf("event: %+v", ev)
		}
		return ev, f
	}

	first := g.getStream(t, nil, sub, vars)
	wantEventStream(t, first)
	var a sandboxEvent
	g.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "OrderCreated"}, &a)
	ev, f := read(sseEvents(first.Body))
	if f.Data.Events.Event.UpstreamID != a.ID || ev.id == "" || ev.id != f.Data.Events.Cursor {
		t.Fatalf("first event: id %q, %+v; want %s with its cursor as its id", ev.id, f.Data.Events, a.ID)
	}
	first.Body.Close()

	var b sandboxEvent
	g.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "OrderCreated"}, &b)
	// EventSource reconnects with the URL it was opened with.
	again := g.getStream(t, http.Header{"Last-Event-Id": {ev.id}}, sub, vars)
	wantEventStream(t, again)
	_, f = read(sseEvents(again.Body))
	if got := f.Data.Events.Event.UpstreamID; got != b.ID {
		t.Fatalf("after reconnecting with Last-Event-ID: %s, want the next event %s (not %s again)", got, b.ID, a.ID)
	}
}
