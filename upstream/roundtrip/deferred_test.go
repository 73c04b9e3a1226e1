package roundtrip_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/fingraph/fingraph/upstream/roundtrip"
)

type card struct {
	Last4   string `json:"last4"`
	Expires []int  `json:"expires"`
}

type record struct {
	ID    string                     `json:"id"`
	Cards roundtrip.Deferred[[]card] `json:"cards"`
	Extra roundtrip.Deferred[[]card] `json:"extra,omitzero"`
	Plain []card                     `json:"plain"`
}

// A deferred part decodes as the eager field beside it does (the clients'
// rules: a name in another case matches), from a copy of its own, and only
// its own wrong shape fails its own read.
func TestDeferredDecodesWhenRead(t *testing.T) {
	in := []byte(`[{"id":"c1","cards":[{"LAST4":"4242","expires":[12,30]}],"plain":[{"LAST4":"4242","expires":[12,30]}]},` +
		`{"id":"c2","cards":"not a list","extra":null}]`)
	var got []record
	if err := roundtrip.Unmarshal(in, &got); err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = 'x' // the decoder's input is not the parts' to keep
	}
	cards, err := got[0].Cards.Decode()
	if err != nil || len(cards) != 1 || cards[0].Last4 != got[0].Plain[0].Last4 || cards[0].Expires[1] != 30 {
		t.Fatalf("first record's cards: %+v, %v; want %+v", cards, err, got[0].Plain)
	}
	if !got[0].Extra.IsZero() || !got[1].Extra.IsZero() {
		t.Error("an absent or null part is not zero")
	}
	if extra, err := got[1].Extra.Decode(); err != nil || extra != nil {
		t.Errorf("a null part decodes to %+v, %v; want nil", extra, err)
	}
	if _, err := got[1].Cards.Decode(); err == nil {
		t.Error("a string where a list belongs decodes without an error")
	}

	// What is not JSON still fails the whole answer.
	if err := roundtrip.Unmarshal([]byte(`[{"id":"c3","cards":[{]}]`), &got); err == nil {
		t.Error("a listing that is not JSON decodes")
	}
}

// A deferred part is written as its type holds it, by either encoder:
// never a field the type leaves out (a card token), which stays out of
// printed records too; and encoding/json reads it back.
func TestDeferredWritesWhatItsTypeHolds(t *testing.T) {
	sent := `{"id":"c1","cards":[{"LAST4":"4242","expires":[12,30],"token":"pm_secret"}],"plain":[]}`
	want := `{"id":"c1","cards":[{"last4":"4242","expires":[12,30]}],"plain":[]}`
	var r record
	if err := roundtrip.Unmarshal([]byte(sent), &r); err != nil {
		t.Fatal(err)
	}
	v2, err := jsonv2.Marshal(r)
	if err != nil || string(v2) != want {
		t.Errorf("json v2 wrote %s, %v; want %s", v2, err, want)
	}
	v1, err := json.Marshal(r)
	if err != nil || string(v1) != want {
		t.Errorf("encoding/json wrote %s, %v; want %s", v1, err, want)
	}
	for _, printed := range []string{fmt.Sprintf("%v", r), fmt.Sprintf("%+v", r), fmt.Sprintf("%#v", r)} {
		if strings.Contains(printed, "secret") || strings.Contains(printed, "112 109 95") { // "pm_" as bytes
			t.Errorf("a printed record shows the part as sent: %s", printed)
		}
	}
	var back record
	if err := json.Unmarshal(v1, &back); err != nil {
		t.Fatal(err)
	}
	if cards, err := back.Cards.Decode(); err != nil || len(cards) != 1 || cards[0].Last4 != "4242" {
		t.Errorf("read back by encoding/json: %+v, %v", cards, err)
	}
}
