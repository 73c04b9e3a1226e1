package events

import (
	"encoding/json"
	"testing"
	"time"
)

// The intake writes stored webhooks by hand; the enricher and the
// reconciler's path read and write them with encoding/json. The bytes must
// be the same.
func TestWebhookAppendJSONMatchesEncodingJSON(t *testing.T) {
	zone := time.FixedZone("", 2*3600+30*60)
	for _, w := range []webhook{
		{Source: SourcePayments, ID: "evt_1", Name: "OrderCreated"},
		{Source: SourcePayments, ID: "e-1", Name: "IndividualActivated", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{Source: SourcePayments, ID: "E_9", Name: "PendingActionCreated", CreatedAt: time.Date(2026, 11, 23, 12, 0, 0, 123456789, zone)},
		{Source: SourcePayments, ID: "x", Name: "y", CreatedAt: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)},
	} {
		want, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.appendJSON(nil); string(got) != string(want) {
			t.Errorf("appendJSON %s, encoding/json %s", got, want)
		}
	}
}

// validToken is tokenRe: the same answer on its edges.
func TestValidTokenIsTokenRe(t *testing.T) {
	long := make([]byte, 129)
	for i := range long {
		long[i] = 'a'
	}
	for _, s := range []string{"", "a", "A-z_09", "a b", "a/b", "é", "a\n", string(long[:128]), string(long), "-", "_", "a.b", "\x00"} {
		if got, want := validToken(s), tokenRe.MatchString(s); got != want {
			t.Errorf("validToken(%q) = %v, tokenRe %v", s, got, want)
		}
	}
}
