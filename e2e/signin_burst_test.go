package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
)

// Successful sign-ins never count against the address they come from,
// however many run at once: an office of people behind one address signs
// in together every morning. Bulk persons (no two-factor) sign in through
// the ordinary signIn mutation 16 at a time from the test's one client
// address; every answer must be a session, none RATE_LIMITED.
func TestSignInBurstFromOneAddressIsNeverLimited(t *testing.T) {
	// 4,000: with refunded reservations the refusals began after 1,400 to
	// 1,800 sign-ins.
	const corporations, persons, parallel = 400, 10, 16
	g := startGateway(t, "-public-rate-limit", "1000000", "-log-level", "warn")
	var seeded struct {
		Password     string `json:"password"`
		Corporations []struct {
			Persons []struct {
				Email string `json:"email"`
			} `json:"persons"`
		} `json:"corporations"`
	}
	g.sandbox(t, http.MethodPost, "/_sandbox/banking/bulk", map[string]any{"corporations": corporations, "persons": persons}, &seeded)
	var emails []string
	for _, c := range seeded.Corporations {
		for _, p := range c.Persons {
			emails = append(emails, p.Email)
		}
	}

	var signedIn, refused, other atomic.Int64
	var firstRefusal, firstOther atomic.Value
	next := make(chan string)
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for email := range next {
				r, err := signInPerson(g, email, seeded.Password)
				switch {
				case err != nil:
					other.Add(1)
					firstOther.CompareAndSwap(nil, err.Error())
				case r.code() == "RATE_LIMITED":
					if refused.Add(1) == 1 {
						firstRefusal.Store(r.Errors[0].Message)
						t.Logf("first refusal after %d sign-ins: %s", signedIn.Load(), r.Errors[0].Message)
					}
				case len(r.Errors) > 0:
					other.Add(1)
					firstOther.CompareAndSwap(nil, r.Errors[0].Message+" ("+r.code()+")")
				default:
					var d struct {
						SignIn struct {
							SessionToken string `json:"sessionToken"`
						} `json:"signIn"`
					}
					if json.Unmarshal(r.Data, &d) != nil || d.SignIn.SessionToken == "" {
						other.Add(1)
						firstOther.CompareAndSwap(nil, "no session in "+string(r.Data))
						continue
					}
					signedIn.Add(1)
				}
			}
		}()
	}
	for _, e := range emails {
		next <- e
	}
	close(next)
	wg.Wait()
	t.Logf("%d persons, %d at a time from one address: %d signed in, %d refused, %d other errors",
		len(emails), parallel, signedIn.Load(), refused.Load(), other.Load())
	if n := refused.Load(); n > 0 {
		t.Errorf("%d of %d correct sign-ins refused RATE_LIMITED (first: %v)", n, len(emails), firstRefusal.Load())
	}
	if n := other.Load(); n > 0 {
		t.Errorf("%d sign-ins failed otherwise (first: %v)", n, firstOther.Load())
	}
}

// signInPerson is one PERSON sign-in from the test's client, safe to call
// from many goroutines (it never fails the test itself).
func signInPerson(g *testGateway, email, password string) (gqlResponse, error) {
	body, _ := json.Marshal(map[string]any{"query": signInMutation, "variables": map[string]any{"input": map[string]any{
		"kind": "PERSON", "email": email, "password": password, "deviceFingerprint": 42}}})
	resp, err := g.http.Post(g.URL+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		return gqlResponse{}, err
	}
	defer resp.Body.Close()
	var out gqlResponse
	err = json.NewDecoder(resp.Body).Decode(&out)
	return out, err
}
