package resolvers

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/banking"
)

const corporationsPage = `query($first: Int, $after: String, $sort: CorporationSortField, $dir: SortDirection) {
  corporations(first: $first, after: $after, sortBy: $sort, sortDirection: $dir) {
    edges { cursor node { name } }
    pageInfo { hasNextPage hasPreviousPage endCursor }
    totalCount
  }
}`

type corporationsAnswer struct {
	Corporations struct {
		Edges []struct {
			Cursor string
			Node   struct{ Name string }
		}
		PageInfo struct {
			HasNextPage, HasPreviousPage bool
			EndCursor                    *string
		}
		TotalCount int
	}
}

func (a corporationsAnswer) names() []string {
	var out []string
	for _, e := range a.Corporations.Edges {
		out = append(out, e.Node.Name)
	}
	return out
}

// The corporations connection pages the upstream's listing with its
// cursors, asks the upstream for the order the client chose, and refuses
// a bad page size or a cursor of another listing before any call.
func TestCorporationsPageInTheOrderAsked(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for i := 1; i <= 3; i++ {
		h.banking.corporations.add(&bankingCorporation{ID: fmt.Sprint("corp-", i), Name: fmt.Sprint("Corp ", i)})
	}
	h.as(staff)
	vars := map[string]any{"first": 2, "sort": "COUNTRY", "dir": "DESC"}
	var seen []string
	for pages := 1; ; pages++ {
		var a corporationsAnswer
		h.exec(corporationsPage, vars).decode(t, &a)
		seen = append(seen, a.names()...)
		if a.Corporations.TotalCount != 5 || a.Corporations.PageInfo.HasPreviousPage != (pages > 1) {
			t.Fatalf("page %d: %+v", pages, a.Corporations)
		}
		if !a.Corporations.PageInfo.HasNextPage {
			break
		}
		vars["after"] = *a.Corporations.PageInfo.EndCursor
	}
	if want := "[Demo Corp Other Corp Corp 1 Corp 2 Corp 3]"; fmt.Sprint(seen) != want {
		t.Fatalf("paged %v, want %s", seen, want)
	}
	want := []banking.ListOptions{{SortBy: "country", SortType: "DESC", Limit: 2}, {SortBy: "country", SortType: "DESC", Limit: 2, Offset: 2},
		{SortBy: "country", SortType: "DESC", Limit: 2, Offset: 4}}
	if got := h.banking.corporations.listed; !slices.Equal(got, want) {
		t.Fatalf("the upstream was asked %+v, want %+v", got, want)
	}

	before := h.upstreamCalls()
	for _, tc := range []struct {
		vars  map[string]any
		field string
	}{
		{map[string]any{"first": 0}, "first"},
		{map[string]any{"first": 101}, "first"},
		{map[string]any{"first": 2, "after": vars["after"]}, "after"}, // another order's cursor
		{map[string]any{"first": 2, "after": "b2Zmc2V0OjI"}, "after"},
	} {
		refused(t, h.exec(corporationsPage, tc.vars), "BAD_USER_INPUT", tc.field)
	}
	h.noUpstreamCall(t, before, "a refused page")
}

// A listing of corporations with their persons reads the person listing
// once for all of them, and each corporation gets its own persons.
func TestCorporationsWithTheirPersonsReadThePersonsOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withColleagues(h)
	var got struct {
		Corporations struct {
			Edges []struct {
				Node struct {
					Name    string
					Persons []struct {
						FirstName   string
						Corporation struct{ Name string }
					}
					Settings struct{ AllowedPersonTypes []string }
				}
			}
		}
	}
	h.as(staff).exec(`{ corporations { edges { node { name persons { firstName corporation { name } } settings { allowedPersonTypes } } } } }`, nil).decode(t, &got)
	var lines []string
	for _, e := range got.Corporations.Edges {
		for _, p := range e.Node.Persons {
			if p.Corporation.Name != e.Node.Name {
				t.Fatalf("%s of %s points at %s", p.FirstName, e.Node.Name, p.Corporation.Name)
			}
			lines = append(lines, e.Node.Name+": "+p.FirstName)
		}
		if !slices.Equal(e.Node.Settings.AllowedPersonTypes, []string{"EMPLOYEE"}) {
			t.Fatalf("%s settings %v", e.Node.Name, e.Node.Settings)
		}
	}
	if want := "[Demo Corp: Anna Demo Corp: Dace Other Corp: Ben]"; fmt.Sprint(lines) != want {
		t.Fatalf("persons %v, want %s", lines, want)
	}
	if n := h.banking.persons.calls("List"); n != 1 {
		t.Fatalf("%d person listings for two corporations, want one", n)
	}
}

// corporation(id) answers a corporation the viewer sees, and null for one
// it does not (as for one that does not exist); the id may be the global
// one or the upstream's.
func TestCorporationByIDIsTheViewersOnly(t *testing.T) {
	t.Parallel()
	const q = `query($id: ID!) { corporation(id: $id) { id upstreamId name } }`
	h := newHarness(t)
	type answer struct {
		Corporation *struct{ ID, UpstreamID, Name string }
	}
	var own, raw, other answer
	h.as(apiClient).exec(q, map[string]any{"id": relay.ID(relay.Corporation, demoCorp)}).decode(t, &own)
	h.exec(q, map[string]any{"id": demoCorp}).decode(t, &raw)
	h.exec(q, map[string]any{"id": relay.ID(relay.Corporation, otherCorp)}).decode(t, &other)
	if own.Corporation == nil || own.Corporation.Name != "Demo Corp" || own.Corporation.UpstreamID != demoCorp ||
		own.Corporation.ID != relay.ID(relay.Corporation, demoCorp) || raw.Corporation == nil || *raw.Corporation != *own.Corporation {
		t.Fatalf("own corporation %+v, by its upstream id %+v", own.Corporation, raw.Corporation)
	}
	if other.Corporation != nil {
		t.Fatalf("an API client reads another corporation: %+v", other.Corporation)
	}
	before := h.upstreamCalls()
	refused(t, h.exec(q, map[string]any{"id": ""}), "BAD_USER_INPUT", "id")
	h.noUpstreamCall(t, before, "an empty id")
}

// currentCorporation is the session's corporation as the upstream answers
// it, for persons and API clients; staff and introducers have none (null,
// no call). Its children's reads start with it, for the session's
// corporation, and cost nothing more; when the upstream refuses it, the
// error is the field's and no child answers; when it names another
// corporation than the session's, the children are that one's.
func TestCurrentCorporation(t *testing.T) {
	t.Parallel()
	const q = `{ currentCorporation { name settings { allowedPersonTypes }
  persons { firstName } kycDocuments { name } wallets { id } walletRequisites { id } invoices { id } limits { id }
  cards { id cardholder { firstName } } } }`
	type answer struct {
		CurrentCorporation *struct {
			Name         string
			Settings     struct{ AllowedPersonTypes []string }
			Persons      []struct{ FirstName string }
			KycDocuments []struct{ Name string }
		}
	}
	h := newHarness(t)
	withColleagues(h)
	h.banking.kyc.add(demoCorp, &banking.KYCDocument{ID: "kyc-1", Name: "statutes.pdf"})
	h.banking.corporations.settings[otherCorp] = &banking.CorporationSettings{ID: otherCorp, AllowedPersonTypes: []string{"employee", "consumer"}}
	var got answer
	h.as(person).exec(q, nil).decode(t, &got)
	c := got.CurrentCorporation
	if c == nil || c.Name != "Demo Corp" || len(c.Persons) != 2 || len(c.KycDocuments) != 1 || !slices.Equal(c.Settings.AllowedPersonTypes, []string{"EMPLOYEE"}) {
		t.Fatalf("currentCorporation %+v, want Demo Corp with its two persons and its document", c)
	}
	for _, s := range []*fakeService{&h.banking.corporations.fakeService, &h.banking.kyc.fakeService, &h.banking.persons.fakeService} {
		for method, n := range map[string]int{"Current": 1, "Settings": 1, "List": 1} {
			if got := s.calls(method); got > n {
				t.Fatalf("%s.%s called %d times, want at most %d", s.name, method, got, n)
			}
		}
	}

	// Anna moved to the other corporation: the children are its.
	tok := h.banking.tokenFor(person)
	h.banking.mu.Lock()
	h.banking.callers[tok] = principal{kind: person.kind, id: demoPerson, personID: demoPerson, corporationID: otherCorp}
	h.banking.mu.Unlock()
	h.exec(q, nil).decode(t, &got)
	if c := got.CurrentCorporation; c.Name != "Other Corp" || !slices.Equal(c.Settings.AllowedPersonTypes, []string{"EMPLOYEE", "CONSUMER"}) ||
		len(c.KycDocuments) != 0 || len(c.Persons) != 1 || c.Persons[0].FirstName != "Ben" {
		t.Fatalf("after the move: %+v, want the other corporation's data", c)
	}

	// Refused upstream: the field's error; nothing below it answers.
	h.banking.corporations.failNext("Current", bankingNotFound())
	resp := h.exec(q, nil)
	if e := refused(t, resp, "NOT_FOUND", ""); fmt.Sprint(e.Path) != "[currentCorporation]" {
		t.Fatalf("the refusal is on %v, want currentCorporation", e.Path)
	}
	if string(resp.Data) != `{"currentCorporation":null}` {
		t.Fatalf("data %s, want currentCorporation null", resp.Data)
	}

	for _, p := range []principal{staff, introducer} {
		h := newHarness(t)
		var none answer
		h.as(p).exec(q, nil).decode(t, &none)
		if none.CurrentCorporation != nil {
			t.Fatalf("%s has a current corporation: %+v", p.kind, none.CurrentCorporation)
		}
		h.noUpstreamCall(t, 0, "currentCorporation of "+string(p.kind))
	}
}

const updateCorporationMutation = `mutation($in: UpdateCorporationInput!) { updateCorporation(input: $in) { upstreamId name country isOnboarded onboardedAt } }`

// updateCorporation (staff) checks its input before the upstream, and
// answers the corporation as it is now.
func TestUpdateCorporation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(staff)
	other := relay.ID(relay.Corporation, otherCorp)
	for _, tc := range []struct {
		in    map[string]any
		field string
	}{
		{map[string]any{"country": "US"}, "input.country"},
		{map[string]any{"currency": "USD"}, "input.currency"},
		{map[string]any{"name": strings.Repeat("n", 256)}, "input.name"},
		{map[string]any{"email": "corp@"}, "input.email"},
		{map[string]any{"city": strings.Repeat("c", 65)}, "input.city"},
		{map[string]any{"region": strings.Repeat("r", 101)}, "input.region"},
		{map[string]any{"postCode": strings.Repeat("1", 11)}, "input.postCode"},
		{map[string]any{"address": strings.Repeat("a", 65)}, "input.address"},
		{map[string]any{"id": "", "name": "X"}, "input.id"},
	} {
		tc.in["id"] = cmpOr(tc.in["id"], other)
		refused(t, h.exec(updateCorporationMutation, map[string]any{"in": tc.in}), "BAD_USER_INPUT", tc.field)
	}
	h.noUpstreamCall(t, 0, "bad corporation input")

	var got struct {
		UpdateCorporation struct {
			UpstreamID, Name, Country string
			IsOnboarded               bool
			OnboardedAt               *string
		}
	}
	h.banking.corporations.list[1].IsOnboarded = false
	h.exec(updateCorporationMutation, map[string]any{"in": map[string]any{"id": other, "isOnboarded": true, "country": "FI", "currency": "EUR", "name": "Renamed"}}).decode(t, &got)
	if u := got.UpdateCorporation; u.UpstreamID != otherCorp || u.Name != "Renamed" || u.Country != "FI" || !u.IsOnboarded || u.OnboardedAt == nil {
		t.Fatalf("updated %+v, want the other corporation renamed, in FI, onboarded now", u)
	}
	refused(t, h.exec(updateCorporationMutation, map[string]any{"in": map[string]any{"id": "corp-none", "name": "X"}}), "NOT_FOUND", "")
}

// cmpOr is v, or def when v is nil.
func cmpOr(v, def any) any {
	if v == nil {
		return def
	}
	return v
}

// updateCorporationSettings keeps EMPLOYEE, answers the settings with
// their corporation (id and settings, for a normalized client cache), and
// reads them back when the upstream answers none, which the spec allows.
func TestUpdateCorporationSettings(t *testing.T) {
	t.Parallel()
	const q = `mutation($in: UpdateCorporationSettingsInput!) { updateCorporationSettings(input: $in) {
  corporationId allowedPersonTypes corporation { id settings { allowedPersonTypes } } } }`
	type answer struct {
		UpdateCorporationSettings struct {
			CorporationID      string
			AllowedPersonTypes []string
			Corporation        struct {
				ID       string
				Settings struct{ AllowedPersonTypes []string }
			}
		}
	}
	demo := relay.ID(relay.Corporation, demoCorp)
	for _, empty := range []bool{false, true} {
		h := newHarness(t)
		h.banking.corporations.settingsAnswerEmpty = empty
		var got answer
		h.as(person).exec(q, map[string]any{"in": map[string]any{"corporationId": demo, "allowedPersonTypes": []string{"CONSUMER"}}}).decode(t, &got)
		s := got.UpdateCorporationSettings
		if s.CorporationID != demo || !slices.Equal(s.AllowedPersonTypes, []string{"EMPLOYEE", "CONSUMER"}) || s.Corporation.ID != demo ||
			!slices.Equal(s.Corporation.Settings.AllowedPersonTypes, s.AllowedPersonTypes) {
			t.Fatalf("answer empty %v: %+v, want the new settings with their corporation", empty, s)
		}
		// The corporation's settings are read for the answer; an empty
		// answer of the update is read back before.
		if n, want := h.banking.corporations.calls("Settings"), map[bool]int{false: 1, true: 2}[empty]; n != want {
			t.Fatalf("answer empty %v: %d reads of the settings, want %d", empty, n, want)
		}
	}

	h := newHarness(t)
	refused(t, h.as(staff).exec(q, map[string]any{"in": map[string]any{"corporationId": "", "allowedPersonTypes": []string{}}}), "BAD_USER_INPUT", "input.corporationId")
	h.noUpstreamCall(t, 0, "an empty corporation id")
}

// Settings show EMPLOYEE always and the types the graph knows only.
func TestSettingsKeepEmployeeAndDropUnknownTypes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.banking.corporations.settings[demoCorp] = &banking.CorporationSettings{ID: demoCorp, AllowedPersonTypes: []string{"consumer", "robot"}}
	var got struct {
		CurrentCorporation struct {
			Settings struct {
				AllowedPersonTypes []string
				UpdatedAt          *string
			}
		}
	}
	h.as(apiClient).exec(`{ currentCorporation { settings { allowedPersonTypes updatedAt } } }`, nil).decode(t, &got)
	if s := got.CurrentCorporation.Settings; !slices.Equal(s.AllowedPersonTypes, []string{"EMPLOYEE", "CONSUMER"}) || s.UpdatedAt != nil {
		t.Fatalf("settings %+v, want [EMPLOYEE CONSUMER] and no update time", s)
	}
}

const createAPIKeyMutation = `mutation($in: CreateApiKeyInput!) { createApiKey(input: $in) { id name isActive privateKey } }`

// createApiKey shows the new key's secret to its creator once: a retry
// with the same idempotency key makes no second key and names the first
// instead of showing its secret again; the secret is never logged.
func TestCreateAPIKeyShowsItsSecretOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(staff)
	in := map[string]any{"corporationId": relay.ID(relay.Corporation, demoCorp), "name": "ci", "idempotencyKey": "key-1"}
	var got struct {
		CreateAPIKey struct {
			ID, Name, PrivateKey string
			IsActive             bool
		}
	}
	h.exec(createAPIKeyMutation, map[string]any{"in": in}).decode(t, &got)
	k := got.CreateAPIKey
	if k.ID == "" || k.Name != "ci" || !k.IsActive || k.PrivateKey == "" {
		t.Fatalf("created %+v, want an active key with its secret", k)
	}
	e := refused(t, h.exec(createAPIKeyMutation, map[string]any{"in": in}), "BAD_USER_INPUT", "input.idempotencyKey")
	if !strings.Contains(e.Message, k.ID) || strings.Contains(e.Message, k.PrivateKey) {
		t.Fatalf("the replay says %q, want the key's id and not its secret", e.Message)
	}
	if n := h.banking.apiKeys.calls("Create"); n != 1 {
		t.Fatalf("%d keys made, want one", n)
	}
	var keys struct {
		Corporations struct {
			Edges []struct {
				Node struct{ APIKeys []struct{ ID, Name string } }
			}
		}
	}
	h.exec(`{ corporations { edges { node { apiKeys { id name } } } } }`, nil).decode(t, &keys)
	if ks := keys.Corporations.Edges[0].Node.APIKeys; len(ks) != 1 || ks[0].ID != k.ID || ks[0].Name != "ci" {
		t.Fatalf("the corporation lists %+v, want the new key", ks)
	}
	if h.logged(k.PrivateKey) {
		t.Fatal("the private key was logged")
	}
	for _, tc := range []struct {
		in    map[string]any
		field string
	}{
		{map[string]any{"corporationId": "", "name": "ci"}, "input.corporationId"},
		{map[string]any{"corporationId": demoCorp, "name": " "}, "input.name"},
		{map[string]any{"corporationId": demoCorp, "name": strings.Repeat("n", 256)}, "input.name"},
	} {
		before := h.upstreamCalls()
		refused(t, h.exec(createAPIKeyMutation, map[string]any{"in": tc.in}), "BAD_USER_INPUT", tc.field)
		h.noUpstreamCall(t, before, "bad key input")
	}
}

// deleteApiKey removes the key and makes every API-client session of the
// corporation prove its key again; a key the upstream does not have is
// NOT_FOUND and ends nothing.
func TestDeleteAPIKeyEndsTheCorporationsKeySessions(t *testing.T) {
	t.Parallel()
	const q = `mutation($in: DeleteApiKeyInput!) { deleteApiKey(input: $in) }`
	h := newHarness(t)
	a := h.withAuthority()
	h.banking.apiKeys.add(demoCorp, &bankingAPIKey{ID: "key-1", Name: "ci"})
	in := map[string]any{"corporationId": relay.ID(relay.Corporation, demoCorp), "id": "key-1"}
	var got struct{ DeleteAPIKey bool }
	h.as(staff).exec(q, map[string]any{"in": in}).decode(t, &got)
	if !got.DeleteAPIKey {
		t.Fatal("deleteApiKey answered false")
	}
	want := []string{"proof apikeys:" + demoCorp + " api_key_deleted"}
	if calls := a.recorded(); !slices.Equal(calls, want) {
		t.Fatalf("authority calls %v, want %v", calls, want)
	}
	refused(t, h.exec(q, map[string]any{"in": in}), "NOT_FOUND", "")
	if calls := a.recorded(); len(calls) != 1 {
		t.Fatalf("a failed delete ended authority: %v", calls)
	}
	before := h.upstreamCalls()
	refused(t, h.exec(q, map[string]any{"in": map[string]any{"corporationId": demoCorp, "id": ""}}), "BAD_USER_INPUT", "input.id")
	h.noUpstreamCall(t, before, "an empty key id")
}

const signUpMutation = `mutation($in: SignUpCorporationInput!) { signUpCorporation(input: $in) { id } }`

// signUpInput is a valid sign-up, edited by key-value pairs.
func signUpInput(kv ...any) map[string]any {
	in := map[string]any{"companyName": "Third Shop SIA", "email": "founder@third.test", "firstName": "Liga", "lastName": "Egle",
		"phone": "+37120001111", "country": "LV", "captcha": fakeCaptcha}
	for i := 0; i+1 < len(kv); i += 2 {
		in[kv[i].(string)] = kv[i+1]
	}
	return map[string]any{"in": in}
}

// signUpCorporation is open to anyone: it answers the new corporation's
// global id; its input is checked first; the captcha is the upstream's to
// judge. Under an idempotency key a retry signs up once; nobody is signed
// in, so the key is bound to the applicant and what it asked.
func TestSignUpCorporation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(anonymous)
	type answer struct{ SignUpCorporation struct{ ID string } }
	var got answer
	h.exec(signUpMutation, signUpInput()).decode(t, &got)
	if ref, err := relay.Decode(got.SignUpCorporation.ID); err != nil || ref.Kind != relay.Corporation || ref.Upstream() != "corp-new-1" {
		t.Fatalf("signUpCorporation answered %q, want the new corporation's global id", got.SignUpCorporation.ID)
	}
	e := refused(t, h.exec(signUpMutation, signUpInput("captcha", "wrong", "email", "x@third.test")), "UPSTREAM_REJECTED", "")
	if e.Upstream()["field"] != "recaptcha" {
		t.Fatalf("a wrong captcha: %+v", e)
	}

	before := h.upstreamCalls()
	for _, tc := range []struct {
		vars  map[string]any
		field string
	}{
		{signUpInput("country", "US"), "input.country"},
		{signUpInput("email", "founder@"), "input.email"},
		{signUpInput("companyName", " "), "input.companyName"},
		{signUpInput("firstName", strings.Repeat("f", 101)), "input.firstName"},
		{signUpInput("lastName", ""), "input.lastName"},
		{signUpInput("phone", ""), "input.phone"},
		{signUpInput("captcha", ""), "input.captcha"},
	} {
		refused(t, h.exec(signUpMutation, tc.vars), "BAD_USER_INPUT", tc.field)
	}
	h.noUpstreamCall(t, before, "bad sign-up input")

	var first, retry, another answer
	h.exec(signUpMutation, signUpInput("email", "keyed@third.test", "idempotencyKey", "signup-1")).decode(t, &first)
	h.exec(signUpMutation, signUpInput("email", "keyed@third.test", "idempotencyKey", "signup-1")).decode(t, &retry)
	if retry != first || h.banking.corporations.calls("SignUp") != 3 {
		t.Fatalf("the retry answered %v after %v with %d sign-ups, want the first, signed up once", retry, first, h.banking.corporations.calls("SignUp"))
	}
	// Signed out, a key is bound to what it asked: another applicant's
	// same key is another request, never an answer of the first.
	h.exec(signUpMutation, signUpInput("email", "another@third.test", "idempotencyKey", "signup-1")).decode(t, &another)
	if another == first || h.banking.corporations.calls("SignUp") != 4 {
		t.Fatal("another applicant's same key answered the first sign-up")
	}
}

// sendFeedback is open to anyone; its input is checked first and the
// captcha is the upstream's to judge; it never asks for a password.
func TestSendFeedback(t *testing.T) {
	t.Parallel()
	const q = `mutation($in: SendFeedbackInput!) { sendFeedback(input: $in) }`
	in := func(kv ...string) map[string]any {
		m := map[string]any{"name": "Anna", "email": "anna@demo.test", "subject": "Hello", "feedback": "Works well.", "captcha": fakeCaptcha}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return map[string]any{"in": m}
	}
	h := newHarness(t)
	h.as(anonymous)
	var got struct{ SendFeedback bool }
	h.exec(q, in()).decode(t, &got)
	if sent := h.banking.feedback.sent; !got.SendFeedback || len(sent) != 1 || sent[0].Subject != "Hello" || sent[0].Captcha != fakeCaptcha {
		t.Fatalf("sendFeedback answered %v, sent %+v", got.SendFeedback, sent)
	}
	if e := refused(t, h.exec(q, in("captcha", "nope")), "UPSTREAM_REJECTED", ""); e.Upstream()["field"] != "recaptcha" {
		t.Fatalf("a wrong captcha: %+v", e)
	}
	before := h.upstreamCalls()
	for _, tc := range []struct{ key, value, field string }{
		{"name", "", "input.name"}, {"email", "anna", "input.email"}, {"subject", strings.Repeat("s", 256), "input.subject"},
		{"feedback", "", "input.feedback"}, {"feedback", strings.Repeat("f", 10001), "input.feedback"}, {"captcha", "", "input.captcha"},
	} {
		refused(t, h.exec(q, in(tc.key, tc.value)), "BAD_USER_INPUT", tc.field)
	}
	h.noUpstreamCall(t, before, "bad feedback")
}

// ok and noop answer true to anyone, with no upstream call.
func TestOkAndNoop(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var got struct{ Ok, Noop bool }
	h.as(anonymous).exec(`{ ok }`, nil).decode(t, &got)
	h.exec(`mutation { noop }`, nil).decode(t, &got)
	if !got.Ok || !got.Noop {
		t.Fatalf("ok %v, noop %v", got.Ok, got.Noop)
	}
	h.noUpstreamCall(t, 0, "ok and noop")
}
