package e2e

import (
	"fmt"
	"net/http"
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
// much as from one: sign-in attempts are limited per account, and the
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
