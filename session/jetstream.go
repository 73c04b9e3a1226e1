package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Bucket is the key-value bucket sessions live in.
const Bucket = "sessions"

// DefaultTTL is how long a session lives unless configured otherwise.
const DefaultTTL = 12 * time.Hour

// JetStreamStore keeps sessions in a JetStream key-value bucket whose
// entries expire after the TTL. Because every write (a refreshed token)
// restarts an entry's age in the bucket, ExpiresAt is checked on read too:
// a session never outlives the TTL from its creation.
type JetStreamStore struct {
	kv  jetstream.KeyValue
	ttl time.Duration
	now func() time.Time
}

var _ Store = (*JetStreamStore)(nil)

// NewJetStreamStore wraps an opened bucket (engine.KeyValue(ctx, Bucket,
// ttl)); ttl must be the bucket's.
func NewJetStreamStore(kv jetstream.KeyValue, ttl time.Duration) *JetStreamStore {
	return &JetStreamStore{kv: kv, ttl: ttl, now: time.Now}
}

// TTL is the session lifetime.
func (s *JetStreamStore) TTL() time.Duration { return s.ttl }

// Create stores a new session and returns its token.
func (s *JetStreamStore) Create(ctx context.Context, sess *Session) (string, error) {
	if !sess.Kind.Valid() {
		return "", fmt.Errorf("session: unknown kind %q", sess.Kind)
	}
	token, err := NewToken()
	if err != nil {
		return "", err
	}
	id, err := NewToken()
	if err != nil {
		return "", err
	}
	csrf, err := NewToken()
	if err != nil {
		return "", err
	}
	now := s.now().UTC()
	sess.ID = id[:16]
	sess.CSRFToken = csrf
	sess.CreatedAt = now
	sess.ExpiresAt = now.Add(s.ttl)
	b, err := json.Marshal(sess)
	if err != nil {
		return "", fmt.Errorf("session: encode: %w", err)
	}
	if _, err := s.kv.Create(ctx, Key(token), b); err != nil {
		return "", fmt.Errorf("session: store: %w", err)
	}
	return token, nil
}

// Get loads the session of token.
func (s *JetStreamStore) Get(ctx context.Context, token string) (*Session, error) {
	sess, _, err := s.get(ctx, token)
	return sess, err
}

func (s *JetStreamStore) get(ctx context.Context, token string) (*Session, uint64, error) {
	if !wellFormed(token) {
		return nil, 0, ErrNotFound
	}
	e, err := s.kv.Get(ctx, Key(token))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("session: load: %w", err)
	}
	var sess Session
	if err := json.Unmarshal(e.Value(), &sess); err != nil {
		return nil, 0, fmt.Errorf("session: decode: %w", err)
	}
	if !s.now().Before(sess.ExpiresAt) {
		_ = s.kv.Delete(ctx, Key(token))
		return nil, 0, ErrNotFound
	}
	return &sess, e.Revision(), nil
}

// Update applies fn with compare-and-set on the entry's revision, retrying
// when another request of the same session wrote in between.
func (s *JetStreamStore) Update(ctx context.Context, token string, fn func(*Session) error) (*Session, error) {
	for attempt := 0; ; attempt++ {
		sess, rev, err := s.get(ctx, token)
		if err != nil {
			return nil, err
		}
		if err := fn(sess); err != nil {
			if errors.Is(err, ErrNoChange) {
				return sess, nil
			}
			return nil, err
		}
		b, err := json.Marshal(sess)
		if err != nil {
			return nil, fmt.Errorf("session: encode: %w", err)
		}
		_, err = s.kv.Update(ctx, Key(token), b, rev)
		if err == nil {
			return sess, nil
		}
		if !isRevisionConflict(err) || attempt >= 20 {
			return nil, fmt.Errorf("session: update: %w", err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

func isRevisionConflict(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
		return true
	}
	return errors.Is(err, jetstream.ErrKeyExists)
}

// Delete removes the session of token.
func (s *JetStreamStore) Delete(ctx context.Context, token string) error {
	if !wellFormed(token) {
		return nil
	}
	if err := s.kv.Delete(ctx, Key(token)); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("session: delete: %w", err)
	}
	return nil
}
