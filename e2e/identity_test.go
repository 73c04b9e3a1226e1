package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/fingraph/fingraph/relay"
)

// Tests of the identity part of the graph: sessions, sign-in with both
// two-factor shapes, persons, corporations and API keys, through the gateway
// and the banking sandbox over real HTTP.

// Demo principals of the banking sandbox (docs/sandbox-banking.md).
const (
	demoPassword   = "demo-password"
	demoCorpID     = "c0000000-0000-4000-8000-000000000001"
	secondCorpID   = "c0000000-0000-4000-8000-000000000002"
	annaID         = "e0000000-0000-4000-8000-000000000001"
	daceID         = "e0000000-0000-4000-8000-000000000003"
	benID          = "e0000000-0000-4000-8000-000000000011"
	staffPhone     = "+37120000001"
	tfaPhone       = "+37120000002"
	introPhone     = "+37120000003"
	demoFingerprnt = 4242
)

type signInResult struct {
	Typename     string `json:"__typename"`
	SessionToken string `json:"sessionToken"`
	CSRFToken    string `json:"csrfToken"`
	Viewer       struct {
		Kind string `json:"kind"`
	} `json:"viewer"`
	MaskedPhone string  `json:"maskedPhone"`
	ChallengeID *string `json:"challengeId"`
	ExpiresAt   *string `json:"expiresAt"`
}

func (g *testGateway) signIn(t *testing.T, input map[string]any) (signInResult, gqlResponse) {
	t.Helper()
	resp := g.queryAs(t, "", signInMutation, map[string]any{"input": input})
	var d struct {
		SignIn signInResult `json:"signIn"`
	}
	if len(resp.Errors) == 0 {
		resp.decode(t, &d)
	}
	return d.SignIn, resp
}

// smsCode returns the newest SMS code sent to phone.
func (g *testGateway) smsCode(t *testing.T, phone string) string {
	t.Helper()
	var msgs []struct {
		To   string `json:"to"`
		Code string `json:"code"`
	}
	g.sandbox(t, http.MethodGet, "/_sandbox/sms", nil, &msgs)
	for _, m := range msgs {
		if m.To == phone && m.Code != "" {
			seenSecrets.add("sms code", m.Code)
			return m.Code
		}
	}
	t.Fatalf("no SMS code for %s in %+v", phone, msgs)
	return ""
}

// emailCode returns the newest e-mailed code (recovery token) sent to addr.
func (g *testGateway) emailCode(t *testing.T, addr string) string {
	t.Helper()
	var msgs []struct {
		To   string `json:"to"`
		Code string `json:"code"`
	}
	g.sandbox(t, http.MethodGet, "/_sandbox/email", nil, &msgs)
	for _, m := range msgs {
		if m.To == addr && m.Code != "" {
			seenSecrets.add("recovery token", m.Code)
			return m.Code
		}
	}
	t.Fatalf("no e-mail code for %s", addr)
	return ""
}

// signInPerson signs a person without two-factor in and returns the bearer
// session token.
func (g *testGateway) signInPerson(t *testing.T, email string) string {
	t.Helper()
	r, resp := g.signIn(t, map[string]any{"kind": "PERSON", "email": email, "password": demoPassword, "deviceFingerprint": demoFingerprnt})
	if r.Typename != "SignedIn" {
		t.Fatalf("sign-in of %s: %+v %+v", email, r, resp.Errors)
	}
	return r.SessionToken
}

// signInStaff runs the two-factor sign-in of the demo staff member.
func (g *testGateway) signInStaff(t *testing.T) string {
	t.Helper()
	return g.signInTwoFactor(t, "STAFF", "staff@demo.test", staffPhone)
}

// signInIntroducer runs the two-factor sign-in of the demo introducer.
func (g *testGateway) signInIntroducer(t *testing.T) string {
	t.Helper()
	return g.signInTwoFactor(t, "INTRODUCER", "intro@demo.test", introPhone)
}

// signInTwoFactor signs a demo user of kind in with the code the sandbox
// sent to phone, and returns the bearer session token.
func (g *testGateway) signInTwoFactor(t *testing.T, kind, email, phone string) string {
	t.Helper()
	in := map[string]any{"kind": kind, "email": email, "password": demoPassword}
	r, resp := g.signIn(t, in)
	if r.Typename != "TwoFactorChallenge" {
		t.Fatalf("%s sign-in step 1: %+v %+v", kind, r, resp.Errors)
	}
	in["twoFactorCode"] = g.smsCode(t, phone)
	if r.ChallengeID != nil {
		in["challengeId"] = *r.ChallengeID
	}
	r, resp = g.signIn(t, in)
	if r.Typename != "SignedIn" {
		t.Fatalf("%s sign-in step 2: %+v %+v", kind, r, resp.Errors)
	}
	return r.SessionToken
}

// upstreamOf returns extensions.upstream of the first error.
func upstreamOf(t *testing.T, r gqlResponse) map[string]any {
	t.Helper()
	if len(r.Errors) == 0 {
		t.Fatalf("want an error, got data %s", r.Data)
	}
	u, _ := r.Errors[0].Extensions["upstream"].(map[string]any)
	if u == nil {
		t.Fatalf("error without extensions.upstream: %+v", r.Errors[0])
	}
	return u
}

// bankingCalls counts the banking routes the sandbox served since the last
// stats reset.
func bankingCalls(s sandboxStats) int {
	n := 0
	for route, c := range s.Routes {
		if strings.Contains(route, "/banking/") {
			n += c
		}
	}
	return n
}

const viewerQuery = `{ viewer { kind csrfToken permissions person { id email } corporation { id name } } }`

type viewerData struct {
	Viewer *struct {
		Kind        string   `json:"kind"`
		CSRFToken   string   `json:"csrfToken"`
		Permissions []string `json:"permissions"`
		Person      *struct {
			ID    string `json:"id"`
			Email string `json:"email"`
		} `json:"person"`
		Corporation *struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"corporation"`
	} `json:"viewer"`
}

func TestSignInStaffWithSMSTwoFactor(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	in := map[string]any{"kind": "STAFF", "email": "staff@demo.test", "password": demoPassword}
	r, _ := g.signIn(t, in)
	if r.Typename != "TwoFactorChallenge" || r.MaskedPhone != "+3712*****01" {
		t.Fatalf("step 1 = %+v, want a v2 challenge with the masked phone", r)
	}
	if r.ChallengeID != nil || r.ExpiresAt != nil {
		t.Errorf("the v2 shape has no challenge id or expiry, got %+v", r)
	}
	in["twoFactorCode"] = g.smsCode(t, staffPhone)
	r, resp := g.signIn(t, in)
	if r.Typename != "SignedIn" || r.SessionToken == "" || r.CSRFToken == "" || r.Viewer.Kind != "STAFF" {
		t.Fatalf("step 2 = %+v %+v", r, resp.Errors)
	}
	var d viewerData
	g.queryAs(t, r.SessionToken, viewerQuery, nil).decode(t, &d)
	if d.Viewer == nil || d.Viewer.Kind != "STAFF" || d.Viewer.Person != nil || d.Viewer.Corporation != nil {
		t.Fatalf("viewer = %+v", d.Viewer)
	}
	if strings.Join(d.Viewer.Permissions, ",") != "payments.operate" {
		t.Errorf("staff permissions = %v, want payments.operate", d.Viewer.Permissions)
	}
}

func TestSignInPersonWithoutTwoFactorIsABearerSession(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	token := g.signInPerson(t, "anna@demo.test")
	var d viewerData
	g.queryAs(t, token, viewerQuery, nil).decode(t, &d)
	v := d.Viewer
	if v == nil || v.Kind != "PERSON" || v.Person == nil || rawID(v.Person.ID) != annaID || v.Corporation == nil || v.Corporation.Name != "Demo Trading SIA" {
		t.Fatalf("viewer = %+v", v)
	}
	if strings.Join(v.Permissions, ",") != "persons_management.read,persons_management.write" {
		t.Errorf("permissions = %v", v.Permissions)
	}
	// A mobile client needs no CSRF token: the bearer header cannot be sent
	// cross-site by a browser.
	resp := g.queryAs(t, token, `mutation { noop }`, nil)
	if len(resp.Errors) > 0 {
		t.Fatalf("bearer mutation refused: %+v", resp.Errors)
	}
	// Signed out, the viewer is null.
	var out viewerData
	g.queryAs(t, "", viewerQuery, nil).decode(t, &out)
	if out.Viewer != nil {
		t.Errorf("signed-out viewer = %+v, want null", out.Viewer)
	}
}

func TestPersonTwoFactorAttemptRules(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	in := map[string]any{"kind": "PERSON", "email": "tfa@demo.test", "password": demoPassword, "deviceFingerprint": demoFingerprnt}
	r, _ := g.signIn(t, in)
	if r.Typename != "TwoFactorChallenge" || r.MaskedPhone != "+3712*****02" {
		t.Fatalf("step 1 = %+v", r)
	}
	good := g.smsCode(t, tfaPhone)
	wrong := "000000"
	if good == wrong {
		wrong = "111111"
	}
	// Tries 1, 2: invalid; 3: expired; 4: invalid again (the spec's rule).
	for i, want := range []float64{10001, 10001, 10003, 10001} {
		in["twoFactorCode"] = wrong
		resp, _ := g.post(t, http.Header{"X-Forwarded-For": {fmt.Sprintf("198.51.100.%d", i+1)}}, signInMutation, map[string]any{"input": in})
		if resp.code() != "UPSTREAM_REJECTED" {
			t.Fatalf("try %d: code %q, want UPSTREAM_REJECTED: %+v", i+1, resp.code(), resp.Errors)
		}
		u := upstreamOf(t, resp)
		if u["service"] != "banking" || u["code"] != want || u["field"] != "code" || u["status"] != float64(400) {
			t.Errorf("try %d: upstream = %v, want code %v on field code", i+1, u, want)
		}
		if wantName := map[float64]string{10001: "INVALID_VALUE", 10003: "CODE_EXPIRED"}[want]; u["name"] != wantName {
			t.Errorf("try %d: upstream name %v, want %s", i+1, u["name"], wantName)
		}
	}
	// After the expired message the code is dead; a new first call issues
	// a fresh one, which works.
	delete(in, "twoFactorCode")
	if r, _ := g.signIn(t, in); r.Typename != "TwoFactorChallenge" {
		t.Fatalf("new first call = %+v", r)
	}
	in["twoFactorCode"] = g.smsCode(t, tfaPhone)
	if r, resp := g.signIn(t, in); r.Typename != "SignedIn" || r.Viewer.Kind != "PERSON" {
		t.Fatalf("sign-in with the fresh code = %+v %+v", r, resp.Errors)
	}
}

func TestIntroducerSeesExpiredAfterFiveTries(t *testing.T) {
	t.Parallel()
	// Each wrong code comes from an address of its own: the gateway stops
	// one client after five failures (docs/identity.md, "Sign-in limits"),
	// and this test is about the upstream's own rule.
	g := startGateway(t, "-trusted-proxies", "127.0.0.1")
	in := map[string]any{"kind": "INTRODUCER", "email": "intro@demo.test", "password": demoPassword}
	if r, _ := g.signIn(t, in); r.Typename != "TwoFactorChallenge" || r.MaskedPhone != "+3712*****03" {
		t.Fatalf("step 1 = %+v", r)
	}
	good := g.smsCode(t, introPhone)
	wrong := "000000"
	if good == wrong {
		wrong = "111111"
	}
	for i, want := range []float64{10001, 10001, 10001, 10001, 10003, 10003} {
		in["twoFactorCode"] = wrong
		resp, _ := g.post(t, http.Header{"X-Forwarded-For": {fmt.Sprintf("198.51.100.%d", i+1)}}, signInMutation, map[string]any{"input": in})
		if resp.code() != "UPSTREAM_REJECTED" {
			t.Fatalf("try %d: %+v", i+1, resp.Errors)
		}
		if u := upstreamOf(t, resp); u["code"] != want || u["field"] != "code" || u["name"] != map[float64]string{10001: "INVALID_VALUE", 10003: "CODE_EXPIRED"}[want] {
			t.Errorf("try %d: upstream = %v, want code %v", i+1, u, want)
		}
	}
	delete(in, "twoFactorCode")
	g.signIn(t, in)
	in["twoFactorCode"] = g.smsCode(t, introPhone)
	r, resp := g.signIn(t, in)
	if r.Typename != "SignedIn" || r.Viewer.Kind != "INTRODUCER" {
		t.Fatalf("introducer sign-in = %+v %+v", r, resp.Errors)
	}
}

func TestVersion3ChallengeShape(t *testing.T) {
	t.Parallel()
	g := startGateway(t, "-banking-version", "v3")
	in := map[string]any{"kind": "STAFF", "email": "staff@demo.test", "password": demoPassword}
	before := time.Now()
	r, _ := g.signIn(t, in)
	if r.Typename != "TwoFactorChallenge" || r.MaskedPhone != "+3712*****01" || r.ChallengeID == nil || *r.ChallengeID == "" || r.ExpiresAt == nil {
		t.Fatalf("v3 step 1 = %+v, want challengeId and expiresAt", r)
	}
	exp, err := time.Parse(time.RFC3339, *r.ExpiresAt)
	if err != nil || !exp.After(before) {
		t.Errorf("expiresAt %q is not a future time", *r.ExpiresAt)
	}
	// A wrong challenge id is refused with the upstream's field.
	in["twoFactorCode"] = g.smsCode(t, staffPhone)
	in["challengeId"] = "not-the-challenge"
	_, resp := g.signIn(t, in)
	if resp.code() != "UPSTREAM_REJECTED" || upstreamOf(t, resp)["code"] != float64(10001) {
		t.Fatalf("wrong challenge id: %+v", resp.Errors)
	}
	in["challengeId"] = *r.ChallengeID
	if r, resp := g.signIn(t, in); r.Typename != "SignedIn" || r.Viewer.Kind != "STAFF" {
		t.Fatalf("v3 step 2 = %+v %+v", r, resp.Errors)
	}
	// Persons' challenges come in the same shape.
	pin := map[string]any{"kind": "PERSON", "email": "tfa@demo.test", "password": demoPassword, "deviceFingerprint": 7}
	pr, _ := g.signIn(t, pin)
	if pr.Typename != "TwoFactorChallenge" || pr.ChallengeID == nil {
		t.Fatalf("v3 person step 1 = %+v", pr)
	}
	pin["twoFactorCode"], pin["challengeId"] = g.smsCode(t, tfaPhone), *pr.ChallengeID
	if pr, resp := g.signIn(t, pin); pr.Typename != "SignedIn" {
		t.Fatalf("v3 person step 2 = %+v %+v", pr, resp.Errors)
	}
	// So do introducers'.
	iin := map[string]any{"kind": "INTRODUCER", "email": "intro@demo.test", "password": demoPassword}
	ir, _ := g.signIn(t, iin)
	if ir.Typename != "TwoFactorChallenge" || ir.ChallengeID == nil || ir.ExpiresAt == nil {
		t.Fatalf("v3 introducer step 1 = %+v", ir)
	}
	iin["twoFactorCode"], iin["challengeId"] = g.smsCode(t, introPhone), *ir.ChallengeID
	if ir, resp := g.signIn(t, iin); ir.Typename != "SignedIn" || ir.Viewer.Kind != "INTRODUCER" {
		t.Fatalf("v3 introducer step 2 = %+v %+v", ir, resp.Errors)
	}
	// The phone change answers with the same challenge shape.
	anna := g.signInPerson(t, "anna@demo.test")
	const change = `mutation($input: ChangeMyPhoneInput!) { changeMyPhone(input: $input) {
  __typename ... on TwoFactorChallenge { challengeId expiresAt } ... on Person { phone } } }`
	in2 := map[string]any{"phone": "+37129990011", "currentPassword": demoPassword}
	var step struct {
		ChangeMyPhone struct {
			Typename    string  `json:"__typename"`
			ChallengeID *string `json:"challengeId"`
			ExpiresAt   *string `json:"expiresAt"`
			Phone       string  `json:"phone"`
		} `json:"changeMyPhone"`
	}
	g.queryAs(t, anna, change, map[string]any{"input": in2}).decode(t, &step)
	if step.ChangeMyPhone.Typename != "TwoFactorChallenge" || step.ChangeMyPhone.ChallengeID == nil || step.ChangeMyPhone.ExpiresAt == nil {
		t.Fatalf("v3 phone change step 1 = %+v", step.ChangeMyPhone)
	}
	in2["twoFactorCode"], in2["challengeId"] = g.smsCode(t, "+37129990011"), *step.ChangeMyPhone.ChallengeID
	g.queryAs(t, anna, change, map[string]any{"input": in2}).decode(t, &step)
	if step.ChangeMyPhone.Typename != "Person" || step.ChangeMyPhone.Phone != "+37129990011" {
		t.Fatalf("v3 phone change step 2 = %+v", step.ChangeMyPhone)
	}
}

func TestSignInAPIKeyAndWrongCredentials(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	token := g.signInAPI(t)
	var d viewerData
	g.queryAs(t, token, viewerQuery, nil).decode(t, &d)
	if d.Viewer == nil || d.Viewer.Kind != "API_CLIENT" || d.Viewer.Corporation == nil || rawID(d.Viewer.Corporation.ID) != demoCorpID {
		t.Fatalf("API client viewer = %+v", d.Viewer)
	}
	cases := []struct {
		name  string
		input map[string]any
		code  string
		field string
	}{
		{"wrong api key", map[string]any{"kind": "API_KEY", "apiKey": "nope"}, "UNAUTHENTICATED", "apiKey"},
		{"wrong password", map[string]any{"kind": "PERSON", "email": "anna@demo.test", "password": "wrong-password", "deviceFingerprint": 1}, "UNAUTHENTICATED", "password"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, resp := g.signIn(t, tc.input)
			if resp.code() != tc.code {
				t.Fatalf("code %q, want %s: %+v", resp.code(), tc.code, resp.Errors)
			}
			if tc.field != "" {
				if u := upstreamOf(t, resp); u["field"] != tc.field || u["status"] != float64(401) {
					t.Errorf("upstream = %v", u)
				}
			}
		})
	}
}

func TestSignInCustomerActsOnItself(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	var d struct {
		SignInCustomer struct {
			SessionToken string `json:"sessionToken"`
			Viewer       struct {
				Kind     string `json:"kind"`
				Customer struct {
					ID     string `json:"id"`
					Number string `json:"number"`
				} `json:"customer"`
			} `json:"viewer"`
		} `json:"signInCustomer"`
	}
	g.query(t, `mutation($k: String!) { signInCustomer(input: {customerKey: $k}) { sessionToken viewer { kind customer { id number } } } }`,
		map[string]any{"k": "ck_sandbox_demo"}).decode(t, &d)
	s := d.SignInCustomer
	if s.SessionToken == "" || s.Viewer.Kind != "CUSTOMER" || s.Viewer.Customer.ID == "" {
		t.Fatalf("customer sign-in = %+v", s)
	}
	// The merchant's private-key operations stay closed to a customer.
	for _, q := range []string{`{ customers { id } }`, `{ orders { id } }`, `{ customer(id: "x") { id } }`} {
		if resp := g.queryAs(t, s.SessionToken, q, nil); resp.code() != "FORBIDDEN" {
			t.Errorf("%s as a customer: %+v", q, resp.Errors)
		}
	}
	// Creating an order for another customer is refused before the upstream.
	resp := g.queryAs(t, s.SessionToken, `mutation { createOrder(input: {items: {amount: 100}, currency: "EUR", customerId: "someone-else", payment: {customer: {}}}) { __typename } }`, nil)
	if resp.code() != "FORBIDDEN" {
		t.Errorf("createOrder for another customer: %+v", resp.Errors)
	}
	// Banking operations are not for customers.
	if resp := g.queryAs(t, s.SessionToken, `{ persons { edges { node { id } } } }`, nil); resp.code() != "FORBIDDEN" {
		t.Errorf("persons as a customer: %+v", resp.Errors)
	}
	_, resp2 := g.post(t, nil, `mutation { signInCustomer(input: {customerKey: "ck_wrong"}) { sessionToken } }`, nil)
	if resp2.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp2.StatusCode)
	}
	if r := g.query(t, `mutation { signInCustomer(input: {customerKey: "ck_wrong"}) { sessionToken } }`, nil); r.code() != "UNAUTHENTICATED" {
		t.Errorf("wrong customer key: %+v", r.Errors)
	}
}

func TestPaymentsPolicy(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	if r := g.query(t, `{ customers { id } }`, nil); r.code() != "UNAUTHENTICATED" {
		t.Errorf("customers signed out: %+v", r.Errors)
	}
	anna := g.signInPerson(t, "anna@demo.test")
	for _, q := range []string{`{ customers { id } }`, `mutation { cancelOrder(input: {orderId: "x"}) { orderId } }`} {
		if r := g.queryAs(t, anna, q, nil); r.code() != "FORBIDDEN" {
			t.Errorf("%s as a person: %+v", q, r.Errors)
		}
	}
	if r := g.queryAs(t, g.signInStaff(t), `{ customers { id } }`, nil); len(r.Errors) > 0 {
		t.Errorf("staff may operate payments: %+v", r.Errors)
	}
	// Configurable: persons as operators.
	g2 := startGateway(t, "-payments-operators", "PERSON")
	if r := g2.queryAs(t, g2.signInPerson(t, "anna@demo.test"), `{ customers { id } }`, nil); len(r.Errors) > 0 {
		t.Errorf("person configured as operator: %+v", r.Errors)
	}
	if r := g2.queryAs(t, g2.signInAPI(t), `{ customers { id } }`, nil); r.code() != "FORBIDDEN" {
		t.Errorf("API client no longer an operator: %+v", r.Errors)
	}
}

func TestPublicOperationsAreRateLimitedPerAddress(t *testing.T) {
	t.Parallel()
	g := startGateway(t, "-public-rate-limit", "3")
	codes := []string{}
	for range 5 {
		codes = append(codes, g.query(t, createCustomerMutation, map[string]any{"input": map[string]any{
			"number": uniq("RL-"), "contact": map[string]any{"name": "Rate Limited", "email": "rl@example.com"}, "cardTokens": []string{},
		}}).code())
	}
	if got := strings.Join(codes, ","); got != ",,,RATE_LIMITED,RATE_LIMITED" {
		t.Errorf("codes = %s, want three successes then RATE_LIMITED", got)
	}
	if _, resp := g.signIn(t, map[string]any{"kind": "API_KEY", "apiKey": "demo-api-key"}); resp.code() != "RATE_LIMITED" {
		t.Errorf("sign-in shares the public budget: %+v", resp.Errors)
	}
}

func TestWebSessionCookieAndCSRF(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	r, httpResp := g.post(t, nil, signInMutation, map[string]any{"input": map[string]any{
		"kind": "PERSON", "email": "anna@demo.test", "password": demoPassword, "deviceFingerprint": demoFingerprnt}})
	var d struct {
		SignIn signInResult `json:"signIn"`
	}
	r.decode(t, &d)
	var cookie *http.Cookie
	for _, c := range httpResp.Cookies() {
		if c.Name == "fingraph_session" {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatalf("no session cookie in %v", httpResp.Header.Values("Set-Cookie"))
	}
	if !cookie.HttpOnly || !cookie.Secure || cookie.SameSite != http.SameSiteLaxMode || cookie.Path != "/" || cookie.MaxAge != int((12*time.Hour).Seconds()) {
		t.Errorf("cookie flags: %+v", cookie)
	}
	if cookie.Value != d.SignIn.SessionToken {
		t.Errorf("the cookie carries another token than the response")
	}
	withCookie := http.Header{"Cookie": {"fingraph_session=" + cookie.Value}}

	// A cookie POST without the CSRF header is refused before GraphQL.
	body, resp := g.postRaw(t, withCookie, viewerQuery)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `"FORBIDDEN"`) || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("cookie POST without CSRF: %d %s", resp.StatusCode, body)
	}
	wrong := withCookie.Clone()
	wrong.Set("X-CSRF-Token", "not-the-token")
	if _, resp := g.postRaw(t, wrong, viewerQuery); resp.StatusCode != http.StatusForbidden {
		t.Errorf("wrong CSRF token: %d", resp.StatusCode)
	}
	// With the header, it works; the viewer tells the CSRF token too.
	ok := withCookie.Clone()
	ok.Set("X-CSRF-Token", d.SignIn.CSRFToken)
	out, _ := g.post(t, ok, viewerQuery, nil)
	var v viewerData
	out.decode(t, &v)
	if v.Viewer == nil || v.Viewer.Kind != "PERSON" || v.Viewer.CSRFToken != d.SignIn.CSRFToken {
		t.Fatalf("viewer with cookie and CSRF = %+v", v.Viewer)
	}
	// GET needs no CSRF token (and carries no mutation).
	req, _ := http.NewRequest(http.MethodGet, g.URL+"/graphql?query="+url.QueryEscape(`{ viewer { kind } }`), nil)
	req.Header.Set("Cookie", "fingraph_session="+cookie.Value)
	getResp, err := g.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer getResp.Body.Close()
	var gv struct {
		Data struct {
			Viewer *struct{ Kind string } `json:"viewer"`
		} `json:"data"`
	}
	_ = json.NewDecoder(getResp.Body).Decode(&gv)
	if gv.Data.Viewer == nil || gv.Data.Viewer.Kind != "PERSON" {
		t.Errorf("GET with cookie: %+v", gv)
	}

	// signOut clears the cookie and ends the session.
	so, soResp := g.post(t, ok, `mutation { signOut }`, nil)
	var sd struct {
		SignOut bool `json:"signOut"`
	}
	so.decode(t, &sd)
	if !sd.SignOut {
		t.Errorf("signOut = false")
	}
	cleared := false
	for _, c := range soResp.Cookies() {
		cleared = cleared || (c.Name == "fingraph_session" && c.MaxAge < 0)
	}
	if !cleared {
		t.Errorf("signOut did not clear the cookie: %v", soResp.Header.Values("Set-Cookie"))
	}
	if r := g.queryAs(t, d.SignIn.SessionToken, `{ persons { edges { node { id } } } }`, nil); r.code() != "UNAUTHENTICATED" {
		t.Errorf("after signOut: %+v", r.Errors)
	}
}

func TestSignOutEndsABearerSession(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	token := g.signInStaff(t)
	var d struct {
		SignOut bool `json:"signOut"`
	}
	g.queryAs(t, token, `mutation { signOut }`, nil).decode(t, &d)
	if !d.SignOut {
		t.Fatal("signOut = false")
	}
	var v viewerData
	g.queryAs(t, token, viewerQuery, nil).decode(t, &v)
	if v.Viewer != nil {
		t.Errorf("viewer after signOut = %+v", v.Viewer)
	}
	if r := g.queryAs(t, token, `{ corporations { edges { node { id } } } }`, nil); r.code() != "UNAUTHENTICATED" {
		t.Errorf("after signOut: %+v", r.Errors)
	}
}

func TestRefreshedTokenIsWrittenBack(t *testing.T) {
	t.Parallel()
	// A superseded banking token works for a second only: every request
	// below must use the token refreshed by the one before.
	const grace = time.Second
	g := startGateway(t, "-sandbox-token-grace", grace.String())
	token := g.signInPerson(t, "anna@demo.test")
	for i := range 3 {
		var d viewerData
		g.queryAs(t, token, viewerQuery, nil).decode(t, &d)
		if d.Viewer == nil || d.Viewer.Person == nil || rawID(d.Viewer.Person.ID) != annaID {
			t.Fatalf("round %d: viewer = %+v", i, d.Viewer)
		}
		time.Sleep(2 * grace)
	}
	// Concurrent requests of one session also leave a working token.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if r := g.queryAs(t, token, `{ persons(first: 5) { edges { node { id } } } }`, nil); len(r.Errors) > 0 {
				t.Errorf("concurrent request: %+v", r.Errors)
			}
		})
	}
	wg.Wait()
	time.Sleep(2 * grace)
	var d viewerData
	g.queryAs(t, token, viewerQuery, nil).decode(t, &d)
	if d.Viewer == nil || d.Viewer.Person == nil {
		t.Fatalf("after concurrent requests: viewer = %+v", d.Viewer)
	}
}

func TestRefusedTokenEndsTheSession(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	staff := g.signInStaff(t)
	var k struct {
		CreateAPIKey struct {
			ID         string `json:"id"`
			PrivateKey string `json:"privateKey"`
		} `json:"createApiKey"`
	}
	g.queryAs(t, staff, `mutation { createApiKey(input: {corporationId: "`+demoCorpID+`", name: "short-lived"}) { id privateKey } }`, nil).decode(t, &k)
	var s struct {
		SignIn signInResult `json:"signIn"`
	}
	g.queryAs(t, "", signInMutation, map[string]any{"input": map[string]any{"kind": "API_KEY", "apiKey": k.CreateAPIKey.PrivateKey}}).decode(t, &s)
	api := s.SignIn.SessionToken
	if api == "" {
		t.Fatalf("sign-in with the new key: %+v", s)
	}
	var del struct {
		DeleteAPIKey bool `json:"deleteApiKey"`
	}
	g.queryAs(t, staff, `mutation { deleteApiKey(input: {corporationId: "`+demoCorpID+`", id: "`+k.CreateAPIKey.ID+`"}) }`, nil).decode(t, &del)
	if !del.DeleteAPIKey {
		t.Fatal("deleteApiKey = false")
	}
	// The upstream now refuses the session's token: UNAUTHENTICATED, and the
	// session is gone.
	if r := g.queryAs(t, api, `{ currentCorporation { id } }`, nil); r.code() != "UNAUTHENTICATED" {
		t.Fatalf("deleted key's session: %+v", r.Errors)
	}
	var v viewerData
	g.queryAs(t, api, viewerQuery, nil).decode(t, &v)
	if v.Viewer != nil {
		t.Errorf("session survived the refusal: %+v", v.Viewer)
	}
}

func TestSessionsOfTwoCorporationsAreIsolated(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	sessions := map[string]struct{ token, corp, domain string }{
		"anna": {g.signInPerson(t, "anna@demo.test"), demoCorpID, "@demo.test"},
		"ben":  {g.signInPerson(t, "ben@second.test"), secondCorpID, "@second.test"},
	}
	const q = `{
  viewer { person { id email corporation { id } } corporation { id persons { email } } }
  persons(first: 50) { edges { node { email corporationId } } }
  corporations { edges { node { id } } }
  currentCorporation { id }
  other: person(id: "` + annaID + `") { id }
}`
	var wg sync.WaitGroup
	for name, s := range sessions {
		for range 6 {
			wg.Go(func() {
				resp := g.queryAs(t, s.token, q, nil)
				if len(resp.Errors) > 0 {
					t.Errorf("%s: %+v", name, resp.Errors)
					return
				}
				var d struct {
					Viewer struct {
						Person struct {
							Email       string `json:"email"`
							Corporation struct {
								ID string `json:"id"`
							} `json:"corporation"`
						} `json:"person"`
						Corporation struct {
							ID      string `json:"id"`
							Persons []struct {
								Email string `json:"email"`
							} `json:"persons"`
						} `json:"corporation"`
					} `json:"viewer"`
					Persons struct {
						Items nodes[struct {
							Email         string `json:"email"`
							CorporationID string `json:"corporationId"`
						}] `json:"edges"`
					} `json:"persons"`
					Corporations struct {
						Items nodes[struct {
							ID string `json:"id"`
						}] `json:"edges"`
					} `json:"corporations"`
					CurrentCorporation struct {
						ID string `json:"id"`
					} `json:"currentCorporation"`
					Other *struct {
						ID string `json:"id"`
					} `json:"other"`
				}
				if err := json.Unmarshal(resp.Data, &d); err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				v := d.Viewer
				if !strings.HasSuffix(v.Person.Email, s.domain) || rawID(v.Person.Corporation.ID) != s.corp || rawID(v.Corporation.ID) != s.corp || rawID(d.CurrentCorporation.ID) != s.corp {
					t.Errorf("%s sees viewer %+v, current %s", name, v, d.CurrentCorporation.ID)
				}
				if len(v.Corporation.Persons) == 0 || len(d.Persons.Items) == 0 {
					t.Errorf("%s sees no persons", name)
				}
				for _, p := range v.Corporation.Persons {
					if !strings.HasSuffix(p.Email, s.domain) {
						t.Errorf("%s sees %s", name, p.Email)
					}
				}
				for _, p := range d.Persons.Items {
					if !strings.HasSuffix(p.Email, s.domain) || rawID(p.CorporationID) != s.corp {
						t.Errorf("%s sees %s of %s", name, p.Email, p.CorporationID)
					}
				}
				for _, c := range d.Corporations.Items {
					if rawID(c.ID) != s.corp {
						t.Errorf("%s sees corporation %s", name, c.ID)
					}
				}
				if name == "ben" && d.Other != nil {
					t.Errorf("ben reads anna: %+v", d.Other)
				}
				if name == "anna" && (d.Other == nil || rawID(d.Other.ID) != annaID) {
					t.Errorf("anna cannot read herself: %+v", d.Other)
				}
			})
		}
	}
	wg.Wait()
}

// TestPersonCreateAndUpdateReachTheUpstream: what the sandbox makes of a
// person the gateway sends (a UBO without e-mail, a taken e-mail, an
// update). The gateway's own checks of the input, before the upstream, are
// proven in resolvers/id_persons_test.go.
func TestPersonCreateAndUpdateReachTheUpstream(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.signInPerson(t, "anna@demo.test")
	const create = `mutation($input: CreatePersonInput!) { createPerson(input: $input) { id } }`
	t.Run("create/valid, UBO without e-mail", func(t *testing.T) {
		var d struct {
			CreatePerson struct {
				ID            string `json:"id"`
				CorporationID string `json:"corporationId"`
				IsUbo         bool   `json:"isUbo"`
			} `json:"createPerson"`
		}
		g.queryAs(t, anna, `mutation($input: CreatePersonInput!) { createPerson(input: $input) { id corporationId isUbo } }`,
			map[string]any{"input": map[string]any{"firstName": "Uldis", "lastName": "Bo", "gender": "MALE", "isUbo": true}}).decode(t, &d)
		if d.CreatePerson.ID == "" || rawID(d.CreatePerson.CorporationID) != demoCorpID || !d.CreatePerson.IsUbo {
			t.Fatalf("created %+v", d.CreatePerson)
		}
	})
	t.Run("create/duplicate e-mail is the upstream's", func(t *testing.T) {
		r := g.queryAs(t, anna, create, map[string]any{"input": map[string]any{"firstName": "Ilze", "lastName": "Ozola",
			"email": "dace@demo.test", "gender": "FEMALE"}})
		if r.code() != "UPSTREAM_REJECTED" {
			t.Fatalf("got %+v", r.Errors)
		}
		if u := upstreamOf(t, r); u["status"] != float64(409) || u["field"] != "email" || u["code"] != float64(10001) {
			t.Errorf("upstream = %v", u)
		}
	})
	t.Run("update/valid", func(t *testing.T) {
		var d struct {
			UpdatePerson struct {
				City      string  `json:"city"`
				Ownership float64 `json:"ownership"`
			} `json:"updatePerson"`
		}
		g.queryAs(t, anna, `mutation { updatePerson(input: {id: "`+daceID+`", city: "Jelgava", ownership: 25}) { city ownership } }`, nil).decode(t, &d)
		if d.UpdatePerson.City != "Jelgava" || d.UpdatePerson.Ownership != 25 {
			t.Errorf("updated %+v", d.UpdatePerson)
		}
	})
}

// TestBlockingOneselfIsTheUpstreamsForbidden: where only the upstream
// knows (a person blocking herself), its 403 is FORBIDDEN. The gateway's
// own refusals of staff-only operations, before the upstream, are proven in
// resolvers/id_scopes_test.go and id_persons_test.go.
func TestBlockingOneselfIsTheUpstreamsForbidden(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.signInPerson(t, "anna@demo.test")
	if r := g.queryAs(t, anna, `mutation { blockPerson(input: {id: "`+annaID+`"}) { id } }`, nil); r.code() != "FORBIDDEN" || upstreamOf(t, r)["status"] != float64(403) {
		t.Errorf("blocking oneself: %+v", r.Errors)
	}
}

func TestStaffManagesCorporationsAndAPIKeys(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	staff := g.signInStaff(t)
	// The input's checks before the upstream: resolvers/id_corporations_test.go.
	var d struct {
		UpdateCorporation struct {
			IsOnboarded bool    `json:"isOnboarded"`
			OnboardedAt *string `json:"onboardedAt"`
			Country     string  `json:"country"`
		} `json:"updateCorporation"`
	}
	g.queryAs(t, staff, `mutation { updateCorporation(input: {id: "`+secondCorpID+`", isOnboarded: true, country: "FI", currency: "EUR"}) { isOnboarded onboardedAt country } }`, nil).decode(t, &d)
	if !d.UpdateCorporation.IsOnboarded || d.UpdateCorporation.OnboardedAt == nil || d.UpdateCorporation.Country != "FI" {
		t.Errorf("onboarding: %+v", d.UpdateCorporation)
	}

	// Settings, the corporation's persons and keys in one query, batched.
	var s struct {
		UpdateCorporationSettings struct {
			AllowedPersonTypes []string `json:"allowedPersonTypes"`
			// The corporation, with its id and settings, for a client's
			// normalized cache.
			Corporation struct {
				ID       string `json:"id"`
				Settings struct {
					AllowedPersonTypes []string `json:"allowedPersonTypes"`
				} `json:"settings"`
			} `json:"corporation"`
		} `json:"updateCorporationSettings"`
	}
	g.queryAs(t, staff, `mutation { updateCorporationSettings(input: {corporationId: "`+demoCorpID+`", allowedPersonTypes: [CONSUMER]}) { allowedPersonTypes corporation { id settings { allowedPersonTypes } } } }`, nil).decode(t, &s)
	if strings.Join(s.UpdateCorporationSettings.AllowedPersonTypes, ",") != "EMPLOYEE,CONSUMER" {
		t.Errorf("settings = %v", s.UpdateCorporationSettings.AllowedPersonTypes)
	}
	if c := s.UpdateCorporationSettings.Corporation; c.ID != relay.ID(relay.Corporation, demoCorpID) || strings.Join(c.Settings.AllowedPersonTypes, ",") != "EMPLOYEE,CONSUMER" {
		t.Errorf("the corporation in updateCorporationSettings' answer: %+v", c)
	}
	var k struct {
		CreateAPIKey struct {
			ID         string `json:"id"`
			Name       string `json:"name"`
			IsActive   bool   `json:"isActive"`
			PrivateKey string `json:"privateKey"`
		} `json:"createApiKey"`
	}
	g.queryAs(t, staff, `mutation { createApiKey(input: {corporationId: "`+demoCorpID+`", name: "ci"}) { id name isActive privateKey } }`, nil).decode(t, &k)
	if k.CreateAPIKey.PrivateKey == "" || !k.CreateAPIKey.IsActive {
		t.Fatalf("created key %+v", k.CreateAPIKey)
	}
	g.resetStats(t)
	resp := g.queryAs(t, staff, `{ corporations { edges { node { id name settings { allowedPersonTypes } persons { id corporation { id } } apiKeys { id name } } } } }`, nil)
	var c struct {
		Corporations struct {
			Items nodes[struct {
				ID      string `json:"id"`
				Persons []struct {
					ID          string `json:"id"`
					Corporation struct {
						ID string `json:"id"`
					} `json:"corporation"`
				} `json:"persons"`
				APIKeys []struct {
					ID   string `json:"id"`
					Name string `json:"name"`
				} `json:"apiKeys"`
			}] `json:"edges"`
		} `json:"corporations"`
	}
	resp.decode(t, &c)
	if len(c.Corporations.Items) < 2 {
		t.Fatalf("staff sees %d corporations", len(c.Corporations.Items))
	}
	for _, corp := range c.Corporations.Items {
		if len(corp.Persons) == 0 {
			t.Errorf("corporation %s has no persons", corp.ID)
		}
		for _, p := range corp.Persons {
			if p.Corporation.ID != corp.ID {
				t.Errorf("person %s of %s points at %s", p.ID, corp.ID, p.Corporation.ID)
			}
		}
		if corp.ID == demoCorpID && len(corp.APIKeys) < 2 {
			t.Errorf("demo corporation keys = %+v", corp.APIKeys)
		}
	}
	// One corporation listing; one person listing however many
	// corporations; Person.corporation is served from the primed listing.
	st := g.stats(t)
	for route, n := range st.Routes {
		if strings.HasSuffix(route, "/persons") && n != 1 {
			t.Errorf("%s called %d times, want 1 (batched)", route, n)
		}
		if strings.HasSuffix(route, "/corporations") && n != 1 {
			t.Errorf("%s called %d times, want 1", route, n)
		}
	}
	if strings.Contains(string(resp.Data), k.CreateAPIKey.PrivateKey) || strings.Contains(string(resp.Data), "privateKey") {
		t.Errorf("a listing shows the private key")
	}
}

func TestPasswordRecoveryAndPhoneChange(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	var ok struct {
		ForgotPassword bool `json:"forgotPassword"`
	}
	g.query(t, `mutation { forgotPassword(input: {email: "dace@demo.test"}) }`, nil).decode(t, &ok)
	if !ok.ForgotPassword {
		t.Fatal("forgotPassword = false")
	}
	token := g.emailCode(t, "dace@demo.test")
	newPassword := "n3w-" + uniq("pw")
	seenSecrets.add("password", newPassword)
	var rec struct {
		RecoverPassword bool `json:"recoverPassword"`
	}
	g.query(t, `mutation($t: String!, $p: String!) { recoverPassword(input: {token: $t, password: $p}) }`, map[string]any{"t": token, "p": newPassword}).decode(t, &rec)
	if !rec.RecoverPassword {
		t.Fatal("recoverPassword = false")
	}
	r, resp := g.signIn(t, map[string]any{"kind": "PERSON", "email": "dace@demo.test", "password": newPassword, "deviceFingerprint": 9})
	if r.Typename != "SignedIn" {
		t.Fatalf("sign-in with the new password: %+v %+v", r, resp.Errors)
	}
	// A used token is refused with the upstream's field.
	rr := g.query(t, `mutation($t: String!) { recoverPassword(input: {token: $t, password: "another-password"}) }`, map[string]any{"t": token})
	if rr.code() != "UPSTREAM_REJECTED" || upstreamOf(t, rr)["field"] != "token" {
		t.Errorf("reused recovery token: %+v", rr.Errors)
	}

	// Phone change, two steps (v2): the code goes to the new phone.
	anna := g.signInPerson(t, "anna@demo.test")
	const change = `mutation($input: ChangeMyPhoneInput!) { changeMyPhone(input: $input) {
  __typename ... on TwoFactorChallenge { maskedPhone } ... on Person { phone } } }`
	in := map[string]any{"phone": "+37129998877", "currentPassword": demoPassword}
	var step struct {
		ChangeMyPhone struct {
			Typename    string `json:"__typename"`
			MaskedPhone string `json:"maskedPhone"`
			Phone       string `json:"phone"`
		} `json:"changeMyPhone"`
	}
	g.queryAs(t, anna, change, map[string]any{"input": in}).decode(t, &step)
	if step.ChangeMyPhone.Typename != "TwoFactorChallenge" || step.ChangeMyPhone.MaskedPhone != "+3712*****77" {
		t.Fatalf("step 1 = %+v", step.ChangeMyPhone)
	}
	in["twoFactorCode"] = g.smsCode(t, "+37129998877")
	g.queryAs(t, anna, change, map[string]any{"input": in}).decode(t, &step)
	if step.ChangeMyPhone.Typename != "Person" || step.ChangeMyPhone.Phone != "+37129998877" {
		t.Fatalf("step 2 = %+v", step.ChangeMyPhone)
	}
	var me struct {
		UpdateMe struct {
			Gender string `json:"gender"`
		} `json:"updateMe"`
	}
	g.queryAs(t, anna, `mutation { updateMe(input: {gender: FEMALE}) { gender } }`, nil).decode(t, &me)
	if me.UpdateMe.Gender != "FEMALE" {
		t.Errorf("updateMe = %+v", me.UpdateMe)
	}
}

func TestSignUpCorporationAndFeedbackNeedTheCaptcha(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	signUp := func(captcha string) gqlResponse {
		return g.query(t, `mutation($input: SignUpCorporationInput!) { signUpCorporation(input: $input) { id } }`, map[string]any{"input": map[string]any{
			"companyName": "Third Shop SIA", "email": uniq("founder") + "@third.test", "firstName": "Liga", "lastName": "Egle",
			"phone": "+37120001111", "country": "LV", "captcha": captcha}})
	}
	if r := signUp("wrong"); r.code() != "UPSTREAM_REJECTED" || upstreamOf(t, r)["field"] != "recaptcha" {
		t.Errorf("wrong captcha: %+v", r.Errors)
	}
	var d struct {
		SignUpCorporation struct {
			ID string `json:"id"`
		} `json:"signUpCorporation"`
	}
	signUp("sandbox-captcha-ok").decode(t, &d)
	if d.SignUpCorporation.ID == "" {
		t.Error("no corporation id")
	}
	const feedback = `mutation($input: SendFeedbackInput!) { sendFeedback(input: $input) }`
	in := map[string]any{"name": "Anna", "email": "anna@demo.test", "subject": "Hello", "feedback": "Works well.", "captcha": "nope"}
	if r := g.query(t, feedback, map[string]any{"input": in}); r.code() != "UPSTREAM_REJECTED" {
		t.Errorf("feedback with a wrong captcha: %+v", r.Errors)
	}
	in["captcha"] = "sandbox-captcha-ok"
	var f struct {
		SendFeedback bool `json:"sendFeedback"`
	}
	g.query(t, feedback, map[string]any{"input": in}).decode(t, &f)
	if !f.SendFeedback {
		t.Error("sendFeedback = false")
	}
}

// postRaw POSTs a query with headers and returns the raw body.
func (g *testGateway) postRaw(t *testing.T, h http.Header, query string) (string, *http.Response) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/graphql", strings.NewReader(fmt.Sprintf(`{"query": %q}`, query)))
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := g.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return string(raw), resp
}

// wsQuery runs one operation over the graphql-transport-ws protocol, with
// the given connection_init payload and upgrade headers, and returns the
// first result's payload.
func (g *testGateway) wsQuery(t *testing.T, initPayload map[string]any, h http.Header, query string) (gqlResponse, error) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 5 * time.Second}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(g.URL, "http")+"/graphql", h)
	if err != nil {
		return gqlResponse{}, err
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := conn.WriteJSON(map[string]any{"type": "connection_init", "payload": initPayload}); err != nil {
		return gqlResponse{}, err
	}
	var msg struct {
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := conn.ReadJSON(&msg); err != nil {
		return gqlResponse{}, err
	}
	if msg.Type != "connection_ack" {
		return gqlResponse{}, fmt.Errorf("connection_init answered %s %s", msg.Type, msg.Payload)
	}
	if err := conn.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": query}}); err != nil {
		return gqlResponse{}, err
	}
	for {
		if err := conn.ReadJSON(&msg); err != nil {
			return gqlResponse{}, err
		}
		if msg.Type == "next" {
			var out gqlResponse
			err := json.Unmarshal(msg.Payload, &out)
			return out, err
		}
		if msg.Type == "error" {
			return gqlResponse{}, fmt.Errorf("error: %s", msg.Payload)
		}
	}
}

func TestWebsocketSessions(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	token := g.signInPerson(t, "anna@demo.test")
	const q = `{ viewer { kind person { id } } }`

	// Mobile-style: the session token in connection_init.
	resp, err := g.wsQuery(t, map[string]any{"sessionToken": token}, nil, q)
	if err != nil {
		t.Fatal(err)
	}
	var d viewerData
	resp.decode(t, &d)
	if d.Viewer == nil || d.Viewer.Kind != "PERSON" || d.Viewer.Person == nil || rawID(d.Viewer.Person.ID) != annaID {
		t.Fatalf("viewer over connection_init = %+v", d.Viewer)
	}
	// Web-style: the cookie on the upgrade request.
	resp, err = g.wsQuery(t, nil, http.Header{"Cookie": {"fingraph_session=" + token}}, q)
	if err != nil {
		t.Fatal(err)
	}
	d = viewerData{}
	resp.decode(t, &d)
	if d.Viewer == nil || d.Viewer.Kind != "PERSON" {
		t.Fatalf("viewer over the upgrade cookie = %+v", d.Viewer)
	}
	// An unknown token refuses the connection.
	other := "x"
	if token[0] == 'x' {
		other = "y"
	}
	if _, err := g.wsQuery(t, map[string]any{"sessionToken": other + token[1:]}, nil, q); err == nil {
		t.Error("an unknown session token was accepted")
	}
}
