package resolvers

import "testing"

const signInMutation = `mutation($in: SignInInput!) {
  signIn(input: $in) { __typename ... on SignedIn { sessionToken viewer { kind corporation { name } } } }
}`

// Signing a person in starts a session that knows her person and
// corporation, under the token it answers; a wrong password is the
// upstream's 401, UNAUTHENTICATED.
func TestSignInStartsASessionOfThePerson(t *testing.T) {
	h := newHarness(t)
	var got struct {
		SignIn struct {
			Typename     string `json:"__typename"`
			SessionToken string
			Viewer       struct {
				Kind        string
				Corporation struct{ Name string }
			}
		}
	}
	h.as(anonymous).exec(signInMutation, map[string]any{"in": map[string]any{
		"kind": "PERSON", "email": "anna@demo.test", "password": demoPassword, "deviceFingerprint": 7,
	}}).decode(t, &got)
	s := got.SignIn
	if s.Typename != "SignedIn" || s.Viewer.Kind != "PERSON" || s.Viewer.Corporation.Name != "Demo Corp" {
		t.Fatalf("sign-in answered %+v, want Anna of Demo Corp signed in", s)
	}
	stored, err := h.store.Get(t.Context(), s.SessionToken)
	if err != nil {
		t.Fatalf("the answered token is no session: %v", err)
	}
	if stored.PersonID != demoPerson || stored.CorporationID != demoCorp || stored.BankingToken == "" {
		t.Fatalf("the session holds %+v, want Anna's person, corporation and banking token", stored)
	}

	resp := h.exec(signInMutation, map[string]any{"in": map[string]any{
		"kind": "PERSON", "email": "anna@demo.test", "password": "wrong", "deviceFingerprint": 7,
	}})
	if e := resp.only(t); e.Code() != "UNAUTHENTICATED" {
		t.Fatalf("a wrong password: %s, want UNAUTHENTICATED", resp)
	}
}
