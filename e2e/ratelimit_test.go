package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func signInAttempt(t *testing.T, g *testGateway, email, forwardedFor string) gqlResponse {
	t.Helper()
	h := http.Header{}
	if forwardedFor != "" {
		h.Set("X-Forwarded-For", forwardedFor)
	}
	r, _ := g.post(t, h, signInMutation, map[string]any{"input": map[string]any{
		"kind": "PERSON", "email": email, "password": "wrong-password", "deviceFingerprint": 7}})
	return r
}

// Credential stuffing from many addresses against one account is slowed as
// much as from one: failed sign-ins are limited per account, and the
// refusal says when to come back.
func TestSignInAttemptsAreLimitedPerAccountAcrossAddresses(t *testing.T) {
	g := startGateway(t, "-trusted-proxies", "127.0.0.1", "-public-rate-limit", "1000")
	for i := range 10 {
		r := signInAttempt(t, g, "anna@demo.test", fmt.Sprintf("198.51.100.%d", i+1))
		if r.code() == "RATE_LIMITED" {
			t.Fatalf("attempt %d from a new address was limited: %+v", i+1, r.Errors)
		}
	}
	r := signInAttempt(t, g, "ANNA@demo.test", "198.51.100.99")
	if r.code() != "RATE_LIMITED" {
		t.Fatalf("the 11th attempt for one account: %+v", r.Errors)
	}
	if ra, _ := r.Errors[0].Extensions["retryAfter"].(float64); ra < 1 {
		t.Errorf("no retry hint: %+v", r.Errors[0].Extensions)
	}
	if r := signInAttempt(t, g, "tfa@demo.test", "198.51.100.99"); r.code() == "RATE_LIMITED" {
		t.Errorf("another account was limited too: %+v", r.Errors)
	}
}

// Behind a trusted proxy each forwarded client has its own address limit;
// a client that is not a trusted proxy cannot choose its address.
func TestForwardedAddressesOnlyFromTrustedProxies(t *testing.T) {
	limited := func(g *testGateway, from string) bool {
		r, _ := g.post(t, http.Header{"X-Forwarded-For": {from}}, `mutation { forgotPassword(input: {email: "nobody@demo.test"}) }`, nil)
		return r.code() == "RATE_LIMITED"
	}
	behindProxy := startGateway(t, "-trusted-proxies", "127.0.0.0/8", "-public-rate-limit", "2")
	for range 2 {
		if limited(behindProxy, "203.0.113.1") {
			t.Fatal("limited within the address's allowance")
		}
	}
	if !limited(behindProxy, "203.0.113.1") {
		t.Error("the third call from one forwarded address was not limited")
	}
	if limited(behindProxy, "203.0.113.2") {
		t.Error("another forwarded address shares the first one's limit")
	}

	direct := startGateway(t, "-public-rate-limit", "2")
	limited(direct, "203.0.113.1")
	limited(direct, "203.0.113.2")
	if !limited(direct, "203.0.113.3") {
		t.Error("without trusted proxies, X-Forwarded-For chose the client's address")
	}
}

// Batching attempts into one request does not get around the limits: every
// aliased signIn counts, against the address and the account together.
func TestBatchedSignInAttemptsCountOneByOne(t *testing.T) {
	g := startGateway(t, "-public-rate-limit", "1000")
	var b strings.Builder
	b.WriteString("mutation {")
	for i := range 18 {
		fmt.Fprintf(&b, ` a%d: signIn(input: {kind: PERSON, email: "anna@demo.test", password: "guess-%d", deviceFingerprint: 7}) { __typename }`, i, i)
	}
	b.WriteString(" }")
	r := g.query(t, b.String(), nil)
	limited := 0
	for _, e := range r.Errors {
		if c, _ := e.Extensions["code"].(string); c == "RATE_LIMITED" {
			limited++
		}
	}
	if limited != 13 {
		t.Errorf("18 aliased attempts on one account: %d refused as RATE_LIMITED, want 13 (5 failures allowed per account and address): %+v", limited, r.Errors)
	}
}

// Ids are data, never paths: an id that tries to reach another route or
// another tenant's object gets NOT_FOUND or BAD_USER_INPUT, and no upstream
// route other than the one the field names is called.
func TestInjectionInIdsStaysInItsRoute(t *testing.T) {
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	ids := []string{"..", "../corporations", "%2e%2e", "a/../../v2/persons", "x?meta[limit]=1000", "x#frag", "a\nb", strings.Repeat("9", 300)}
	for _, q := range []string{`query($id: ID!) { person(id: $id) { id } }`, `query($id: ID!) { card(id: $id) { id } }`,
		`query($id: ID!) { customer(id: $id) { id } }`, `query($id: ID!) { corporation(id: $id) { id } }`} {
		for _, id := range ids {
			g.resetStats(t)
			r := g.query(t, q, map[string]any{"id": id})
			if c := r.code(); c != "" && c != "NOT_FOUND" && c != "BAD_USER_INPUT" && c != "FORBIDDEN" {
				t.Errorf("%s with id %q: %s %+v", q, id, c, r.Errors)
			}
			if strings.Contains(string(r.Data), `"id":`) && !strings.Contains(string(r.Data), "null") {
				t.Errorf("%s with id %q found something: %s", q, id, r.Data)
			}
			for route := range g.stats(t).Routes {
				if strings.Contains(route, "..") {
					t.Errorf("%s with id %q reached route %q", q, id, route)
				}
			}
		}
	}
}
