package session_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/session"
)

func openStore(t *testing.T, ttl time.Duration) (*session.JetStreamStore, func() []string) {
	t.Helper()
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	kv, err := e.KeyValue(ctx, session.Bucket, ttl)
	if err != nil {
		t.Fatal(err)
	}
	dump := func() []string {
		keys, _ := kv.Keys(ctx)
		var out []string
		for _, k := range keys {
			en, err := kv.Get(ctx, k)
			if err == nil {
				out = append(out, k, string(en.Value()))
			}
		}
		return out
	}
	return session.NewJetStreamStore(kv, ttl), dump
}

func TestBucketDumpHoldsNoSessionToken(t *testing.T) {
	s, dump := openStore(t, time.Hour)
	ctx := context.Background()
	tok, err := s.Create(ctx, &session.Session{Kind: session.Person, PersonID: "p1", BankingToken: "upstream"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tok) != 43 {
		t.Errorf("token %d characters, want 43 (32 bytes base64url)", len(tok))
	}
	d := strings.Join(dump(), "\n")
	if strings.Contains(d, tok) || !strings.Contains(d, session.Key(tok)) {
		t.Errorf("bucket keys are not the token's hash: %s", d)
	}
	got, err := s.Get(ctx, tok)
	if err != nil || got.PersonID != "p1" || got.BankingToken.Reveal() != "upstream" || got.CSRFToken == "" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if _, err := s.Get(ctx, "not-a-token"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("malformed token: %v", err)
	}
	if err := s.Delete(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, tok); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("after Delete: %v", err)
	}
}

func TestConcurrentUpdatesAreNotLost(t *testing.T) {
	s, _ := openStore(t, time.Hour)
	ctx := context.Background()
	tok, err := s.Create(ctx, &session.Session{Kind: session.Staff})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			_, err := s.Update(ctx, tok, func(x *session.Session) error {
				x.PrincipalID += string(rune('a' + i))
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := s.Get(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.PrincipalID) != 20 {
		t.Errorf("%d of 20 compare-and-set updates survived: %q", len(got.PrincipalID), got.PrincipalID)
	}
}

func TestSecretsDoNotPrint(t *testing.T) {
	s := &session.Session{ID: "id1", Kind: session.Person, BankingToken: "tok-123", CustomerKey: "ck-123"}
	for _, out := range []string{s.BankingToken.String(), s.CustomerKey.GoString(), s.LogValue().String()} {
		if strings.Contains(out, "123") {
			t.Errorf("secret printed: %s", out)
		}
	}
}

// lostFirstCreate is a bucket whose first Create is stored but never
// answered, as when the bucket's leader is lost or the connection drops
// with the write in flight.
type lostFirstCreate struct {
	jetstream.KeyValue
	mu      sync.Mutex
	creates int
}

func (kv *lostFirstCreate) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	kv.mu.Lock()
	kv.creates++
	first := kv.creates == 1
	kv.mu.Unlock()
	rev, err := kv.KeyValue.Create(ctx, key, value, opts...)
	if first && err == nil {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return rev, err
}

// A sign-in whose session write goes unanswered asks again within its own
// deadline, and finds the session it stored, instead of waiting out the
// whole deadline while the cluster has a new leader within seconds.
func TestCreateAsksAgainWhenTheWriteIsNotAnswered(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	bucket, err := e.KeyValue(ctx, session.Bucket, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	kv := &lostFirstCreate{KeyValue: bucket}
	s := session.NewJetStreamStore(kv, time.Hour)
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	tok, err := s.Create(rctx, &session.Session{Kind: session.Person, PersonID: "p1"})
	if err != nil {
		t.Fatalf("create with its first answer lost: %v", err)
	}
	if kv.creates != 2 {
		t.Errorf("%d creates, want the lost one and one more", kv.creates)
	}
	fresh := session.NewJetStreamStore(bucket, time.Hour)
	if got, err := fresh.Get(ctx, tok); err != nil || got.PersonID != "p1" {
		t.Errorf("the stored session: %+v, %v", got, err)
	}
}
