package resolvers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// More principals of the persons tests: Ben, a person of the other
// corporation, and Dace, Anna's colleague.
const (
	benOtherPerson = "person-ben-other"
	dacePerson     = "person-dace"
)

var (
	ben  = principal{kind: session.Person, id: benOtherPerson, personID: benOtherPerson, corporationID: otherCorp}
	dace = principal{kind: session.Person, id: dacePerson, personID: dacePerson, corporationID: demoCorp}
)

// withColleagues adds Dace to the demo corporation and Ben to the other
// one, with their sign-in accounts.
func withColleagues(h *harness) {
	h.banking.persons.add(demoCorp, &bankingPerson{ID: dacePerson, FirstName: "Dace", LastName: "Demo", Email: "dace@demo.test"})
	h.banking.persons.add(otherCorp, &bankingPerson{ID: benOtherPerson, FirstName: "Ben", LastName: "Other", Email: "ben@other.test"})
	h.banking.accounts["dace@demo.test"] = dace
	h.banking.accounts["ben@other.test"] = ben
}

// A principal reads the persons of its own corporation only: another
// corporation's person is null to it, as one that does not exist (the
// upstream's 404), and the listing holds its own corporation's; staff see
// everyone.
func TestPersonsStayInTheirCorporation(t *testing.T) {
	t.Parallel()
	const q = `query($id: ID!) { person(id: $id) { firstName corporationId } persons(first: 50) { edges { node { firstName } } totalCount } }`
	for _, tc := range []struct {
		who    principal
		anna   bool
		listed string
	}{
		{person, true, "[Anna Dace]"},
		{apiClient, true, "[Anna Dace]"},
		{ben, false, "[Ben]"},
		{outsider, false, "[Ben]"},
		{staff, true, "[Anna Dace Ben]"},
	} {
		h := newHarness(t)
		withColleagues(h)
		var got struct {
			Person *struct {
				FirstName     string
				CorporationID string
			}
			personsAnswer
		}
		h.as(tc.who).exec(q, map[string]any{"id": relay.ID(relay.Person, demoPerson)}).decode(t, &got)
		if (got.Person != nil) != tc.anna {
			t.Fatalf("%s reads Anna: %+v, want %v", tc.who.id, got.Person, tc.anna)
		}
		if got.Person != nil && got.Person.CorporationID != relay.ID(relay.Corporation, demoCorp) {
			t.Fatalf("Anna's corporationId %q, want the demo corporation's global id", got.Person.CorporationID)
		}
		if names := fmt.Sprint(got.names()); names != tc.listed || got.Persons.TotalCount != len(got.names()) {
			t.Fatalf("%s lists %s of %d, want %s", tc.who.id, names, got.Persons.TotalCount, tc.listed)
		}
	}
}

// A person's screening is shown to staff and to the person themselves;
// to a colleague or the corporation's API client it is null.
func TestScreeningIsForStaffAndThePersonThemselves(t *testing.T) {
	t.Parallel()
	const q = `query($id: ID!) { person(id: $id) { screeningInfo { underReview profile { sanctionsListsEntity } } } }`
	for _, tc := range []struct {
		who  principal
		sees bool
	}{{staff, true}, {person, true}, {dace, false}, {apiClient, false}} {
		h := newHarness(t)
		withColleagues(h)
		review := true
		h.banking.persons.list[0].ScreeningInfo = &banking.ScreeningInfo{IsPersonUnderReview: &review,
			PersonProfile: &banking.ScreeningProfile{SanctionsListsEntity: true}}
		var got struct {
			Person struct {
				ScreeningInfo *struct {
					UnderReview bool
					Profile     struct{ SanctionsListsEntity bool }
				}
			}
		}
		h.as(tc.who).exec(q, map[string]any{"id": relay.ID(relay.Person, demoPerson)}).decode(t, &got)
		s := got.Person.ScreeningInfo
		if (s != nil) != tc.sees || (s != nil && (!s.UnderReview || !s.Profile.SanctionsListsEntity)) {
			t.Fatalf("%s reads Anna's screening as %+v, want shown: %v", tc.who.id, s, tc.sees)
		}
	}
}

// An upstream person becomes a Person field by field: optional values the
// upstream leaves empty are null, values the graph does not know (a
// gender, a date) are null instead of an error, roles read from either of
// the upstream's shapes, a block time makes the person blocked.
func TestPersonsMapFromTheUpstream(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	deleted := banking.Timestamp{Time: time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)}
	own, twoFA := 12.5, true
	h.banking.persons.add(demoCorp, &bankingPerson{ID: "p-full", FirstName: "Full", LastName: "Person", Email: "full@demo.test",
		Gender: "female", Type: "Consumer", Ownership: &own, Is2FAEnabled: &twoFA, DeletedAt: &deleted,
		PersonContact: banking.PersonContact{DateOfBirth: "1990-02-03", Phone: "+37120000000", Country: "LV", City: "Riga"},
		Roles:         []json.RawMessage{json.RawMessage(`"r1"`), json.RawMessage(`{"id":"r2","name":"Admin"}`), json.RawMessage(`""`)},
		CreatedAt:     banking.Timestamp{Time: time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC)}})
	h.banking.persons.add(demoCorp, &bankingPerson{ID: "p-odd", FirstName: "Odd", LastName: "Values", Gender: "robot",
		PersonContact: banking.PersonContact{DateOfBirth: "03.02.1990"}})
	const q = `query($id: ID!) { person(id: $id) {
  id upstreamId email phone otherPhone country city street gender dateOfBirth type isBlocked blockedAt
  ownership isTwoFactorEnabled roles createdAt updatedAt corporation { name } } }`
	type answer struct {
		Person map[string]any
	}
	var full, odd answer
	h.as(staff).exec(q, map[string]any{"id": relay.ID(relay.Person, "p-full")}).decode(t, &full)
	h.exec(q, map[string]any{"id": relay.ID(relay.Person, "p-odd")}).decode(t, &odd)
	want := map[string]any{"id": relay.ID(relay.Person, "p-full"), "upstreamId": "p-full", "email": "full@demo.test",
		"phone": "+37120000000", "otherPhone": nil, "country": "LV", "city": "Riga", "street": nil, "gender": "FEMALE",
		"dateOfBirth": "1990-02-03", "type": "CONSUMER", "isBlocked": true, "blockedAt": "2030-05-06T07:08:09Z",
		"ownership": 12.5, "isTwoFactorEnabled": true, "roles": []any{"r1", "r2"}, "createdAt": "2029-01-01T00:00:00Z",
		"updatedAt": nil, "corporation": map[string]any{"name": "Demo Corp"}}
	if got, w := fmt.Sprint(full.Person), fmt.Sprint(want); got != w {
		t.Fatalf("person\n got %s\nwant %s", got, w)
	}
	if p := odd.Person; p["gender"] != nil || p["dateOfBirth"] != nil || p["type"] != "EMPLOYEE" || p["isBlocked"] != false ||
		p["blockedAt"] != nil || p["email"] != nil || fmt.Sprint(p["roles"]) != "[]" || p["isTwoFactorEnabled"] != nil {
		t.Fatalf("a person with values the graph does not know: %v", p)
	}
}

const createPersonMutation = `mutation($in: CreatePersonInput!) { createPerson(input: $in) { id upstreamId firstName corporationId corporation { name } } }`

type createdPerson struct {
	CreatePerson struct {
		ID, UpstreamID, FirstName, CorporationID string
		Corporation                              struct{ Name string }
	}
}

// newPersonInput is a valid createPerson input, edited by the given
// key-value pairs (nil deletes).
func newPersonInput(kv ...any) map[string]any {
	in := map[string]any{"firstName": "Ilze", "lastName": "Ozola", "email": "ilze@demo.test", "gender": "FEMALE"}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(in, kv[i].(string))
		} else {
			in[kv[i].(string)] = kv[i+1]
		}
	}
	return map[string]any{"in": in}
}

// createPerson adds a person to the caller's own corporation (staff name
// it), answers the person with its corporation, and announces it there.
func TestCreatePersonAddsToTheCallersCorporation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var got createdPerson
	h.as(apiClient).exec(createPersonMutation, newPersonInput()).decode(t, &got)
	p := got.CreatePerson
	if p.FirstName != "Ilze" || p.CorporationID != relay.ID(relay.Corporation, demoCorp) || p.Corporation.Name != "Demo Corp" ||
		p.ID != relay.ID(relay.Person, p.UpstreamID) {
		t.Fatalf("created %+v, want Ilze of Demo Corp with her global id", p)
	}
	if got := h.events.announced(t); !slices.Equal(got, []string{"PersonCreated " + demoCorp}) {
		t.Fatalf("announced %v, want the creation in the demo corporation", got)
	}

	h.as(staff).exec(createPersonMutation, newPersonInput("email", "ivo@other.test", "corporationId", relay.ID(relay.Corporation, otherCorp))).decode(t, &got)
	if got.CreatePerson.Corporation.Name != "Other Corp" {
		t.Fatalf("staff created %+v, want a person of the corporation named", got.CreatePerson)
	}

	// An e-mail the upstream already has is its refusal (409), with its
	// field; nothing is announced.
	e := refused(t, h.as(person).exec(createPersonMutation, newPersonInput("email", "anna@demo.test")), "UPSTREAM_REJECTED", "")
	if u := e.Upstream(); u["status"] != 409.0 || u["field"] != "email" {
		t.Fatalf("a taken e-mail: extensions.upstream %v, want the 409 on email", u)
	}
	if n := len(h.events.announced(t)); n != 2 {
		t.Fatalf("%d announcements, want the two creations", n)
	}
}

// Bad createPerson input is BAD_USER_INPUT naming the GraphQL field, before
// any upstream call.
func TestCreatePersonChecksItsInputFirst(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name  string
		who   principal
		vars  map[string]any
		field string
	}{
		{"first name required", person, newPersonInput("firstName", " "), "input.firstName"},
		{"first name too long", person, newPersonInput("firstName", long(101)), "input.firstName"},
		{"last name too long", person, newPersonInput("lastName", long(101)), "input.lastName"},
		{"e-mail required", person, newPersonInput("email", nil), "input.email"},
		{"e-mail of a UBO director", person, newPersonInput("email", nil, "isUbo", true, "isDirector", true), "input.email"},
		{"e-mail of a UBO with roles", person, newPersonInput("email", nil, "isUbo", true, "roles", []string{"r1"}), "input.email"},
		{"e-mail malformed", person, newPersonInput("email", "not-an-email"), "input.email"},
		{"date of birth", person, newPersonInput("dateOfBirth", "1990-13-01"), "input.dateOfBirth"},
		{"date of birth format", person, newPersonInput("dateOfBirth", "01.02.1990"), "input.dateOfBirth"},
		{"country two letters", person, newPersonInput("country", "LVA"), "input.country"},
		{"country uppercase", person, newPersonInput("country", "lv"), "input.country"},
		{"nationality", person, newPersonInput("nationality", "L1"), "input.nationality"},
		{"street", person, newPersonInput("street", long(65)), "input.street"},
		{"city", person, newPersonInput("city", long(65)), "input.city"},
		{"region", person, newPersonInput("region", long(101)), "input.region"},
		{"post code", person, newPersonInput("postCode", long(11)), "input.postCode"},
		{"social security number", person, newPersonInput("socialSecurityNumber", long(101)), "input.socialSecurityNumber"},
		{"phone", person, newPersonInput("phone", long(33)), "input.phone"},
		{"blank role", person, newPersonInput("roles", []string{"r1", " "}), "input.roles"},
		{"the corporation is for staff", person, newPersonInput("corporationId", relay.ID(relay.Corporation, demoCorp)), "input.corporationId"},
		{"staff name the corporation", staff, newPersonInput(), "input.corporationId"},
		{"empty idempotency key", person, newPersonInput("idempotencyKey", " "), "input.idempotencyKey"},
		{"idempotency key too long", person, newPersonInput("idempotencyKey", long(256)), "input.idempotencyKey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			refused(t, h.as(tc.who).exec(createPersonMutation, tc.vars), "BAD_USER_INPUT", tc.field)
			h.noUpstreamCall(t, 0, "bad input")
		})
	}
	// A value outside an enum is refused by the schema, on its path.
	h := newHarness(t)
	resp := h.as(person).exec(createPersonMutation, newPersonInput("gender", "ROBOT"))
	if e := refused(t, resp, "BAD_USER_INPUT", ""); !strings.Contains(fmt.Sprint(e.Path), "gender") {
		t.Fatalf("gender ROBOT: %s, want a refusal on gender", resp)
	}
	h.noUpstreamCall(t, 0, "an unknown gender")
}

// createPerson under an idempotency key creates once: a retry answers the
// person created first (read again, not created again), the same key with
// another input is refused naming the key, and keys are the principal's:
// another principal's same key is another key.
func TestCreatePersonWithAKeyCreatesOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	vars := newPersonInput("idempotencyKey", "person-1")
	var first, retry, other createdPerson
	h.as(person).exec(createPersonMutation, vars).decode(t, &first)
	h.exec(createPersonMutation, vars).decode(t, &retry)
	if retry.CreatePerson != first.CreatePerson || h.banking.persons.calls("Create") != 1 {
		t.Fatalf("the retry answered %+v after %+v, %d creations; want the first person, created once",
			retry.CreatePerson, first.CreatePerson, h.banking.persons.calls("Create"))
	}
	if n := len(h.events.announced(t)); n != 1 {
		t.Fatalf("%d announcements, want one", n)
	}
	refused(t, h.exec(createPersonMutation, newPersonInput("idempotencyKey", "person-1", "firstName", "Other")), "BAD_USER_INPUT", "input.idempotencyKey")
	if n := h.banking.persons.calls("Create"); n != 1 {
		t.Fatalf("the refused key created: %d creations", n)
	}

	h.as(dace).exec(createPersonMutation, newPersonInput("idempotencyKey", "person-1", "email", "ilze2@demo.test")).decode(t, &other)
	if other.CreatePerson.ID == first.CreatePerson.ID || h.banking.persons.calls("Create") != 2 {
		t.Fatalf("Dace's key answered Anna's person %+v", other.CreatePerson)
	}
}

const updatePersonMutation = `mutation($in: UpdatePersonInput!) { updatePerson(input: $in) { firstName city ownership roles } }`

// updatePersonInput names person id with the given key-value pairs.
func updatePersonInput(id string, kv ...any) map[string]any {
	in := map[string]any{"id": relay.ID(relay.Person, id)}
	for i := 0; i+1 < len(kv); i += 2 {
		in[kv[i].(string)] = kv[i+1]
	}
	return map[string]any{"in": in}
}

// updatePerson checks its input before the upstream: staff-only fields are
// FORBIDDEN to others, currentPassword to all but persons, and each bad
// value is BAD_USER_INPUT naming its field.
func TestUpdatePersonChecksItsInputFirst(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name  string
		who   principal
		vars  map[string]any
		code  string
		field string
	}{
		{"e-mail by a person", person, updatePersonInput(dacePerson, "email", "x@demo.test"), "FORBIDDEN", "input.email"},
		{"phone by a person", person, updatePersonInput(dacePerson, "phone", "+37120000099"), "FORBIDDEN", "input.phone"},
		{"phone by an API client", apiClient, updatePersonInput(dacePerson, "phone", "+37120000099"), "FORBIDDEN", "input.phone"},
		{"two-factor by a person", person, updatePersonInput(dacePerson, "isTwoFactorEnabled", true), "FORBIDDEN", "input.isTwoFactorEnabled"},
		{"current password by staff", staff, updatePersonInput(demoPerson, "currentPassword", "x"), "FORBIDDEN", "input.currentPassword"},
		{"first name blank", person, updatePersonInput(dacePerson, "firstName", ""), "BAD_USER_INPUT", "input.firstName"},
		{"last name too long", person, updatePersonInput(dacePerson, "lastName", long(101)), "BAD_USER_INPUT", "input.lastName"},
		{"country", person, updatePersonInput(dacePerson, "country", "Latvia"), "BAD_USER_INPUT", "input.country"},
		{"nationality", person, updatePersonInput(dacePerson, "nationality", "lv"), "BAD_USER_INPUT", "input.nationality"},
		{"city", person, updatePersonInput(dacePerson, "city", long(65)), "BAD_USER_INPUT", "input.city"},
		{"region", person, updatePersonInput(dacePerson, "region", long(101)), "BAD_USER_INPUT", "input.region"},
		{"post code", person, updatePersonInput(dacePerson, "postCode", long(11)), "BAD_USER_INPUT", "input.postCode"},
		{"street", person, updatePersonInput(dacePerson, "street", long(65)), "BAD_USER_INPUT", "input.street"},
		{"date of birth", person, updatePersonInput(dacePerson, "dateOfBirth", "1990-02-30"), "BAD_USER_INPUT", "input.dateOfBirth"},
		{"social security number", person, updatePersonInput(dacePerson, "socialSecurityNumber", long(101)), "BAD_USER_INPUT", "input.socialSecurityNumber"},
		{"ownership above 100", person, updatePersonInput(dacePerson, "ownership", 100.5), "BAD_USER_INPUT", "input.ownership"},
		{"ownership below 0", person, updatePersonInput(dacePerson, "ownership", -1), "BAD_USER_INPUT", "input.ownership"},
		{"staff's e-mail malformed", staff, updatePersonInput(dacePerson, "email", "dace@"), "BAD_USER_INPUT", "input.email"},
		{"blank role", staff, updatePersonInput(dacePerson, "roles", []string{""}), "BAD_USER_INPUT", "input.roles"},
		{"password without its confirmation", staff, updatePersonInput(dacePerson, "password", "Quiet-lantern-7"), "BAD_USER_INPUT", "input.confirmPassword"},
		{"own password without the current one", person, updatePersonInput(demoPerson, "password", "Quiet-lantern-7", "confirmPassword", "Quiet-lantern-7"), "BAD_USER_INPUT", "input.currentPassword"},
		{"no id", staff, map[string]any{"in": map[string]any{"id": "", "city": "Riga"}}, "BAD_USER_INPUT", "input.id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			withColleagues(h)
			refused(t, h.as(tc.who).exec(updatePersonMutation, tc.vars), tc.code, tc.field)
			h.noUpstreamCall(t, 0, "a refused update")
		})
	}
}

// updatePerson changes what it is sent and answers the person as it is
// now; a change of someone's password or roles ends that person's
// sessions (keeping the one that made the change, when it is hers), and a
// failure to record that end is logged, never answered: the change is made.
func TestUpdatePersonEndsTheAuthorityItChanges(t *testing.T) {
	t.Parallel()
	const next = "Quiet-lantern-harbour-7"
	h := newHarness(t)
	withColleagues(h)
	a := h.withAuthority()
	var got struct {
		UpdatePerson struct {
			FirstName string
			City      *string
			Ownership *float64
			Roles     []string
		}
	}
	h.as(person).exec(updatePersonMutation, updatePersonInput(dacePerson, "city", "Jelgava", "ownership", 25)).decode(t, &got)
	if u := got.UpdatePerson; u.FirstName != "Dace" || u.City == nil || *u.City != "Jelgava" || u.Ownership == nil || *u.Ownership != 25 {
		t.Fatalf("updated %+v, want Dace in Jelgava with 25%%", u)
	}
	if calls := a.recorded(); len(calls) != 0 {
		t.Fatalf("a change of address ended authority: %v", calls)
	}

	// Anna changes her own password: her other sessions end, this one stays.
	h.as(person).exec(updatePersonMutation, updatePersonInput(demoPerson, "password", next, "confirmPassword", next, "currentPassword", demoPassword)).decode(t, &got)
	own, _ := h.store.Get(t.Context(), h.token)
	// Anna, then staff, change Dace's roles: all of Dace's sessions end.
	h.as(person).exec(updatePersonMutation, updatePersonInput(dacePerson, "roles", []string{"r0"})).decode(t, &got)
	h.as(staff).exec(updatePersonMutation, updatePersonInput(dacePerson, "roles", []string{"r1"})).decode(t, &got)
	if !slices.Equal(got.UpdatePerson.Roles, []string{"r1"}) {
		t.Fatalf("roles %v, want [r1]", got.UpdatePerson.Roles)
	}
	want := []string{"revoke person:" + demoPerson + " password_changed keep=" + own.ID,
		"revoke person:" + dacePerson + " roles_changed keep=", "revoke person:" + dacePerson + " roles_changed keep="}
	if calls := a.recorded(); !slices.Equal(calls, want) {
		t.Fatalf("authority calls %v, want %v", calls, want)
	}
	if h.banking.persons.passwordOf(demoPerson) != next {
		t.Fatal("the upstream did not get the new password")
	}

	a.fail = errors.New("the bucket is down")
	h.as(staff).exec(updatePersonMutation, updatePersonInput(dacePerson, "roles", []string{"r2"})).decode(t, &got)
	if !h.logged("could not end the sessions of a changed person") {
		t.Fatal("a failed end of authority was not logged")
	}
}

// A new password that is the account's own e-mail is refused before the
// change is sent, as the other rules are: the e-mail is read (the person,
// or the caller's own profile), the password never sent.
func TestNewPasswordsAreCheckedBeforeTheChange(t *testing.T) {
	t.Parallel()
	const updateMe = `mutation($in: UpdateMeInput!) { updateMe(input: $in) { id } }`
	for _, tc := range []struct {
		name, query string
		who         principal
		vars        map[string]any
		sent        string
	}{
		{"staff, another's e-mail", updatePersonMutation, staff,
			updatePersonInput(dacePerson, "password", "dace@demo.test", "confirmPassword", "dace@demo.test"), "Update"},
		{"a person, her own", updatePersonMutation, person,
			updatePersonInput(demoPerson, "password", "anna@demo.test", "confirmPassword", "anna@demo.test", "currentPassword", demoPassword), "Update"},
		{"updateMe", updateMe, person,
			map[string]any{"in": map[string]any{"password": "anna@demo.test", "confirmPassword": "anna@demo.test", "currentPassword": demoPassword}}, "UpdateMe"},
	} {
		h := newHarness(t)
		withColleagues(h)
		e := refused(t, h.as(tc.who).exec(tc.query, tc.vars), "BAD_USER_INPUT", "input.password")
		if strings.Contains(e.Message, "@demo.test") || !strings.Contains(e.Message, "input.password must") {
			t.Fatalf("%s: %q, want the rule named and the password not repeated", tc.name, e.Message)
		}
		if n := h.banking.persons.calls(tc.sent); n != 0 {
			t.Fatalf("%s: the refused password was sent", tc.name)
		}
	}

	// The rules that need no read cost no call at all.
	for _, pw := range []string{"12345678", "        ", demoPassword, "password1", "short"} {
		h := newHarness(t)
		e := refused(t, h.as(person).exec(updateMe, map[string]any{"in": map[string]any{"currentPassword": demoPassword, "password": pw, "confirmPassword": pw}}),
			"BAD_USER_INPUT", "input.password")
		if !strings.Contains(e.Message, "input.password must") {
			t.Fatalf("new password %q: %q, want the rule named", pw, e.Message)
		}
		h.noUpstreamCall(t, 0, "a weak password")
	}
}

// blockPerson announces the end of the person's authority before the
// upstream call, records it once the upstream blocked her, and answers the
// person as the upstream now shows her; an upstream refusal withdraws the
// announcement and publishes nothing. restorePerson ends nothing.
func TestBlockAndRestorePerson(t *testing.T) {
	t.Parallel()
	const block = `mutation($in: PersonIdInput!) { blockPerson(input: $in) { upstreamId isBlocked blockedAt } }`
	const restore = `mutation($in: PersonIdInput!) { restorePerson(input: $in) { upstreamId isBlocked blockedAt } }`
	h := newHarness(t)
	withColleagues(h)
	a := h.withAuthority()
	type answer struct {
		UpstreamID string
		IsBlocked  bool
		BlockedAt  *time.Time
	}
	var got struct {
		BlockPerson   *answer
		RestorePerson *answer
	}
	h.as(staff).exec(block, updatePersonInput(dacePerson)).decode(t, &got)
	if b := got.BlockPerson; b.UpstreamID != dacePerson || !b.IsBlocked || b.BlockedAt == nil {
		t.Fatalf("blockPerson answered %+v, want Dace blocked", b)
	}
	grant := "person:" + dacePerson
	if calls := a.recorded(); !slices.Equal(calls, []string{"announce " + grant + " blocked", "revoke " + grant + " blocked keep="}) {
		t.Fatalf("authority calls %v, want the end announced, then recorded", calls)
	}

	// Anna cannot block herself: only the upstream says so.
	a.calls = nil
	e := refused(t, h.as(person).exec(block, updatePersonInput(demoPerson)), "FORBIDDEN", "")
	if e.Upstream()["status"] != 403.0 {
		t.Fatalf("blocking oneself: %+v, want the upstream's 403", e)
	}
	grant = "person:" + demoPerson
	if calls := a.recorded(); !slices.Equal(calls, []string{"announce " + grant + " blocked", "withdraw " + grant}) {
		t.Fatalf("authority calls %v, want the announcement withdrawn", calls)
	}

	a.calls = nil
	h.as(staff).exec(restore, updatePersonInput(dacePerson)).decode(t, &got)
	if r := got.RestorePerson; r.IsBlocked || r.BlockedAt != nil {
		t.Fatalf("restorePerson answered %+v, want Dace active", r)
	}
	if calls := a.recorded(); len(calls) != 0 {
		t.Fatalf("a restore ended authority: %v", calls)
	}
	if got := h.events.announced(t); !slices.Equal(got, []string{"PersonBlocked " + demoCorp, "PersonRestored " + demoCorp}) {
		t.Fatalf("announced %v, want the block and the restore", got)
	}
	refused(t, h.exec(block, map[string]any{"in": map[string]any{"id": ""}}), "BAD_USER_INPUT", "input.id")
}

// updateMe changes the signed-in person; a new password needs the current
// one, and it ends her other sessions (this one stays), as a change of her
// roles does.
func TestUpdateMe(t *testing.T) {
	t.Parallel()
	const q = `mutation($in: UpdateMeInput!) { updateMe(input: $in) { gender otherPhone roles } }`
	const next = "Quiet-lantern-harbour-7"
	h := newHarness(t)
	a := h.withAuthority()
	var got struct {
		UpdateMe struct {
			Gender, OtherPhone string
			Roles              []string
		}
	}
	h.as(person).exec(q, map[string]any{"in": map[string]any{"gender": "FEMALE", "otherPhone": "+37120000007"}}).decode(t, &got)
	if got.UpdateMe.Gender != "FEMALE" || got.UpdateMe.OtherPhone != "+37120000007" || len(a.recorded()) != 0 {
		t.Fatalf("updateMe answered %+v (authority %v)", got.UpdateMe, a.recorded())
	}
	for _, tc := range []struct {
		in    map[string]any
		field string
	}{
		{map[string]any{"password": next, "confirmPassword": next}, "input.currentPassword"},
		{map[string]any{"currentPassword": demoPassword}, "input.password"},
		{map[string]any{"confirmPassword": next}, "input.password"},
		{map[string]any{"password": next, "confirmPassword": next + "!", "currentPassword": demoPassword}, "input.confirmPassword"},
		{map[string]any{"otherPhone": strings.Repeat("1", 33)}, "input.otherPhone"},
		{map[string]any{"roles": []string{" "}}, "input.roles"},
	} {
		before := h.upstreamCalls()
		refused(t, h.exec(q, map[string]any{"in": tc.in}), "BAD_USER_INPUT", tc.field)
		h.noUpstreamCall(t, before, "bad updateMe input")
	}
	h.exec(q, map[string]any{"in": map[string]any{"password": next, "confirmPassword": next, "currentPassword": demoPassword, "roles": []string{"r1"}}}).decode(t, &got)
	own, _ := h.store.Get(t.Context(), h.token)
	grant := "person:" + demoPerson
	if calls := a.recorded(); !slices.Equal(calls, []string{"revoke " + grant + " password_changed keep=" + own.ID, "revoke " + grant + " roles_changed keep=" + own.ID}) {
		t.Fatalf("authority calls %v", calls)
	}
}

const changePhoneMutation = `mutation($in: ChangeMyPhoneInput!) {
  changeMyPhone(input: $in) { __typename ... on TwoFactorChallenge { maskedPhone } ... on Person { phone } }
}`

// changeMyPhone is two steps: the phone and the current password answer
// the challenge for the new phone, the code then answers the person with
// it. Input is checked first.
func TestChangeMyPhoneInTwoSteps(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(person)
	type answer struct {
		ChangeMyPhone struct {
			Typename    string `json:"__typename"`
			MaskedPhone string
			Phone       string
		}
	}
	in := map[string]any{"phone": "+37129998877", "currentPassword": demoPassword}
	var step1, step2 answer
	h.exec(changePhoneMutation, map[string]any{"in": in}).decode(t, &step1)
	if c := step1.ChangeMyPhone; c.Typename != "TwoFactorChallenge" || c.MaskedPhone != "+3712*****" {
		t.Fatalf("step 1 answered %+v, want the challenge for the new phone", c)
	}
	in["twoFactorCode"] = fakeSMSCode
	h.exec(changePhoneMutation, map[string]any{"in": in}).decode(t, &step2)
	if p := step2.ChangeMyPhone; p.Typename != "Person" || p.Phone != "+37129998877" {
		t.Fatalf("step 2 answered %+v, want Anna with the new phone", p)
	}
	for _, tc := range []struct {
		in    map[string]any
		field string
	}{
		{map[string]any{"phone": "", "currentPassword": demoPassword}, "input.phone"},
		{map[string]any{"phone": "+37129998877", "currentPassword": ""}, "input.currentPassword"},
		{map[string]any{"phone": "+37129998877", "currentPassword": demoPassword, "challengeId": "ch-1"}, "input.twoFactorCode"},
	} {
		before := h.upstreamCalls()
		refused(t, h.exec(changePhoneMutation, map[string]any{"in": tc.in}), "BAD_USER_INPUT", tc.field)
		h.noUpstreamCall(t, before, "bad changeMyPhone input")
	}
}

// A wrong current password, wherever a person gives one (updateMe,
// updatePerson, changeMyPhone), is the upstream's refusal on it and counts
// as a failed sign-in of her account: a session cannot guess it faster than
// a sign-in could, and once limited, the account's sign-in is held back
// too, with no upstream call.
func TestWrongCurrentPasswordsCountTowardTheAccountsSignInLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var in signInAnswer
	h.as(anonymous).exec(signInFull, signInVars("PERSON", "anna@demo.test")).decode(t, &in)
	h.token = in.SignIn.SessionToken
	const next = "Quiet-lantern-harbour-7"
	limitedAt := 0
	for i := 1; i <= 15 && limitedAt == 0; i++ {
		guess := fmt.Sprint("wrong-guess-", i)
		var resp *response
		switch i % 3 {
		case 0:
			resp = h.exec(changePhoneMutation, map[string]any{"in": map[string]any{"phone": "+37129990099", "currentPassword": guess}})
		case 1:
			resp = h.exec(`mutation($in: UpdateMeInput!) { updateMe(input: $in) { id } }`,
				map[string]any{"in": map[string]any{"currentPassword": guess, "password": next, "confirmPassword": next}})
		case 2:
			resp = h.exec(updatePersonMutation, updatePersonInput(demoPerson, "currentPassword", guess, "password", next, "confirmPassword", next))
		}
		switch e := resp.only(t); e.Code() {
		case "RATE_LIMITED":
			limitedAt = i
		case "UPSTREAM_REJECTED":
			if e.Upstream()["field"] != "current_password" {
				t.Fatalf("attempt %d: %s, want the upstream's refusal on current_password", i, resp)
			}
		default:
			t.Fatalf("attempt %d: %s", i, resp)
		}
	}
	if limitedAt != accountBurst+1 {
		t.Fatalf("first RATE_LIMITED at attempt %d, want %d: the account's burst of failures", limitedAt, accountBurst+1)
	}
	before := h.upstreamCalls()
	refused(t, h.as(anonymous).exec(signInFull, signInVars("PERSON", "anna@demo.test")), "RATE_LIMITED", "")
	h.noUpstreamCall(t, before, "a held-back sign-in")
	if h.banking.persons.passwordOf(demoPerson) != demoPassword {
		t.Fatal("a guess changed the password")
	}
}

// The mutations that need no current password are never limited by it:
// a refusal for another reason counts nothing.
func TestOtherRefusalsOfAChangeDoNotCount(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(person)
	for range accountBurst + 2 {
		h.banking.persons.failNext("ChangeMyPhone", bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "phone", "phone must be a phone number"))
		e := refused(t, h.exec(changePhoneMutation, map[string]any{"in": map[string]any{"phone": "+1", "currentPassword": demoPassword}}), "UPSTREAM_REJECTED", "")
		if e.Upstream()["field"] != "phone" {
			t.Fatalf("got %+v", e)
		}
	}
	var ok struct {
		ChangeMyPhone struct {
			Typename string `json:"__typename"`
		}
	}
	h.exec(changePhoneMutation, map[string]any{"in": map[string]any{"phone": "+37129998877", "currentPassword": demoPassword}}).decode(t, &ok)
	if ok.ChangeMyPhone.Typename != "TwoFactorChallenge" {
		t.Fatalf("after other refusals: %+v", ok)
	}
}
