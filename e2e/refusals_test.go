package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// TestDownloadLinksResume: a report link serves byte ranges, so that an
// interrupted download resumes where it stopped (the reason links are
// reusable), and a range outside the file is 416.
func TestDownloadLinksResume(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	f, r := anna.requestStatement(t, map[string]any{"format": "PDF", "walletIds": []string{demoEURWalletID},
		"from": "2024-01-01", "to": "2024-03-31", "timezone": "Europe/Riga"})
	if len(r.Errors) > 0 {
		t.Fatalf("requestStatement: %+v", r.Errors)
	}
	resp, whole := anna.download(t, f.URL)
	if resp.StatusCode != http.StatusOK || len(whole) < 100 {
		t.Fatalf("download: %d, %d bytes", resp.StatusCode, len(whole))
	}
	if resp.Header.Get("Accept-Ranges") != "bytes" {
		t.Errorf("Accept-Ranges = %q, want bytes", resp.Header.Get("Accept-Ranges"))
	}
	get := func(rng string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, g.URL+f.URL, nil)
		req.Header.Set("Authorization", "Bearer "+anna.bearer)
		req.Header.Set("Range", rng)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	// The rest of the file after the first 40 bytes, as a resuming
	// download manager asks for it.
	resp, rest := get("bytes=40-")
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(rest, whole[40:]) {
		t.Fatalf("bytes=40-: %d, %d bytes, want 206 and the %d bytes after the 40th", resp.StatusCode, len(rest), len(whole)-40)
	}
	if resp.Header.Get("Content-Disposition") == "" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("a range lost the download's headers: %v", resp.Header)
	}
	if resp, b := get("bytes=5-14"); resp.StatusCode != http.StatusPartialContent || !bytes.Equal(b, whole[5:15]) {
		t.Errorf("bytes=5-14: %d %q", resp.StatusCode, b)
	}
	if resp, _ := get("bytes=100000000-"); resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
		t.Errorf("a range past the end: %d, want 416", resp.StatusCode)
	}
}

// TestAStringForAnIntNamesTheVariable: a string where an Int variable is
// declared is refused as BAD_USER_INPUT naming the variable, not as an
// operation too complex to run.
func TestAStringForAnIntNamesTheVariable(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	for _, v := range []any{"5", "five", 1 << 40} {
		r := anna.query(t, `query($n: Int) { persons(first: $n) { edges { node { id } } } }`, map[string]any{"n": v})
		if r.code() != "BAD_USER_INPUT" || len(r.Errors) == 0 || !namesVariable(r, "n") ||
			strings.Contains(r.Errors[0].Message, "complexity") {
			t.Errorf("$n = %v: %+v, want BAD_USER_INPUT naming $n", v, r.Errors)
		}
	}
	// A number is taken as before.
	r := anna.query(t, `query($n: Int) { persons(first: $n) { edges { node { id } } } }`, map[string]any{"n": 2})
	if len(r.Errors) > 0 {
		t.Fatalf("a number for $n: %+v", r.Errors)
	}
}

// TestARefusedWebsocketUpgradeHasACode: a websocket from an origin that is
// not allowed, and a handshake the server cannot take, are refused with an
// error that carries extensions.code, as every refusal does.
func TestARefusedWebsocketUpgradeHasACode(t *testing.T) {
	g := startGateway(t)
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	_, resp, err := d.Dial(strings.Replace(g.URL, "http://", "ws://", 1)+"/graphql", http.Header{"Origin": {"https://evil.example"}})
	if err == nil || resp == nil {
		t.Fatalf("a foreign origin's websocket: %v", err)
	}
	if c := bodyCode(t, resp); resp.StatusCode != http.StatusForbidden || c != "FORBIDDEN" {
		t.Errorf("a foreign origin's websocket: %d %q, want 403 FORBIDDEN", resp.StatusCode, c)
	}

	// An upgrade without the websocket key.
	req, _ := http.NewRequest(http.MethodGet, g.URL+"/graphql", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Protocol", "graphql-transport-ws")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if c := bodyCode(t, resp); resp.StatusCode != http.StatusBadRequest || c != "BAD_USER_INPUT" {
		t.Errorf("a handshake without its key: %d %q, want 400 BAD_USER_INPUT", resp.StatusCode, c)
	}
}

// namesVariable reports whether r's first error names the variable, in
// its message or (the validator's way) in its path.
func namesVariable(r gqlResponse, name string) bool {
	e := r.Errors[0]
	return strings.Contains(e.Message, "$"+name) || fmt.Sprint(e.Path) == "[variable "+name+"]"
}

func bodyCode(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var out gqlResponse
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	return out.code()
}
