package paymentsfeed

import (
	"strings"
	"testing"

	"github.com/fingraph/fingraph/events"
)

// FuzzParseWebhook feeds arbitrary bodies to the webhook intake's parser: it
// never panics, accepts only ids and names of the safe alphabet, and its
// refusals quote nothing of the body.
// Run: go test -run '^$' -fuzz FuzzParseWebhook -fuzztime 60s ./paymentsfeed
func FuzzParseWebhook(f *testing.F) {
	for _, s := range []string{
		`{"id":"6f0c1d52-8a5e-4c1b-9a43-2f7d0e6b9c11","name":"IndividualActivated","createdAt":"2026-01-01T00:00:00Z"}`,
		`{"id":"6f0c1d52-8a5e-4c1b-9a43-2f7d0e6b9c11","name":"OrderCaptured","created_at":"2026-01-01T00:00:00.123+02:00"}`,
		`{"id":"e-1","name":"OrderCaptured"}`,
		`{"id":"../x","name":"a b"}`, `{"id":1}`, `[]`, `{"id":"e","name":"n"} trailing`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		wh, msg := parseWebhook(raw)
		if msg != "" {
			if len(raw) > 8 && strings.Contains(msg, string(raw)) {
				t.Fatalf("refusal quotes the body: %q", msg)
			}
			return
		}
		if !events.IsToken(wh.ID) || !events.IsToken(wh.Name) || wh.Source != events.SourcePayments {
			t.Fatalf("accepted %+v", wh)
		}
	})
}
