package session_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/session"
)

// openAuthority opens two replicas' views of one authority bucket: a and b
// follow it as two gateways would.
func openAuthority(t *testing.T) (a, b *session.Authority) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	kv, err := e.KeyValue(ctx, session.AuthorityBucket, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	a, b = session.NewAuthority(kv), session.NewAuthority(kv)
	for _, x := range []*session.Authority{a, b} {
		if err := x.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

// verdictSoon waits for replica x's watch to deliver what another replica
// wrote, and returns the verdict then (or the last one seen).
func verdictSoon(t *testing.T, x *session.Authority, s *session.Session, want session.Verdict) (session.Verdict, *session.Ending) {
	t.Helper()
	var v session.Verdict
	var e *session.Ending
	for i := 0; i < 200; i++ {
		var err error
		if v, e, err = x.Verdict(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		if v == want {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return v, e
}

func TestRevokeEndsOlderSessionsButTheKeptOne(t *testing.T) {
	a, b := openAuthority(t)
	ctx := context.Background()
	grant := session.PersonGrant("p1")
	older := &session.Session{ID: "older", Grants: map[string]uint64{grant: 0}}
	kept := &session.Session{ID: "kept", Grants: map[string]uint64{grant: 0}}
	if err := a.Revoke(ctx, grant, session.ReasonPasswordChanged, "kept"); err != nil {
		t.Fatal(err)
	}
	if v, e := verdictSoon(t, b, older, session.Revoked); v != session.Revoked || e.Reason != session.ReasonPasswordChanged {
		t.Fatalf("an older session on the other replica: %v %+v", v, e)
	}
	if v, _, _ := b.Verdict(ctx, kept); v != session.Standing {
		t.Fatalf("the kept session: %v", v)
	}
	other := &session.Session{ID: "x", Grants: map[string]uint64{session.PersonGrant("p2"): 0}}
	if v, _, _ := b.Verdict(ctx, other); v != session.Standing {
		t.Fatalf("another person's session: %v", v)
	}
	// A second end of the grant keeps nobody.
	if err := b.Revoke(ctx, grant, session.ReasonBlocked, ""); err != nil {
		t.Fatal(err)
	}
	if v, e := verdictSoon(t, a, kept, session.Revoked); v != session.Revoked || !e.Forbidden() || !errors.Is(e, session.ErrEnded) {
		t.Fatalf("the once kept session after a block: %v %+v", v, e)
	}
}

func TestAnnouncingAnEndEndsNothing(t *testing.T) {
	a, b := openAuthority(t)
	ctx := context.Background()
	grant := session.PersonGrant("p1")
	s := &session.Session{ID: "s", Grants: map[string]uint64{grant: 0}}
	if err := a.Announce(ctx, grant, session.ReasonBlocked); err != nil {
		t.Fatal(err)
	}
	if err := a.RequireProof(ctx, session.APIKeysGrant("c1"), session.ReasonAPIKeyDeleted); err != nil {
		t.Fatal(err)
	}
	api := &session.Session{ID: "api", Grants: map[string]uint64{session.APIKeysGrant("c1"): 0}}
	if v, e := verdictSoon(t, b, api, session.MustProve); v != session.MustProve || e.Reason != session.ReasonAPIKeyDeleted {
		t.Fatalf("an API-client session after a key deletion: %v %+v", v, e)
	}
	if v, _, _ := b.Verdict(ctx, s); v != session.Standing {
		t.Fatalf("an announced end ended a session: %v", v)
	}
	if err := a.Withdraw(ctx, grant); err != nil {
		t.Fatal(err)
	}
}
