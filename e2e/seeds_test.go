package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The fields and updates of both specs that the graph shows late: a
// customer's balance and subscriptions, a person's roles, questionnaire and
// screening, a corporation's screening, and the password change.

const (
	katiID = "e0000000-0000-4000-8000-000000000012"
)

func TestIntrospectionShowsTheSeedFields(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	fields := func(typ string) []string {
		var d struct {
			Type *struct {
				Fields []struct {
					Name string `json:"name"`
				} `json:"fields"`
				InputFields []struct {
					Name string `json:"name"`
				} `json:"inputFields"`
			} `json:"__type"`
		}
		g.query(t, `query($n: String!) { __type(name: $n) { fields { name } inputFields { name } } }`, map[string]any{"n": typ}).decode(t, &d)
		if d.Type == nil {
			t.Fatalf("no type %s", typ)
		}
		var names []string
		for _, f := range d.Type.Fields {
			names = append(names, f.Name)
		}
		for _, f := range d.Type.InputFields {
			names = append(names, f.Name)
		}
		return names
	}
	for typ, want := range map[string][]string{
		"Customer":          {"balance", "subscription"},
		"Person":            {"roles", "screeningInfo", "isQuestionnaireFilled", "politicalInstitution", "positionInPoliticalInstitution"},
		"Corporation":       {"isQuestionnaireFilled", "overallScreeningInfo"},
		"UpdateMeInput":     {"currentPassword", "password", "confirmPassword", "isQuestionnaireFilled", "roles", "politicalInstitution", "positionInPoliticalInstitution"},
		"UpdatePersonInput": {"currentPassword", "password", "confirmPassword", "isQuestionnaireFilled", "roles", "politicalInstitution", "positionInPoliticalInstitution"},
	} {
		got := fields(typ)
		for _, f := range want {
			if !slices.Contains(got, f) {
				t.Errorf("%s has no %s: %v", typ, f, got)
			}
		}
	}
}

type customerAccount struct {
	Number  string `json:"number"`
	Balance []struct {
		Currency *string `json:"currency"`
		Amount   *int64  `json:"amount"`
		Raw      map[string]any
	} `json:"balance"`
	Subscription []struct {
		ID       *string `json:"id"`
		Start    *string `json:"start"`
		Due      *string `json:"due"`
		Currency *string `json:"currency"`
		Callback *string `json:"callback"`
		Items    *struct {
			Shape string `json:"shape"`
			Total int64  `json:"total"`
		} `json:"items"`
	} `json:"subscription"`
}

const customerAccountFields = `number balance { currency amount raw } subscription { id start due currency callback items { shape total } }`

func TestCustomerBalanceAndSubscription(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	op := g.as(g.signInAPI(t))

	var d struct {
		Customers []customerAccount `json:"customers"`
	}
	op.query(t, `{ customers { `+customerAccountFields+` } }`, nil).decode(t, &d)
	byNumber := map[string]customerAccount{}
	for _, c := range d.Customers {
		byNumber[c.Number] = c
	}
	anna, ok := byNumber["C-1001"]
	if !ok {
		t.Fatalf("seeded customer C-1001 missing: %+v", d.Customers)
	}
	if len(anna.Balance) != 1 || deref(anna.Balance[0].Currency) != "EUR" || anna.Balance[0].Amount == nil || *anna.Balance[0].Amount != 1250 {
		t.Errorf("C-1001 balance = %+v, want one EUR 1250 entry", anna.Balance)
	}
	if len(anna.Subscription) != 1 {
		t.Fatalf("C-1001 subscriptions = %+v, want one", anna.Subscription)
	}
	s := anna.Subscription[0]
	if deref(s.ID) == "" || deref(s.Currency) != "EUR" || !strings.HasPrefix(deref(s.Callback), "https://") ||
		s.Items == nil || s.Items.Shape != "ITEM" || s.Items.Total != 12000 || s.Start == nil || s.Due == nil || *s.Due <= *s.Start {
		t.Errorf("C-1001 subscription = %+v", s)
	}
	studio := byNumber["C-1002"]
	if len(studio.Balance) != 2 || len(studio.Subscription) != 1 || studio.Subscription[0].Items == nil || studio.Subscription[0].Items.Shape != "LIST" {
		t.Errorf("C-1002 = %+v", studio)
	}

	// A new customer: balance empty (the spec's rule), no subscription.
	id, _ := createCustomer(t, op)
	var one struct {
		Customer *customerAccount `json:"customer"`
	}
	op.query(t, `query($id: ID!) { customer(id: $id) { `+customerAccountFields+` } }`, map[string]any{"id": id}).decode(t, &one)
	if one.Customer == nil || one.Customer.Balance == nil || len(one.Customer.Balance) != 0 || one.Customer.Subscription == nil || len(one.Customer.Subscription) != 0 {
		t.Errorf("new customer = %+v, want empty balance and subscription lists", one.Customer)
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

type screeningView struct {
	UnderReview *bool   `json:"underReview"`
	Status      *string `json:"status"`
	Profile     *struct {
		PoliticallyExposed       bool `json:"politicallyExposed"`
		SanctionsListsEntity     bool `json:"sanctionsListsEntity"`
		RelativeOrCloseAssociate bool `json:"relativeOrCloseAssociate"`
		BoardMember              bool `json:"boardMember"`
	} `json:"profile"`
}

const screeningFields = `screeningInfo { underReview status profile { politicallyExposed sanctionsListsEntity relativeOrCloseAssociate boardMember } }`

// screeningOf reads one person's screening as the session sees it.
func (g *testGateway) screeningOf(t *testing.T, token, personID string) *screeningView {
	t.Helper()
	var d struct {
		Person *struct {
			ScreeningInfo *screeningView `json:"screeningInfo"`
		} `json:"person"`
	}
	g.queryAs(t, token, `query($id: ID!) { person(id: $id) { `+screeningFields+` } }`, map[string]any{"id": personID}).decode(t, &d)
	if d.Person == nil {
		t.Fatalf("person %s not visible", personID)
	}
	return d.Person.ScreeningInfo
}

func TestScreeningIsShownToStaffAndThePersonOnly(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	staff := g.signInStaff(t)
	anna := g.signInPerson(t, "anna@demo.test")
	dace := g.signInPerson(t, "dace@demo.test")
	api := g.signInAPI(t)

	// Staff see Dace's: a politically exposed council member under review.
	sc := g.screeningOf(t, staff, daceID)
	if sc == nil || sc.UnderReview == nil || !*sc.UnderReview || sc.Profile == nil || !sc.Profile.PoliticallyExposed || sc.Profile.SanctionsListsEntity {
		t.Fatalf("staff's view of Dace's screening = %+v", sc)
	}
	// Dace sees her own.
	if sc := g.screeningOf(t, dace, daceID); sc == nil || sc.Profile == nil || !sc.Profile.PoliticallyExposed {
		t.Errorf("Dace's own screening = %+v", sc)
	}
	// A colleague (even a director) and the corporation's API client see none.
	if sc := g.screeningOf(t, anna, daceID); sc != nil {
		t.Errorf("Anna sees Dace's screening: %+v", sc)
	}
	if sc := g.screeningOf(t, api, daceID); sc != nil {
		t.Errorf("the API client sees Dace's screening: %+v", sc)
	}
	if sc := g.screeningOf(t, anna, annaID); sc == nil || sc.Profile == nil || !sc.Profile.BoardMember {
		t.Errorf("Anna's own screening = %+v", sc)
	}

	// In a listing the upstream gives a status instead of underReview.
	var list struct {
		Corporation *struct {
			Persons []struct {
				UpstreamID    string         `json:"upstreamId"`
				ScreeningInfo *screeningView `json:"screeningInfo"`
			} `json:"persons"`
		} `json:"corporation"`
	}
	g.queryAs(t, staff, `query($id: ID!) { corporation(id: $id) { persons { upstreamId `+screeningFields+` } } }`,
		map[string]any{"id": secondCorpID}).decode(t, &list)
	if list.Corporation == nil {
		t.Fatal("second corporation not visible to staff")
	}
	statuses := map[string]string{}
	for _, p := range list.Corporation.Persons {
		if p.ScreeningInfo != nil {
			statuses[p.UpstreamID] = deref(p.ScreeningInfo.Status)
		}
	}
	if statuses[katiID] != "hit" || statuses[benID] != "hit" {
		t.Errorf("listing statuses = %v, want hit for Kati and Ben", statuses)
	}

	// The corporation's screening: staff only.
	var corp struct {
		Corporation *struct {
			IsQuestionnaireFilled bool `json:"isQuestionnaireFilled"`
			OverallScreeningInfo  *struct {
				UnderReview           bool `json:"underReview"`
				CorporateUsersProfile *struct {
					PoliticallyExposed bool `json:"politicallyExposed"`
				} `json:"corporateUsersProfile"`
			} `json:"overallScreeningInfo"`
		} `json:"corporation"`
	}
	const corpQuery = `query($id: ID!) { corporation(id: $id) { isQuestionnaireFilled overallScreeningInfo { underReview corporateUsersProfile { politicallyExposed } } } }`
	g.queryAs(t, staff, corpQuery, map[string]any{"id": demoCorpID}).decode(t, &corp)
	if corp.Corporation == nil || !corp.Corporation.IsQuestionnaireFilled || corp.Corporation.OverallScreeningInfo == nil ||
		corp.Corporation.OverallScreeningInfo.CorporateUsersProfile == nil || !corp.Corporation.OverallScreeningInfo.CorporateUsersProfile.PoliticallyExposed {
		t.Errorf("staff's view of the demo corporation = %+v", corp.Corporation)
	}
	if r := g.queryAs(t, anna, corpQuery, map[string]any{"id": demoCorpID}); r.code() != "FORBIDDEN" {
		t.Errorf("a person reading the corporation's screening: %+v", r.Errors)
	}
	if strings.Contains(g.Logs.String(), "politically") || strings.Contains(g.Logs.String(), "sanctions") {
		t.Error("screening data reached the gateway's log")
	}
}

type personFields struct {
	Roles                          []string `json:"roles"`
	IsQuestionnaireFilled          bool     `json:"isQuestionnaireFilled"`
	PoliticalInstitution           *string  `json:"politicalInstitution"`
	PositionInPoliticalInstitution *string  `json:"positionInPoliticalInstitution"`
}

const personFieldsQuery = `roles isQuestionnaireFilled politicalInstitution positionInPoliticalInstitution`

func TestUpdatePersonAndMeSetTheSpecsFields(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	staff := g.signInStaff(t)
	anna := g.signInPerson(t, "anna@demo.test")

	in := map[string]any{"isQuestionnaireFilled": true, "roles": []string{"role-director", "role-finance"},
		"politicalInstitution": "Saeima", "positionInPoliticalInstitution": "Advisor"}
	var me struct {
		UpdateMe personFields `json:"updateMe"`
	}
	g.queryAs(t, anna, `mutation($input: UpdateMeInput!) { updateMe(input: $input) { `+personFieldsQuery+` } }`, map[string]any{"input": in}).decode(t, &me)
	var read struct {
		Person personFields `json:"person"`
	}
	g.queryAs(t, anna, `query($id: ID!) { person(id: $id) { `+personFieldsQuery+` } }`, map[string]any{"id": annaID}).decode(t, &read)
	for name, p := range map[string]personFields{"answer": me.UpdateMe, "read back": read.Person} {
		if !p.IsQuestionnaireFilled || !slices.Equal(p.Roles, []string{"role-director", "role-finance"}) ||
			deref(p.PoliticalInstitution) != "Saeima" || deref(p.PositionInPoliticalInstitution) != "Advisor" {
			t.Errorf("updateMe %s = %+v", name, p)
		}
	}

	in = map[string]any{"id": daceID, "isQuestionnaireFilled": true, "roles": []string{"role-accountant"},
		"politicalInstitution": "Riga City Council", "positionInPoliticalInstitution": "Chair"}
	var up struct {
		UpdatePerson personFields `json:"updatePerson"`
	}
	g.queryAs(t, staff, `mutation($input: UpdatePersonInput!) { updatePerson(input: $input) { `+personFieldsQuery+` } }`, map[string]any{"input": in}).decode(t, &up)
	if p := up.UpdatePerson; !p.IsQuestionnaireFilled || !slices.Equal(p.Roles, []string{"role-accountant"}) || deref(p.PositionInPoliticalInstitution) != "Chair" {
		t.Errorf("updatePerson = %+v", p)
	}
}

func TestPasswordChangeFollowsTheBankingRules(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	staff := g.signInStaff(t)
	dace := g.signInPerson(t, "dace@demo.test")
	anna := g.signInPerson(t, "anna@demo.test")
	const (
		newPassword  = "fresh-horse-battery-41"
		wrongCurrent = "not-the-password-41"
	)
	const updateMe = `mutation($input: UpdateMeInput!) { updateMe(input: $input) { id } }`
	const updatePerson = `mutation($input: UpdatePersonInput!) { updatePerson(input: $input) { id } }`

	refusals := []struct {
		name, token, query string
		input              map[string]any
		code               string
		upstream           int // extensions.upstream.code, 0 when the gateway refuses
		field              string
	}{
		{"no current password", dace, updateMe, map[string]any{"password": newPassword, "confirmPassword": newPassword}, "BAD_USER_INPUT", 0, "input.currentPassword"},
		{"confirmation differs", dace, updateMe, map[string]any{"currentPassword": demoPassword, "password": newPassword, "confirmPassword": newPassword + "x"}, "BAD_USER_INPUT", 0, "input.confirmPassword"},
		{"too short", dace, updateMe, map[string]any{"currentPassword": demoPassword, "password": "short", "confirmPassword": "short"}, "BAD_USER_INPUT", 0, "input.password"},
		{"current password without a new one", dace, updateMe, map[string]any{"currentPassword": demoPassword}, "BAD_USER_INPUT", 0, "input.password"},
		{"wrong current password (10001)", dace, updateMe, map[string]any{"currentPassword": wrongCurrent, "password": newPassword, "confirmPassword": newPassword}, "UPSTREAM_REJECTED", 10001, "current_password"},
		{"staff sends a current password", staff, updatePerson, map[string]any{"id": daceID, "currentPassword": demoPassword, "password": newPassword, "confirmPassword": newPassword}, "FORBIDDEN", 0, "input.currentPassword"},
		{"a person changes another's password", anna, updatePerson, map[string]any{"id": daceID, "currentPassword": demoPassword, "password": newPassword, "confirmPassword": newPassword}, "FORBIDDEN", 0, ""},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			r := g.queryAs(t, tc.token, tc.query, map[string]any{"input": tc.input})
			if r.code() != tc.code {
				t.Fatalf("code = %q, want %s: %+v", r.code(), tc.code, r.Errors)
			}
			if tc.upstream != 0 {
				u := upstreamOf(t, r)
				if fmt.Sprint(u["code"]) != fmt.Sprint(tc.upstream) || u["field"] != tc.field {
					t.Fatalf("upstream = %v, want code %d field %s", u, tc.upstream, tc.field)
				}
			} else if tc.field != "" && fmt.Sprint(r.Errors[0].Extensions["field"]) != tc.field {
				t.Fatalf("field = %v, want %s", r.Errors[0].Extensions["field"], tc.field)
			}
			for _, e := range r.Errors {
				if strings.Contains(e.Message, newPassword) || strings.Contains(e.Message, wrongCurrent) || strings.Contains(e.Message, demoPassword) {
					t.Fatalf("a password is echoed: %q", e.Message)
				}
			}
		})
	}
	// Nothing changed: the old password still signs in.
	g.signInPerson(t, "dace@demo.test")

	// The change itself, then only the new password signs in.
	g.queryAs(t, dace, updateMe, map[string]any{"input": map[string]any{"currentPassword": demoPassword, "password": newPassword, "confirmPassword": newPassword}}).decode(t, &struct{}{})
	if r, _ := g.signIn(t, map[string]any{"kind": "PERSON", "email": "dace@demo.test", "password": demoPassword, "deviceFingerprint": demoFingerprnt}); r.Typename == "SignedIn" {
		t.Error("the old password still signs in after the change")
	}
	if r, resp := g.signIn(t, map[string]any{"kind": "PERSON", "email": "dace@demo.test", "password": newPassword, "deviceFingerprint": demoFingerprnt}); r.Typename != "SignedIn" {
		t.Errorf("the new password does not sign in: %+v %+v", r, resp.Errors)
	}
	// Staff set a password without the current one.
	g.queryAs(t, staff, updatePerson, map[string]any{"input": map[string]any{"id": daceID, "password": demoPassword, "confirmPassword": demoPassword}}).decode(t, &struct{}{})
	g.signInPerson(t, "dace@demo.test")

	for _, secret := range []string{newPassword, wrongCurrent} {
		if strings.Contains(g.Logs.String(), secret) {
			t.Errorf("a password reached the gateway's log")
		}
	}
}

func TestTheNewPersonFieldsCostNoUpstreamCall(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	staff := g.signInStaff(t)
	calls := func(fields string) int {
		g.resetStats(t)
		g.queryAs(t, staff, `query($id: ID!) { corporation(id: $id) { persons { id `+fields+` } } person(id: "`+daceID+`") { id `+fields+` } }`,
			map[string]any{"id": demoCorpID}).decode(t, &struct{}{})
		return bankingCalls(g.stats(t))
	}
	plain := calls("")
	if with := calls(personFieldsQuery + " " + screeningFields); with != plain {
		t.Errorf("roles, questionnaire and screening cost %d banking calls, the plain query %d", with, plain)
	}
}
