package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Sessions, sign-in limits, download links and KYC file names under a
// hostile client: the limits follow the person or the attacker, not the
// session or the account, and links end with the session that asked.

// A person's card credentials are limited per person: signing in again does
// not buy a new allowance. Eight sessions of one person try five reads each
// (40 reads); five are answered.
func TestCardCredentialReadsAreLimitedPerPerson(t *testing.T) {
	g := startGateway(t)
	first := g.as(g.signInPerson(t, "anna@demo.test"))
	card := first.issueCard(t, issueInput())
	read, limited := 0, 0
	for s := range 8 {
		anna := first
		if s > 0 {
			anna = g.as(g.signInPerson(t, "anna@demo.test"))
		}
		for range 5 {
			r := anna.query(t, revealMutation, map[string]any{"id": card.ID})
			switch {
			case len(r.Errors) == 0:
				read++
			case r.code() == "RATE_LIMITED":
				limited++
			default:
				t.Fatalf("session %d: %+v", s, r.Errors)
			}
		}
	}
	if read != 5 || limited != 35 {
		t.Fatalf("8 sessions of one person, 40 reads: %d answered, %d RATE_LIMITED; want 5 and 35", read, limited)
	}
	// Another person keeps an allowance of its own.
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	if r := ben.query(t, revealMutation, map[string]any{"id": card.ID}); r.code() != "NOT_FOUND" {
		t.Fatalf("another person was limited by anna's reads: %+v", r.Errors)
	}
}

// An attacker's wrong passwords do not lock the owner out: 20 rounds of a
// wrong password from one address and the right one from another. The
// attacker is refused after five failures; the owner signs in 20 times of
// 20. Behind a trusted proxy, as a real deployment is, so that the two
// clients have addresses of their own.
func TestWrongPasswordsDoNotLockTheOwnerOut(t *testing.T) {
	g := startGateway(t, "-trusted-proxies", "127.0.0.1", "-public-rate-limit", "1000")
	const attacker, owner = "203.0.113.66", "198.51.100.7"
	ownerIn, attackerLimited := 0, 0
	for round := range 20 {
		r := signInAttempt(t, g, "anna@demo.test", attacker)
		switch c := r.code(); {
		case c == "RATE_LIMITED":
			attackerLimited++
		case c == "":
			t.Fatalf("round %d: a wrong password signed in", round)
		}
		h := http.Header{"X-Forwarded-For": {owner}}
		o, _ := g.post(t, h, signInMutation, map[string]any{"input": map[string]any{
			"kind": "PERSON", "email": "anna@demo.test", "password": demoPassword, "deviceFingerprint": demoFingerprnt}})
		if strings.Contains(string(o.Data), `"SignedIn"`) {
			ownerIn++
		}
	}
	if ownerIn != 20 {
		t.Errorf("the owner signed in %d times of 20 while an attacker guessed", ownerIn)
	}
	if attackerLimited != 15 {
		t.Errorf("the attacker was refused %d times of 20, want 15 (5 failures allowed)", attackerLimited)
	}
	// The owner's right password from the attacker's address is refused:
	// the address, not the person, is what failed.
	r, _ := g.post(t, http.Header{"X-Forwarded-For": {attacker}}, signInMutation, map[string]any{"input": map[string]any{
		"kind": "PERSON", "email": "anna@demo.test", "password": demoPassword, "deviceFingerprint": demoFingerprnt}})
	if r.code() != "RATE_LIMITED" {
		t.Errorf("the failing address signed in: %s %+v", r.Data, r.Errors)
	}
}

// fetch GETs a gateway path with the given headers.
func (g *testGateway) fetch(t *testing.T, path string, h http.Header) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.URL+path, nil)
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := g.http.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// A statement link works only with the session that asked for it (its
// bearer token or its cookie), as often as a browser retries within its
// lifetime, and not after that session signed out.
func TestDownloadLinksAreBoundToTheirSession(t *testing.T) {
	g := startGateway(t)
	annaToken := g.signInPerson(t, "anna@demo.test")
	anna := g.as(annaToken)
	f, r := anna.requestStatement(t, map[string]any{"format": "CSV", "walletIds": []string{demoEURWalletID}})
	if len(r.Errors) > 0 {
		t.Fatalf("requestStatement: %+v", r.Errors)
	}
	bearer := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
	if c := g.fetch(t, f.URL, nil); c == http.StatusOK {
		t.Errorf("the link downloaded without a session")
	}
	if c := g.fetch(t, f.URL, bearer(g.signInPerson(t, "ben@second.test"))); c != http.StatusForbidden {
		t.Errorf("another person's session: %d, want 403", c)
	}
	if c := g.fetch(t, f.URL, bearer(g.signInPerson(t, "anna@demo.test"))); c != http.StatusForbidden {
		t.Errorf("another session of the same person: %d, want 403", c)
	}
	for i := range 3 {
		if c := g.fetch(t, f.URL, bearer(annaToken)); c != http.StatusOK {
			t.Fatalf("download %d with the asking session's token: %d", i+1, c)
		}
	}
	if c := g.fetch(t, f.URL, http.Header{"Cookie": {"fingraph_session=" + annaToken}}); c != http.StatusOK {
		t.Errorf("download with the asking session's cookie: %d", c)
	}
	if r := anna.query(t, `mutation { signOut }`, nil); len(r.Errors) > 0 {
		t.Fatalf("signOut: %+v", r.Errors)
	}
	if c := g.fetch(t, f.URL, bearer(annaToken)); c == http.StatusOK {
		t.Errorf("the link still downloads after sign-out")
	}
}

// KYC file names are data a reviewer reads: no directory parts, no dot
// names, no control or bidirectional characters, bounded; and the name's
// extension agrees with the content. Each refusal is BAD_USER_INPUT on
// input.file before any upstream call.
func TestKYCFileNamesAreCheckedAgainstTheContent(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	pdf := []byte("%PDF-1.7\n1 0 obj <<>> endobj\n%%EOF\n")
	polyglot := []byte("%PDF-1.7\n<html><script>alert(document.domain)</script></html>\n%%EOF\n")
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 64)...)
	for name, c := range map[string]struct {
		filename string
		data     []byte
	}{
		"dot dot":                {"..", pdf},
		"dot":                    {".", pdf},
		"right-to-left override": {"invoice\u202Efdp.exe", pdf},
		"rlo hiding the type":    {"report\u202Elmth.pdf", polyglot},
		"isolate":                {"a\u2066b.pdf", pdf},
		"zero width":             {"statutes\u200B.pdf", pdf},
		"backslash":              {`..\..\statutes.pdf`, pdf},
		"control character":      {"stat\tutes.pdf", pdf},
		"too long":               {strings.Repeat("a", 300) + ".pdf", pdf},
		"pdf/html polyglot":      {"report.html", polyglot},
		"pdf named png":          {"statutes.png", pdf},
		"png named pdf":          {"statutes.pdf", png},
		"no extension":           {"statutes", pdf},
	} {
		t.Run(name, func(t *testing.T) {
			g.resetStats(t)
			r := anna.uploadKYC(t, c.filename, c.data)
			code, field := errField(r)
			if code != "BAD_USER_INPUT" || field != "input.file" {
				t.Fatalf("%q: %s %q %s %+v", c.filename, code, field, r.Data, r.Errors)
			}
			if st := g.stats(t); bankingCalls(st) != 0 {
				t.Errorf("a refused file reached the upstream: %v", st.Routes)
			}
		})
	}
	// Accepted: the extension in any case, and JPEG's two spellings.
	jpeg := append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, make([]byte, 64)...)
	for name, data := range map[string][]byte{"Statutes.PDF": pdf, "scan.jpeg": jpeg, "scan 2.jpg": jpeg, "Ķekava – līgums.pdf": pdf} {
		var d struct {
			Doc struct{ Name string } `json:"uploadKycDocument"`
		}
		anna.uploadKYC(t, name, data).decode(t, &d)
		if d.Doc.Name != name {
			t.Errorf("uploaded %q, stored as %q", name, d.Doc.Name)
		}
	}
}
