package e2e

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// The suite's last check: nothing the gateway (or its in-process sandbox)
// logged during all the tests carries a credential. Tests register the
// dynamic secrets they see (session tokens, CSRF tokens, created API keys,
// SMS codes, recovery tokens); the fixed demo credentials and any JWT (the
// banking upstream's token format) are searched for as well. Debug logging
// is on in every test gateway, so this covers the noisiest configuration.

// secretSet collects secrets seen by the tests.
type secretSet struct {
	mu sync.Mutex
	m  map[string]string // secret -> what it is
}

var seenSecrets = &secretSet{m: map[string]string{}}

func (s *secretSet) add(kind, v string) {
	if v == "" {
		return
	}
	s.mu.Lock()
	s.m[v] = kind
	s.mu.Unlock()
}

func (s *secretSet) all() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.m))
	for k, v := range s.m {
		out[k] = v
	}
	return out
}

// fixedSecrets are the demo credentials of both sandboxes. The payments
// public key is public and may be logged.
var fixedSecrets = map[string]string{
	demoPassword:      "demo password",
	"demo-api-key":    "banking API key",
	"sk_sandbox_demo": "payments private key",
	"at_sandbox_demo": "payments access token",
	"ck_sandbox_demo": "payments customer key",
}

var (
	jwtRE = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)
	// Card tokens: the sandbox's single-use test tokens and stored-card
	// tokens. Card data is never logged either.
	cardTokenRE   = regexp.MustCompile(`tok_(ok|3ds|fail)_[A-Za-z0-9_]+|pm_[0-9a-f]{8}-`)
	responseTokRE = regexp.MustCompile(`"(sessionToken|csrfToken|privateKey)":"([^"]+)"`)
	// Card numbers of the banking sandbox (its test BIN), and the
	// credentials a response showed.
	panRE         = regexp.MustCompile(`555544[0-9]{10}`)
	credentialsRE = regexp.MustCompile(`"pan":"([0-9]{12,19})","cvc":"([0-9]{3,4})"`)
)

// noteResponse registers the secrets a GraphQL response body shows.
func noteResponse(body []byte) {
	for _, m := range responseTokRE.FindAllSubmatch(body, -1) {
		seenSecrets.add(string(m[1]), string(m[2]))
	}
	for _, m := range credentialsRE.FindAllSubmatch(body, -1) {
		seenSecrets.add("card PAN", string(m[1]))
		// A CVC is three digits: only a whole JSON value counts.
		seenSecrets.add("card CVC", `"`+string(m[2])+`"`)
	}
}

func TestMain(m *testing.M) {
	log.SetOutput(stdLog{os.Stderr})
	code := m.Run()
	if code == 0 {
		if msg := scanLogs(allLogs.String()); msg != "" {
			fmt.Fprintln(os.Stderr, "FAIL: secrets in the gateway logs:\n"+msg)
			code = 1
		}
	}
	os.Exit(code)
}

// stdLog takes what libraries write to the standard logger (gqlgen logs a
// websocket upgrade it refused there): the refusals tests provoke on
// purpose (a foreign origin, a malformed handshake) join the gateways'
// logs, which the suite scans; anything else goes to stderr, where no
// refusal stands beside a failure looking like its cause.
type stdLog struct{ stderr io.Writer }

func (l stdLog) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("websocket: request origin not allowed")) ||
		bytes.Contains(p, []byte("websocket: not a websocket handshake")) {
		return allLogs.Write(p)
	}
	return l.stderr.Write(p)
}

// scanLogs reports every secret found in logs, or "".
func scanLogs(logs string) string {
	if !strings.Contains(logs, `"msg":"request"`) {
		// Nothing at debug level was logged: the scan would prove nothing.
		if logs == "" {
			return ""
		}
		return "no debug request lines were logged; is debug logging on in tests?"
	}
	var b strings.Builder
	check := func(secret, kind string, quoted bool) {
		needle := secret
		if quoted {
			needle = `"` + secret + `"`
		}
		if strings.Contains(logs, needle) {
			fmt.Fprintf(&b, "- a %s (%.4s…)\n", kind, secret)
		}
	}
	for s, kind := range fixedSecrets {
		check(s, kind, false)
	}
	for s, kind := range seenSecrets.all() {
		// SMS codes are six digits: only a whole JSON value counts, not
		// digits inside a number or an id.
		check(s, kind, kind == "sms code")
	}
	if m := jwtRE.FindString(logs); m != "" {
		fmt.Fprintf(&b, "- a JWT (%.12s…)\n", m)
	}
	if m := cardTokenRE.FindString(logs); m != "" {
		fmt.Fprintf(&b, "- a card token (%.8s…)\n", m)
	}
	if m := panRE.FindString(logs); m != "" {
		fmt.Fprintf(&b, "- a card number (%.6s…)\n", m)
	}
	return b.String()
}

func TestLogScanFindsPlantedSecrets(t *testing.T) {
	logs := `{"msg":"request"}` + "\n" + `{"msg":"x","token":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.sig"}` + "\n" + `{"pw":"demo-password"}` + "\n" + `{"card":"tok_ok_123"}` + "\n" + `{"pan":"5555440123456789"}`
	msg := scanLogs(logs)
	if !strings.Contains(msg, "JWT") || !strings.Contains(msg, "demo password") || !strings.Contains(msg, "card token") || !strings.Contains(msg, "card number") {
		t.Errorf("scan missed planted secrets: %q", msg)
	}
	if scanLogs(`{"msg":"request","ok":true}`) != "" {
		t.Error("scan flags clean logs")
	}
}
