package resolvers

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

const signInFull = `mutation($in: SignInInput!) {
  signIn(input: $in) {
    __typename
    ... on SignedIn { sessionToken csrfToken viewer { kind csrfToken permissions person { firstName } corporation { name } } }
    ... on TwoFactorChallenge { maskedPhone challengeId expiresAt }
  }
}`

// signInAnswer is signInFull's answer.
type signInAnswer struct {
	SignIn struct {
		Typename     string `json:"__typename"`
		SessionToken string
		CsrfToken    string
		Viewer       struct {
			Kind        string
			CsrfToken   string
			Permissions []string
			Person      *struct{ FirstName string }
			Corporation *struct{ Name string }
		}
		MaskedPhone string
		ChallengeID *string
		ExpiresAt   *time.Time
	} `json:"signIn"`
}

// signInVars is a sign-in input of kind with the demo password.
func signInVars(kind, email string) map[string]any {
	in := map[string]any{"kind": kind, "email": email, "password": demoPassword}
	if kind == "PERSON" {
		in["deviceFingerprint"] = 7
	}
	return map[string]any{"in": in}
}

// Each kind of principal signs in to a session of its own: the session
// holds the principal's person and corporation and the upstream token the
// sign-in gave (never the one of a session the client had before), and the
// answer's viewer is that principal with its permissions.
func TestSignInStartsTheSessionOfEachKind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		vars             map[string]any
		who              principal
		person, corp     string
		perms            []string
		personID, corpID string
		signedInBeforeAs principal
	}{
		{name: "staff", vars: signInVars("STAFF", "staff@demo.test"), who: staff, perms: []string{"payments.operate"}},
		{name: "person", vars: signInVars("PERSON", "anna@demo.test"), who: person, person: "Anna", corp: "Demo Corp",
			perms: []string{"persons_management.read"}, personID: demoPerson, corpID: demoCorp},
		{name: "introducer", vars: signInVars("INTRODUCER", "intro@demo.test"), who: introducer, perms: []string{}},
		{name: "API key", vars: map[string]any{"in": map[string]any{"kind": "API_KEY", "apiKey": "demo-api-key"}}, who: apiClient,
			corp: "Demo Corp", perms: []string{"payments.operate"}, corpID: demoCorp},
		// Signing in while signed in as someone else: the new session
		// is the new principal's alone.
		{name: "staff over a person's session", vars: signInVars("STAFF", "staff@demo.test"), who: staff,
			perms: []string{"payments.operate"}, signedInBeforeAs: person},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.banking.persons.list[0].Permissions = map[string]bool{"persons_management.read": true, "persons_management.write": false}
			var got signInAnswer
			h.as(tc.signedInBeforeAs).exec(signInFull, tc.vars).decode(t, &got)
			s := got.SignIn
			if s.Typename != "SignedIn" || s.SessionToken == "" || s.CsrfToken == "" || s.Viewer.CsrfToken != s.CsrfToken {
				t.Fatalf("signIn answered %+v, want a SignedIn with its tokens", s)
			}
			if s.Viewer.Kind != string(tc.who.kind) || !slices.Equal(s.Viewer.Permissions, tc.perms) {
				t.Fatalf("viewer %+v, want %s with permissions %v", s.Viewer, tc.who.kind, tc.perms)
			}
			if (s.Viewer.Person != nil) != (tc.person != "") || (tc.person != "" && s.Viewer.Person.FirstName != tc.person) {
				t.Fatalf("viewer.person %+v, want %q", s.Viewer.Person, tc.person)
			}
			if (s.Viewer.Corporation != nil) != (tc.corp != "") || (tc.corp != "" && s.Viewer.Corporation.Name != tc.corp) {
				t.Fatalf("viewer.corporation %+v, want %q", s.Viewer.Corporation, tc.corp)
			}
			stored, err := h.store.Get(t.Context(), s.SessionToken)
			if err != nil {
				t.Fatalf("the answered token is no session: %v", err)
			}
			if stored.Kind != tc.who.kind || stored.PersonID != tc.personID || stored.CorporationID != tc.corpID {
				t.Fatalf("the session holds %+v, want %s of %q/%q", stored, tc.who.kind, tc.personID, tc.corpID)
			}
			if who := h.banking.callers[string(stored.BankingToken)]; who != tc.who {
				t.Fatalf("the session's upstream token signs in %+v, want %+v", who, tc.who)
			}
			if h.logged(demoPassword) {
				t.Fatal("the password was logged")
			}
		})
	}
}

// Bad sign-in input is BAD_USER_INPUT naming the field, before any
// upstream call.
func TestSignInChecksItsInputFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	long := strings.Repeat("x", 513)
	for _, tc := range []struct {
		name  string
		in    map[string]any
		field string
	}{
		{"no e-mail", map[string]any{"kind": "STAFF", "password": demoPassword}, "input.email"},
		{"blank e-mail", map[string]any{"kind": "INTRODUCER", "email": "  ", "password": demoPassword}, "input.email"},
		{"no password", map[string]any{"kind": "STAFF", "email": "staff@demo.test"}, "input.password"},
		{"password too long", map[string]any{"kind": "STAFF", "email": "staff@demo.test", "password": long}, "input.password"},
		{"a person without the device", map[string]any{"kind": "PERSON", "email": "anna@demo.test", "password": demoPassword}, "input.deviceFingerprint"},
		{"a challenge without its code", map[string]any{"kind": "STAFF", "email": "staff@demo.test", "password": demoPassword, "challengeId": "ch-1"}, "input.twoFactorCode"},
		{"no API key", map[string]any{"kind": "API_KEY"}, "input.apiKey"},
		{"API key too long", map[string]any{"kind": "API_KEY", "apiKey": long}, "input.apiKey"},
	} {
		refused(t, h.as(anonymous).exec(signInFull, map[string]any{"in": tc.in}), "BAD_USER_INPUT", tc.field)
	}
	h.noUpstreamCall(t, 0, "bad sign-in input")
}

// A wrong password or key is the upstream's 401, UNAUTHENTICATED with the
// field it names, and starts no session.
func TestSignInWithWrongCredentialsIsUnauthenticated(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, in := range []map[string]any{
		{"kind": "PERSON", "email": "anna@demo.test", "password": "wrong-password", "deviceFingerprint": 1},
		{"kind": "STAFF", "email": "anna@demo.test", "password": demoPassword}, // a person is no staff member
		{"kind": "API_KEY", "apiKey": "nope"},
	} {
		e := refused(t, h.as(anonymous).exec(signInFull, map[string]any{"in": in}), "UNAUTHENTICATED", "")
		if u := e.Upstream(); u["status"] != 401.0 {
			t.Fatalf("extensions.upstream %v, want the upstream's 401", u)
		}
	}
	if n := len(h.store.m); n != 0 {
		t.Fatalf("%d sessions after refused sign-ins, want none", n)
	}
}

// With two-factor on, a right password answers the challenge (the masked
// phone, and the v3 shape's id and expiry), and no session; the code with
// the challenge's id signs in; a wrong code is the upstream's refusal on
// code. The v2 shape has no id and no expiry: both null.
func TestSignInWithTwoFactorAnswersTheChallengeFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	issued := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	h.banking.auth.requireTwoFactor("staff@demo.test", banking.TwoFactor{TruncatedPhone: "+3712*****01", ChallengeID: "ch-1",
		IssuedAt: issued, ExpiresIn: 5 * time.Minute})
	h.banking.auth.requireTwoFactor("intro@demo.test", banking.TwoFactor{TruncatedPhone: "+3712*****03"})
	vars := signInVars("STAFF", "staff@demo.test")
	h.as(anonymous)

	var step1 signInAnswer
	h.exec(signInFull, vars).decode(t, &step1)
	c := step1.SignIn
	if c.Typename != "TwoFactorChallenge" || c.MaskedPhone != "+3712*****01" || c.ChallengeID == nil || *c.ChallengeID != "ch-1" ||
		c.ExpiresAt == nil || !c.ExpiresAt.Equal(issued.Add(5*time.Minute)) {
		t.Fatalf("step 1 answered %+v, want the v3 challenge", c)
	}
	if len(h.store.m) != 0 {
		t.Fatal("a challenge started a session")
	}

	in := vars["in"].(map[string]any)
	in["twoFactorCode"], in["challengeId"] = "000000", "ch-1"
	e := refused(t, h.exec(signInFull, vars), "UPSTREAM_REJECTED", "")
	if u := e.Upstream(); u["field"] != "code" || u["code"] != float64(banking.CodeInvalidValue) {
		t.Fatalf("a wrong code: extensions.upstream %v, want the upstream's code on field code", u)
	}

	in["twoFactorCode"] = fakeSMSCode
	var step2 signInAnswer
	h.exec(signInFull, vars).decode(t, &step2)
	if step2.SignIn.Typename != "SignedIn" || step2.SignIn.Viewer.Kind != "STAFF" {
		t.Fatalf("step 2 answered %+v, want staff signed in", step2.SignIn)
	}

	var v2 signInAnswer
	h.as(anonymous).exec(signInFull, signInVars("INTRODUCER", "intro@demo.test")).decode(t, &v2)
	if c := v2.SignIn; c.Typename != "TwoFactorChallenge" || c.MaskedPhone != "+3712*****03" || c.ChallengeID != nil || c.ExpiresAt != nil {
		t.Fatalf("the v2 challenge answered %+v, want the masked phone alone", c)
	}
}

// Failed sign-ins are limited per account and client: after five wrong
// passwords from one address the account's next sign-in from there is
// RATE_LIMITED with retryAfter, even with the right password, and costs no
// upstream call. What judged no credential (an outage, bad input) and what
// succeeded take nothing.
func TestFailedSignInsAreLimitedButOutagesAndSuccessesAreNot(t *testing.T) {
	t.Parallel()
	wrong := func() map[string]any {
		v := signInVars("PERSON", "anna@demo.test")
		v["in"].(map[string]any)["password"] = "wrong-password"
		return v
	}
	right := signInVars("PERSON", "anna@demo.test")

	h := newHarness(t)
	h.as(anonymous)
	for i := range 5 {
		if code := h.exec(signInFull, wrong()).code(t); code != "UNAUTHENTICATED" {
			t.Fatalf("wrong password %d: %s, want UNAUTHENTICATED", i+1, code)
		}
	}
	before := h.upstreamCalls()
	e := refused(t, h.exec(signInFull, right), "RATE_LIMITED", "")
	if after, _ := e.Extensions["retryAfter"].(float64); after < 1 {
		t.Fatalf("retryAfter %v, want whole seconds to wait", e.Extensions["retryAfter"])
	}
	h.noUpstreamCall(t, before, "a limited sign-in")
	// Another account from the same address is not this one's.
	var other signInAnswer
	h.exec(signInFull, signInVars("STAFF", "staff@demo.test")).decode(t, &other)
	if other.SignIn.Typename != "SignedIn" {
		t.Fatalf("another account: %+v", other.SignIn)
	}

	h = newHarness(t)
	h.as(anonymous)
	h.banking.auth.failNext("SignInPerson", unavailable("banking"))
	for range 3 {
		h.banking.auth.failNext("SignInPerson", unavailable("banking"))
		h.banking.auth.failNext("SignInPerson", bankingRejection(http.StatusTooManyRequests, 0, "", "slow down"))
	}
	for range 7 {
		if code := h.exec(signInFull, right).code(t); code != "UPSTREAM_UNAVAILABLE" && code != "RATE_LIMITED" {
			t.Fatalf("an outage: %s", code)
		}
	}
	for range 6 {
		refused(t, h.exec(signInFull, map[string]any{"in": map[string]any{"kind": "PERSON", "email": "anna@demo.test", "password": demoPassword}}), "BAD_USER_INPUT", "")
	}
	for i := range 12 {
		var ok signInAnswer
		h.exec(signInFull, right).decode(t, &ok)
		if ok.SignIn.Typename != "SignedIn" {
			t.Fatalf("right password %d after outages, bad input and successes: %+v", i+1, ok.SignIn)
		}
	}
}

// A payments customer signs in with its customer key: the key is checked
// by reading the customer with it, and the session acts as that customer.
// A key the upstream does not accept is UNAUTHENTICATED (whatever the
// upstream's reason), an outage stays an outage, an empty key costs no
// call.
func TestSignInCustomerChecksTheKeyUpstream(t *testing.T) {
	t.Parallel()
	const q = `mutation($k: String!) { signInCustomer(input: {customerKey: $k}) { sessionToken viewer { kind customer { number } permissions } } }`
	h := newHarness(t)
	h.payments.customerKeys["ck_live_1"] = demoCustomer
	var got struct {
		SignInCustomer struct {
			SessionToken string
			Viewer       struct {
				Kind        string
				Customer    struct{ Number string }
				Permissions []string
			}
		}
	}
	h.as(anonymous).exec(q, map[string]any{"k": "ck_live_1"}).decode(t, &got)
	s := got.SignInCustomer
	if s.Viewer.Kind != "CUSTOMER" || s.Viewer.Customer.Number != "C-1" || len(s.Viewer.Permissions) != 0 {
		t.Fatalf("signInCustomer answered %+v, want customer C-1 without permissions", s)
	}
	stored, err := h.store.Get(t.Context(), s.SessionToken)
	if err != nil || stored.Kind != session.Customer || stored.PrincipalID != demoCustomer || stored.CustomerKey != "ck_live_1" {
		t.Fatalf("the session holds %+v (%v), want customer %s with its key", stored, err, demoCustomer)
	}

	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"unknown key", nil, "UNAUTHENTICATED"},
		{"refused key", paymentsRejection(http.StatusUnauthorized, "unauthorized", "", "bad key"), "UNAUTHENTICATED"},
		{"forbidden key", paymentsRejection(http.StatusForbidden, "forbidden", "", "no"), "UNAUTHENTICATED"},
		{"no answer", unavailable("payments"), "UPSTREAM_UNAVAILABLE"},
	} {
		if tc.err != nil {
			h.payments.customers.failNext("Get", tc.err)
		}
		e := refused(t, h.as(anonymous).exec(q, map[string]any{"k": "ck_wrong"}), tc.want, "")
		if tc.want == "UNAUTHENTICATED" && e.Message != "the customer key was not accepted" {
			t.Fatalf("%s: message %q", tc.name, e.Message)
		}
	}
	before := h.upstreamCalls()
	refused(t, h.as(anonymous).exec(q, map[string]any{"k": ""}), "BAD_USER_INPUT", "input.customerKey")
	h.noUpstreamCall(t, before, "an empty customer key")
}

// signOut ends the request's session: true when there was one, and its
// token no longer signs anything in; signed out it answers false.
func TestSignOutEndsTheSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var out struct{ SignOut bool }
	h.as(person).exec(`mutation { signOut }`, nil).decode(t, &out)
	if !out.SignOut {
		t.Fatal("signOut of a session answered false")
	}
	if _, err := h.store.Get(t.Context(), h.token); err == nil {
		t.Fatal("the session outlived signOut")
	}
	var viewer struct{ Viewer *struct{ Kind string } }
	h.exec(`{ viewer { kind } }`, nil).decode(t, &viewer)
	if viewer.Viewer != nil {
		t.Fatalf("the ended session's token still has a viewer: %+v", viewer.Viewer)
	}
	h.as(anonymous).exec(`mutation { signOut }`, nil).decode(t, &out)
	if out.SignOut {
		t.Fatal("signOut without a session answered true")
	}
}

// The viewer is the session's principal: null signed out, and for each
// kind what it speaks for, with the gateway's payments.operate where the
// policy allows it.
func TestViewerIsTheSessionsPrincipal(t *testing.T) {
	t.Parallel()
	const q = `{ viewer { kind permissions person { firstName } corporation { name } customer { number } } }`
	type viewer struct {
		Kind        string
		Permissions []string
		Person      *struct{ FirstName string }
		Corporation *struct{ Name string }
		Customer    *struct{ Number string }
	}
	for _, tc := range []struct {
		who  principal
		want string
	}{
		{anonymous, "<nil>"},
		{staff, "STAFF [payments.operate] <nil> <nil> <nil>"},
		{person, "PERSON [] Anna Demo Corp <nil>"},
		{apiClient, "API_CLIENT [payments.operate] <nil> Demo Corp <nil>"},
		{outsider, "API_CLIENT [] <nil> Other Corp <nil>"},
		{introducer, "INTRODUCER [] <nil> <nil> <nil>"},
		{customer, "CUSTOMER [] <nil> <nil> C-1"},
	} {
		h := newHarness(t)
		var got struct{ Viewer *viewer }
		h.as(tc.who).exec(q, nil).decode(t, &got)
		s := "<nil>"
		if v := got.Viewer; v != nil {
			name := func(p *string) string {
				if p == nil {
					return "<nil>"
				}
				return *p
			}
			var pn, cn, un *string
			if v.Person != nil {
				pn = &v.Person.FirstName
			}
			if v.Corporation != nil {
				cn = &v.Corporation.Name
			}
			if v.Customer != nil {
				un = &v.Customer.Number
			}
			s = fmt.Sprintf("%s %v %s %s %s", v.Kind, v.Permissions, name(pn), name(cn), name(un))
		}
		if s != tc.want {
			t.Errorf("viewer of %s: %s, want %s", tc.who.kind, s, tc.want)
		}
	}
}

// forgotPassword answers true whether or not the e-mail is known (it
// tells nothing), after checking the address; every request counts toward
// the account's limit, so that it cannot flood a mailbox. recoverPassword
// checks the new password's rules before the upstream, and the upstream's
// refusal of a used token names the token.
func TestPasswordRecovery(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(anonymous)
	const forgot = `mutation($e: String!) { forgotPassword(input: {email: $e}) }`
	const recover = `mutation($t: String!, $p: String!) { recoverPassword(input: {token: $t, password: $p}) }`
	for _, email := range []string{"", "anna@", strings.Repeat("a", 320) + "@demo.test"} {
		refused(t, h.exec(forgot, map[string]any{"e": email}), "BAD_USER_INPUT", "input.email")
	}
	h.noUpstreamCall(t, 0, "a bad e-mail")
	for _, email := range []string{"anna@demo.test", "nobody@demo.test"} {
		var ok struct{ ForgotPassword bool }
		h.exec(forgot, map[string]any{"e": email}).decode(t, &ok)
		if !ok.ForgotPassword {
			t.Fatalf("forgotPassword(%s) answered false", email)
		}
	}
	if got := h.banking.auth.forgot; !slices.Equal(got, []string{"anna@demo.test", "nobody@demo.test"}) {
		t.Fatalf("the upstream was asked for %v", got)
	}
	token := h.banking.auth.recoveryToken("anna@demo.test")

	before := h.upstreamCalls()
	for _, tc := range []struct{ token, password, field string }{
		{"", "Quiet-lantern-7", "input.token"},
		{token, "", "input.password"},
		{token, "short", "input.password"},
		{token, "password1", "input.password"},
		{token, "aaaaaaaaaaaa", "input.password"},
	} {
		e := refused(t, h.exec(recover, map[string]any{"t": tc.token, "p": tc.password}), "BAD_USER_INPUT", tc.field)
		if tc.password != "" && strings.Contains(e.Message, tc.password) {
			t.Fatalf("the refusal repeats the password: %q", e.Message)
		}
	}
	h.noUpstreamCall(t, before, "a weak new password")

	const next = "Quiet-lantern-harbour-7"
	var ok struct{ RecoverPassword bool }
	h.exec(recover, map[string]any{"t": token, "p": next}).decode(t, &ok)
	if !ok.RecoverPassword {
		t.Fatal("recoverPassword answered false")
	}
	e := refused(t, h.exec(recover, map[string]any{"t": token, "p": next}), "UPSTREAM_REJECTED", "")
	if e.Upstream()["field"] != "token" {
		t.Fatalf("a used token: %+v, want the upstream's refusal on token", e)
	}
	in := signInVars("PERSON", "anna@demo.test")
	in["in"].(map[string]any)["password"] = next
	var signedIn signInAnswer
	h.exec(signInFull, in).decode(t, &signedIn)
	if signedIn.SignIn.Typename != "SignedIn" {
		t.Fatalf("sign-in with the recovered password: %+v", signedIn.SignIn)
	}

	// The recovery requests of one account are limited, found or not.
	h = newHarness(t)
	h.as(anonymous)
	limited := 0
	for i := range accountBurst + 2 {
		email := []string{"anna@demo.test", "ANNA@Demo.test"}[i%2] // one account, however spelt
		if r := h.exec(forgot, map[string]any{"e": email}); len(r.Errors) > 0 {
			refused(t, r, "RATE_LIMITED", "")
			limited++
		}
	}
	if limited != 2 || h.banking.auth.calls("ForgotPassword") != accountBurst {
		t.Fatalf("%d of %d recovery requests limited, %d sent; want the burst of %d sent and the rest limited",
			limited, accountBurst+2, h.banking.auth.calls("ForgotPassword"), accountBurst)
	}
}
