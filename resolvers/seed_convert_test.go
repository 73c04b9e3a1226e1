package resolvers

import (
	"encoding/json"
	"testing"

	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
)

func TestCustomerBalanceEntriesOfAnyShape(t *testing.T) {
	raw := []json.RawMessage{
		json.RawMessage(`{"currency":"EUR","amount":1250}`),
		json.RawMessage(`{"currency":"SEK","amount":9007199254740993}`), // beyond MinorUnits
		json.RawMessage(`{"amount":12.5}`),                              // not whole
		json.RawMessage(`42`),                                           // not an object
	}
	got := toCustomerBalance(raw)
	if len(got) != 4 {
		t.Fatalf("%d entries, want 4", len(got))
	}
	if got[0].Currency == nil || *got[0].Currency != "EUR" || got[0].Amount == nil || *got[0].Amount != 1250 || got[0].Raw == nil {
		t.Errorf("object entry = %+v", got[0])
	}
	if got[1].Amount != nil || got[1].Currency == nil {
		t.Errorf("an amount beyond MinorUnits must read null, currency kept: %+v", got[1])
	}
	if got[2].Amount != nil {
		t.Errorf("a fractional amount must read null: %+v", got[2])
	}
	if got[3].Raw != nil || got[3].Amount != nil || got[3].Currency != nil {
		t.Errorf("a non-object entry must be all null: %+v", got[3])
	}
	if toCustomerBalance(nil) == nil {
		t.Error("no entries must be an empty list, not null")
	}
}

func TestSubscriptionDates(t *testing.T) {
	subs := toSubscriptions([]payments.Subscription{{Start: "2026-01-31", Due: "2026-02-28T23:30:00Z"}, {Start: "soon"}})
	if subs[0].Start == nil || subs[0].Start.Format(model.DateLayout) != "2026-01-31" || subs[0].Due == nil || subs[0].Due.Format(model.DateLayout) != "2026-02-28" {
		t.Errorf("dates = %+v %+v", subs[0].Start, subs[0].Due)
	}
	if subs[1].Start != nil || subs[1].Items != nil {
		t.Errorf("an unreadable date and absent items must be null: %+v", subs[1])
	}
}

func TestPersonScreeningBothShapes(t *testing.T) {
	yes := true
	single := toPersonScreening(&banking.ScreeningInfo{IsPersonUnderReview: &yes, PersonProfile: &banking.ScreeningProfile{SanctionsListsEntity: true}})
	if single.UnderReview == nil || !*single.UnderReview || single.Status != nil || single.Profile == nil || !single.Profile.SanctionsListsEntity {
		t.Errorf("single person's screening = %+v", single)
	}
	listed := toPersonScreening(&banking.ScreeningInfo{Status: "hit", Profile: &banking.ScreeningProfile{BoardMember: true}})
	if listed.UnderReview != nil || listed.Status == nil || *listed.Status != "hit" || listed.Profile == nil || !listed.Profile.BoardMember {
		t.Errorf("listing's screening = %+v", listed)
	}
	if toPersonScreening(nil) != nil {
		t.Error("no screening must be null")
	}
}

func TestWhoMaySeeScreening(t *testing.T) {
	for _, tc := range []struct {
		s    *session.Session
		want bool
	}{
		{nil, false},
		{&session.Session{Kind: session.Staff}, true},
		{&session.Session{Kind: session.Person, PersonID: "p1"}, true},
		{&session.Session{Kind: session.Person, PersonID: "p2"}, false},
		{&session.Session{Kind: session.Person}, false},
		{&session.Session{Kind: session.APIClient, PrincipalID: "p1"}, false},
		{&session.Session{Kind: session.Introducer}, false},
	} {
		if got := maySeeScreening(tc.s, "p1"); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestRoleIDsFromStringsOrObjects(t *testing.T) {
	p := &banking.Person{Roles: []json.RawMessage{json.RawMessage(`"r1"`), json.RawMessage(`{"id":"r2","name":"x"}`), json.RawMessage(`""`), json.RawMessage(`7`)}}
	got := toPerson(p).Roles
	if len(got) != 2 || got[0] != "r1" || got[1] != "r2" {
		t.Errorf("roles = %v, want [r1 r2]", got)
	}
	if roles := toPerson(&banking.Person{}).Roles; roles == nil {
		t.Error("no roles must be an empty list, not null")
	}
}
