package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The HTTP edges of the gateway under hostile requests: multipart uploads
// bounded before a file is read, server-sent-event streams under the
// websocket caps, persisted-query mistakes answered as the client's, and
// the small doors (/schema.graphql, /metrics, framing, Origin).

// multipartBody is a GraphQL multipart request: operations, map, then one
// part per file key, in that order unless parts says otherwise.
type multipartBody struct {
	ops   any
	fmap  any
	files map[string][]byte
	// first, when set, is written before operations (a spec violation).
	first string
}

func (m multipartBody) encode() (*bytes.Buffer, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	ops, _ := json.Marshal(m.ops)
	fm, _ := json.Marshal(m.fmap)
	if m.first == "map" {
		_ = mw.WriteField("map", string(fm))
		_ = mw.WriteField("operations", string(ops))
	} else {
		_ = mw.WriteField("operations", string(ops))
		_ = mw.WriteField("map", string(fm))
	}
	for k, data := range m.files {
		fw, _ := mw.CreateFormFile(k, k+".pdf")
		_, _ = fw.Write(data)
	}
	_ = mw.Close()
	return &buf, mw.FormDataContentType()
}

func (g *testGateway) sendMultipart(t *testing.T, body io.Reader, contentType string, length int64) rawResponse {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/graphql", body)
	req.ContentLength = length
	req.Header.Set("Content-Type", contentType)
	if g.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+g.bearer)
	}
	resp, err := g.http.Do(req)
	if err != nil {
		t.Fatalf("multipart POST: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResponse{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// openFiles counts this process's open file descriptors: the gateway runs
// in the test's process.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(fds)
}

// uploadGate holds the gateway's KYC upload to the sandbox until released,
// so that a test can look at the process while the request is in flight.
type uploadGate struct {
	arrived chan struct{}
	release chan struct{}
	once    sync.Once
}

func newUploadGate() *uploadGate {
	return &uploadGate{arrived: make(chan struct{}, 16), release: make(chan struct{})}
}

func (u *uploadGate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/kyc-documents") {
			u.arrived <- struct{}{}
			<-u.release
		}
		next.ServeHTTP(w, r)
	})
}

func (u *uploadGate) open() { u.once.Do(func() { close(u.release) }) }

// TestMultipartIsBoundedBeforeAnyFileIsRead: one file mapped to 2,000
// paths held one open file per path while the operation ran (2,000 file
// descriptors for one request). The map is now counted before any file is
// read and the request refused as the client's; and an accepted upload
// large enough to be spooled to disk holds a handful of descriptors.
func TestMultipartIsBoundedBeforeAnyFileIsRead(t *testing.T) {
	gate := newUploadGate()
	g := startGatewayWith(t, sandboxBehind(gate.wrap))
	t.Cleanup(gate.open)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	pdf := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte{' '}, 3<<20)...) // over the in-memory share: spooled
	vars := map[string]any{"input": map[string]any{"file": nil}}

	inFlight := func(paths int) (rawResponse, int, bool) {
		t.Helper()
		list := make([]string, paths)
		for i := range list {
			list[i] = "variables.input.file"
		}
		body, ct := multipartBody{ops: map[string]any{"query": uploadMutation, "variables": vars},
			fmap: map[string][]string{"0": list}, files: map[string][]byte{"0": pdf}}.encode()
		before := openFiles(t)
		done := make(chan rawResponse, 1)
		go func() { done <- anna.sendMultipart(t, body, ct, int64(body.Len())) }()
		select {
		case <-gate.arrived:
			held := openFiles(t) - before
			gate.release <- struct{}{}
			return <-done, held, true
		case r := <-done:
			return r, 0, false
		}
	}

	r, held, reached := inFlight(2000)
	t.Logf("2,000 paths for one file: %d, upstream reached %v, %d descriptors held in flight", r.Status, reached, held)
	if reached || r.Status != http.StatusBadRequest || r.decode(t).code() != "BAD_USER_INPUT" {
		t.Fatalf("2,000 paths for one file: %d %s, upstream reached %v, %d descriptors held", r.Status, r.Body, reached, held)
	}

	r, held, reached = inFlight(1)
	t.Logf("one spooled 3 MiB file: %d, %d descriptors held in flight", r.Status, held)
	if !reached || r.Status != http.StatusOK || len(r.decode(t).Errors) > 0 {
		t.Fatalf("a valid spooled upload: %d %s", r.Status, r.Body)
	}
	if held > 8 {
		t.Fatalf("a valid spooled upload held %d descriptors in flight", held)
	}
}

// TestMultipartRefusalsAreClientErrors: every malformed or disallowed
// multipart request is refused with a 4xx and extensions.code before any
// file is read; gqlgen's own answers were 422 with no code, and an
// oversized chunked upload was 422 rather than 413.
func TestMultipartRefusalsAreClientErrors(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	pdf := []byte("%PDF-1.7\n%%EOF\n")
	upload := map[string]any{"query": uploadMutation, "variables": map[string]any{"input": map[string]any{"file": nil}}}
	manyFiles := map[string][]byte{}
	manyMap := map[string][]string{}
	for i := range 11 {
		k := fmt.Sprint(i)
		manyFiles[k], manyMap[k] = pdf, []string{"variables.input.file"}
	}
	n0, _ := g.kycStore(t)
	for name, c := range map[string]struct {
		body   multipartBody
		status int
	}{
		"no Upload variable": {multipartBody{ops: map[string]any{"query": `query($id: ID!) { node(id: $id) { id } }`, "variables": map[string]any{"id": nil}},
			fmap: map[string][]string{"0": {"variables.id"}}, files: map[string][]byte{"0": pdf}}, 400},
		"a path to a String": {multipartBody{ops: map[string]any{"query": uploadMutation, "variables": map[string]any{"input": map[string]any{"file": nil, "corporationId": nil}}},
			fmap: map[string][]string{"0": {"variables.input.corporationId"}}, files: map[string][]byte{"0": pdf}}, 400},
		"a path outside variables": {multipartBody{ops: upload, fmap: map[string][]string{"0": {"query"}}, files: map[string][]byte{"0": pdf}}, 400},
		"a path to nowhere":        {multipartBody{ops: upload, fmap: map[string][]string{"0": {"variables.input.file.9.x"}}, files: map[string][]byte{"0": pdf}}, 400},
		"eleven files":             {multipartBody{ops: upload, fmap: manyMap, files: manyFiles}, 400},
		"map before operations":    {multipartBody{ops: upload, fmap: map[string][]string{"0": {"variables.input.file"}}, files: map[string][]byte{"0": pdf}, first: "map"}, 400},
		"a file not in the map":    {multipartBody{ops: upload, fmap: map[string][]string{"0": {"variables.input.file"}}, files: map[string][]byte{"0": pdf, "1": pdf}}, 400},
		"a mapped file missing":    {multipartBody{ops: upload, fmap: map[string][]string{"0": {"variables.input.file"}, "1": {"variables.input.file"}}, files: map[string][]byte{"0": pdf}}, 400},
		"map not an object":        {multipartBody{ops: upload, fmap: []string{"variables.input.file"}, files: map[string][]byte{"0": pdf}}, 400},
		"operations not an object": {multipartBody{ops: "query", fmap: map[string][]string{"0": {"variables.input.file"}}, files: map[string][]byte{"0": pdf}}, 400},
	} {
		t.Run(name, func(t *testing.T) {
			body, ct := c.body.encode()
			r := anna.sendMultipart(t, body, ct, int64(body.Len()))
			if r.Status != c.status || r.decode(t).code() != "BAD_USER_INPUT" {
				t.Fatalf("want %d BAD_USER_INPUT, got %d %s", c.status, r.Status, r.Body)
			}
		})
	}
	t.Run("oversized chunked upload", func(t *testing.T) {
		big := append([]byte("%PDF-1.7\n"), make([]byte, 11<<20)...)
		body, ct := multipartBody{ops: upload, fmap: map[string][]string{"0": {"variables.input.file"}}, files: map[string][]byte{"0": big}}.encode()
		r := anna.sendMultipart(t, io.MultiReader(body), ct, -1) // no length: chunked
		if r.Status != http.StatusRequestEntityTooLarge || r.decode(t).code() != "BAD_USER_INPUT" {
			t.Fatalf("want 413 BAD_USER_INPUT, got %d %s", r.Status, r.Body)
		}
	})
	if n1, _ := g.kycStore(t); n1 != n0 {
		t.Fatalf("a refused upload was stored: %d documents, was %d", n1, n0)
	}
}

// sseStream opens a subscription over server-sent events and returns once
// the gateway answered: the open stream (nil if refused) and the refusal.
func (g *testGateway) sseStream(t *testing.T, ctx context.Context, h http.Header) (*http.Response, rawResponse) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": `subscription { events(names: ["IndividualActivated"]) ` + liveFields + ` }`})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if g.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+g.bearer)
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("SSE POST: %v", err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Cleanup(func() { resp.Body.Close() })
		return resp, rawResponse{Status: resp.StatusCode}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return nil, rawResponse{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// TestSSEStreamsKeepTheSocketCaps: server-sent-event subscriptions count
// against the same caps as websockets, per session and per client address;
// one session opened 1,000 streams before.
func TestSSEStreamsKeepTheSocketCaps(t *testing.T) {
	g := startGateway(t, "-limits", "socketsPerSession=3,socketsPerAddress=5")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := g.as(g.signInAPI(t))
	opened := 0
	var first *http.Response
	for range 10 {
		s, r := a.sseStream(t, ctx, nil)
		if s == nil {
			if r.Status != http.StatusTooManyRequests || r.decode(t).code() != "RATE_LIMITED" {
				t.Fatalf("refused stream: %d %s", r.Status, r.Body)
			}
			break
		}
		if first == nil {
			first = s
		}
		opened++
	}
	t.Logf("one session opened %d of 10 SSE streams (cap 3)", opened)
	if opened != 3 {
		t.Fatalf("one session opened %d streams, cap 3", opened)
	}
	// A websocket of the same session is over the cap too.
	if c, err := a.tryDialWS(nil); err == nil {
		init, _ := json.Marshal(map[string]any{"sessionToken": a.bearer})
		c.t = t
		c.send(wsMessage{Type: "connection_init", Payload: init})
		if code, msgs := c.closeCode(); code != 4429 {
			t.Fatalf("a websocket over the session's SSE streams: closed with %d after %+v", code, msgs)
		}
		c.close()
	}
	// Ending a stream frees its place.
	first.Body.Close()
	for i := 0; ; i++ {
		if s, _ := a.sseStream(t, ctx, nil); s != nil {
			break
		}
		if i == 500 {
			t.Fatal("a closed stream never freed its place")
		}
		time.Sleep(10 * time.Millisecond) // polling the server's cleanup
	}
	// Per address: two more sessions reach 5 streams from this address.
	b := g.as(g.signInAPI(t))
	var bs []*http.Response
	for range 2 {
		s, r := b.sseStream(t, ctx, nil)
		if s == nil {
			t.Fatalf("second session: %d %s", r.Status, r.Body)
		}
		bs = append(bs, s)
	}
	c := g.as(g.signInAPI(t))
	s, r := c.sseStream(t, ctx, nil)
	if s != nil || r.Status != http.StatusTooManyRequests || r.decode(t).code() != "RATE_LIMITED" {
		t.Fatalf("a sixth stream from one address: %d %s", r.Status, r.Body)
	}
	// Tied to its session like a websocket: signing out ends the streams.
	b.query(t, `mutation { signOut }`, nil)
	for _, s := range bs {
		if _, err := io.Copy(io.Discard, s.Body); err != nil {
			t.Fatalf("a stream of a signed-out session: %v", err)
		}
	}
}

// TestCardCredentialsOverSSEAreNoStore: the answer that carries a PAN and
// CVC is no-store over server-sent events too (it was no-cache).
func TestCardCredentialsOverSSEAreNoStore(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	card := anna.issueCard(t, issueInput())
	body, _ := json.Marshal(map[string]any{"query": revealMutation, "variables": map[string]any{"id": card.ID}})
	r := anna.raw(t, http.MethodPost, "application/json", body, http.Header{
		"Accept": {"text/event-stream"}, "Authorization": {"Bearer " + anna.bearer}})
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") || !bytes.Contains(r.Body, []byte(`"pan"`)) {
		t.Fatalf("not the credentials over SSE: %d %s", r.Status, r.Body)
	}
	for _, line := range strings.Split(string(r.Body), "\n") {
		if p, ok := strings.CutPrefix(line, "data: "); ok {
			var d struct {
				Data struct {
					Reveal struct{ PAN, CVC string } `json:"revealCardCredentials"`
				} `json:"data"`
			}
			if json.Unmarshal([]byte(p), &d) == nil && d.Data.Reveal.PAN != "" {
				seenSecrets.add("card PAN", d.Data.Reveal.PAN)
				seenSecrets.add("card CVC", `"`+d.Data.Reveal.CVC+`"`)
			}
		}
	}
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("credentials over SSE with Cache-Control %q", cc)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestBadPersistedQueriesAreClientErrors: malformed persisted-query
// extensions from an anonymous client were INTERNAL and logged at ERROR;
// they are the client's mistake, answered with a client code and not
// logged as the gateway's failure.
func TestBadPersistedQueriesAreClientErrors(t *testing.T) {
	g := startGateway(t)
	const q = `{ __typename }`
	good := sha256Hex(q)
	for name, c := range map[string]struct {
		query string
		pq    any
		code  string
	}{
		"not an object":          {"", "abc", "BAD_USER_INPUT"},
		"version as a string":    {"", map[string]any{"version": "1", "sha256Hash": good}, "BAD_USER_INPUT"},
		"version 2":              {"", map[string]any{"version": 2, "sha256Hash": good}, "BAD_USER_INPUT"},
		"no version":             {"", map[string]any{"sha256Hash": good}, "BAD_USER_INPUT"},
		"hash as a number":       {"", map[string]any{"version": 1, "sha256Hash": 12}, "BAD_USER_INPUT"},
		"hash too short":         {"", map[string]any{"version": 1, "sha256Hash": "abc"}, "BAD_USER_INPUT"},
		"hash not hex":           {"", map[string]any{"version": 1, "sha256Hash": strings.Repeat("z", 64)}, "BAD_USER_INPUT"},
		"hash of another query":  {q, map[string]any{"version": 1, "sha256Hash": sha256Hex("{ viewer { kind } }")}, "BAD_USER_INPUT"},
		"version 2 with a query": {q, map[string]any{"version": 2, "sha256Hash": good}, "BAD_USER_INPUT"},
		"unknown hash":           {"", map[string]any{"version": 1, "sha256Hash": sha256Hex("{ viewer { id } }")}, "PERSISTED_QUERY_NOT_FOUND"},
	} {
		t.Run(name, func(t *testing.T) {
			p := map[string]any{"extensions": map[string]any{"persistedQuery": c.pq}}
			if c.query != "" {
				p["query"] = c.query
			}
			body, _ := json.Marshal(p)
			r := g.raw(t, http.MethodPost, "application/json", body, nil)
			if got := r.decode(t).code(); got != c.code {
				t.Fatalf("want %s, got %d %s", c.code, r.Status, r.Body)
			}
		})
	}
	if n := logLevels(g.Logs.String())["ERROR"]; n > 0 {
		t.Fatalf("%d ERROR log lines for the client's mistakes", n)
	}
}

// TestTrustedModeEdges: in trusted-documents mode the whole schema is not
// handed out at /schema.graphql (introspection cannot run there either),
// and a trusted text with a malformed persisted-query extension is the
// client's mistake.
func TestTrustedModeEdges(t *testing.T) {
	const viewer = `query Viewer { viewer { kind } }`
	manifest, _ := json.Marshal(map[string]string{sha256Hex(viewer): viewer})
	path := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(path, manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "-trusted-documents", path, "-introspection", "true")
	resp, err := http.Get(g.URL + "/schema.graphql")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || bytes.Contains(b, []byte("type Query")) {
		t.Fatalf("/schema.graphql in trusted mode: %d %.80s", resp.StatusCode, b)
	}
	body, _ := json.Marshal(map[string]any{"query": viewer, "extensions": map[string]any{"persistedQuery": map[string]any{"version": 3, "sha256Hash": sha256Hex(viewer)}}})
	r := g.raw(t, http.MethodPost, "application/json", body, nil)
	if code := r.decode(t).code(); code != "BAD_USER_INPUT" {
		t.Fatalf("a trusted text with persistedQuery version 3: %d %s", r.Status, r.Body)
	}
	if n := logLevels(g.Logs.String())["ERROR"]; n > 0 {
		t.Fatalf("%d ERROR log lines for the client's mistakes", n)
	}
	// Without trusted documents, the schema file follows introspection.
	open := startGateway(t, "-introspection", "true")
	resp, err = http.Get(open.URL + "/schema.graphql")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/schema.graphql with introspection on: %d", resp.StatusCode)
	}
}

// TestContentLengthWithTransferEncodingClosesTheConnection: a request with
// both framings (the request-smuggling shape) is read by its chunks alone
// and its connection closed after the answer (RFC 9112, 6.1): a second
// request on it gets no answer.
func TestContentLengthWithTransferEncodingClosesTheConnection(t *testing.T) {
	g := startGateway(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(g.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"query":"{ __typename }"}`
	fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n",
		len(body), len(body), body)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if !resp.Close {
		t.Errorf("both Content-Length and Transfer-Encoding: %d without Connection: close", resp.StatusCode)
	}
	fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n")
	if resp, err := http.ReadResponse(br, nil); err == nil {
		resp.Body.Close()
		t.Fatalf("the connection stayed open: a second request got %d", resp.StatusCode)
	}
	// One framing alone keeps working on a connection of its own.
	r := g.raw(t, http.MethodPost, "application/json", []byte(body), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("a plain request: %d %s", r.Status, r.Body)
	}
}

// TestMetricsAnswersGETFromLoopbackOnly: /metrics on the public listener
// takes GET and HEAD only, and only from a loopback client that came
// through no proxy; FINGRAPH_METRICS_ADDR is the way to serve it further.
func TestMetricsAnswersGETFromLoopbackOnly(t *testing.T) {
	g := startGateway(t)
	do := func(method string, h http.Header) int {
		req, _ := http.NewRequest(method, g.URL+"/metrics", nil)
		for k, vs := range h {
			req.Header[k] = vs
		}
		resp, err := g.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if method == http.MethodPost && resp.StatusCode == http.StatusMethodNotAllowed {
			if allow := resp.Header.Get("Allow"); !strings.Contains(allow, "GET") {
				t.Errorf("405 without Allow: %q", allow)
			}
		}
		return resp.StatusCode
	}
	for _, c := range []struct {
		method string
		h      http.Header
		want   int
	}{
		{http.MethodGet, nil, 200},
		{http.MethodHead, nil, 200},
		{http.MethodPost, nil, 405},
		{http.MethodDelete, nil, 405},
		{http.MethodGet, http.Header{"X-Forwarded-For": {"203.0.113.9"}}, 404},
		{http.MethodGet, http.Header{"Forwarded": {"for=203.0.113.9"}}, 404},
	} {
		if got := do(c.method, c.h); got != c.want {
			t.Errorf("%s /metrics %v: %d, want %d", c.method, c.h, got, c.want)
		}
	}
}

// TestWebsocketOriginComparesTheScheme: an Origin with the gateway's host
// but another scheme is another origin, and allowlisted origins match by
// scheme, host and port.
func TestWebsocketOriginComparesTheScheme(t *testing.T) {
	g := startGateway(t, "-allowed-origins", "https://app.example.test")
	host := strings.TrimPrefix(g.URL, "http://")
	for origin, want := range map[string]bool{
		"http://" + host:                   true,
		"https://" + host:                  false,
		"ws://" + host:                     false,
		"https://app.example.test":         true,
		"https://APP.example.test:443":     true,
		"http://app.example.test":          false,
		"https://app.example.test:8443":    false,
		"https://app.example.test.evil.io": false,
	} {
		c, err := g.tryDialWS(http.Header{"Origin": {origin}})
		if c != nil {
			c.conn.Close()
		}
		if got := err == nil; got != want {
			t.Errorf("Origin %s: accepted %v, want %v (%v)", origin, got, want, err)
		}
	}
}
