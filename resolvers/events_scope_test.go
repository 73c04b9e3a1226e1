package resolvers

import (
	"encoding/json"
	"testing"

	"github.com/fingraph/fingraph/events"
)

// Each scope lets through exactly its events: banking-side events (both
// sources alike) by corporation, payments events by the payments flag.
func TestEventScopeSeesBankingSideEventsByCorporationOnly(t *testing.T) {
	ev := func(source, corp string) *events.Event {
		return &events.Event{Source: source, ID: "x", Name: "N", Payload: json.RawMessage(`{"corporation_id":"` + corp + `"}`)}
	}
	person := &eventScope{corporations: map[string]bool{"a": true}}
	staff := &eventScope{allCorporations: true, payments: true}
	api := &eventScope{corporations: map[string]bool{"a": true}, payments: true}
	for _, tc := range []struct {
		name  string
		sc    *eventScope
		e     *events.Event
		wants bool
	}{
		{"person, own gateway", person, ev(events.SourceGateway, "a"), true},
		{"person, own banking", person, ev(events.SourceBanking, "a"), true},
		{"person, other banking", person, ev(events.SourceBanking, "b"), false},
		{"person, other gateway", person, ev(events.SourceGateway, "b"), false},
		{"person, no corporation", person, ev(events.SourceBanking, ""), false},
		{"person, payments", person, ev(events.SourcePayments, "a"), false},
		{"person, unknown source", person, ev("other", "a"), false},
		{"staff, any banking", staff, ev(events.SourceBanking, "b"), true},
		{"staff, payments", staff, ev(events.SourcePayments, ""), true},
		{"api client, payments", api, ev(events.SourcePayments, ""), true},
		{"api client, other banking", api, ev(events.SourceBanking, "b"), false},
	} {
		if got := tc.sc.sees(tc.e); got != tc.wants {
			t.Errorf("%s: sees %v, want %v", tc.name, got, tc.wants)
		}
	}
}
