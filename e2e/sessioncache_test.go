package e2e

import "testing"

// Each replica serves sessions from a cache kept current by its watch on the
// sessions bucket. A replica that has served a session (so holds it) must
// forget it when another replica signs it out: by the time it closes the
// session's socket with 4401, a request there finds no session.
func TestSignOutOnOneReplicaEndsTheCachedSessionOnAnother(t *testing.T) {
	a, b := twoReplicas(t)
	token := a.signInAPI(t)
	a, b = a.as(token), b.as(token)
	type viewer struct {
		Viewer *struct{ Kind string } `json:"viewer"`
	}
	var before viewer
	b.query(t, `{ viewer { kind } }`, nil).decode(t, &before)
	if before.Viewer == nil || before.Viewer.Kind != "API_CLIENT" {
		t.Fatalf("replica B does not know the session: %+v", before.Viewer)
	}
	ws := b.dialWS(t, nil, nil)
	ws.subscribeFromNow(b, "1", `subscription($after: String) { events(after: $after) `+liveFields+` }`, nil)

	a.query(t, `mutation { signOut }`, nil)
	if code, _ := ws.closeCode(); code != 4401 {
		t.Fatalf("close code on replica B %d, want 4401", code)
	}
	var after viewer
	b.query(t, `{ viewer { kind } }`, nil).decode(t, &after)
	if after.Viewer != nil {
		t.Fatalf("replica B still served the signed-out session: %+v", after.Viewer)
	}
	if r := b.query(t, `{ corporations { edges { node { id } } } }`, nil); r.code() != "UNAUTHENTICATED" {
		t.Errorf("replica B after sign-out on A: %+v", r.Errors)
	}
}
