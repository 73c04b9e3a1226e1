package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fingraph/fingraph/engine"
)

// Bucket is the key-value bucket sessions live in.
const Bucket = "sessions"

// DefaultTTL is how long a session lives unless configured otherwise.
const DefaultTTL = 12 * time.Hour

// JetStreamStore keeps sessions in a JetStream key-value bucket whose
// entries expire after the TTL. Because every write (a refreshed token)
// restarts an entry's age in the bucket, ExpiresAt is checked on read too:
// a session never outlives the TTL from its creation.
//
// Once Run (or WatchEnded) has put a watch on the bucket, reads are served
// from a local cache of the sessions this replica has read or written, kept
// current by that watch (see cache.go).
type JetStreamStore struct {
	kv  jetstream.KeyValue
	ttl time.Duration
	now func() time.Time

	cache cache
	// writers serialise this replica's Updates of one session (by a stripe
	// of its key): concurrent ones, as when the calls of one request end
	// their bursts together, would start from the same revision, and all
	// but the first would fail their compare-and-set, then read the bucket
	// and try again. Queued, each starts from the cache the one before it
	// updated. Other replicas' writes still meet the compare-and-set.
	writers [64]sync.Mutex
}

var _ Store = (*JetStreamStore)(nil)

// NewJetStreamStore wraps an opened bucket (engine.KeyValue(ctx, Bucket,
// ttl)); ttl must be the bucket's.
func NewJetStreamStore(kv jetstream.KeyValue, ttl time.Duration) *JetStreamStore {
	s := &JetStreamStore{kv: kv, ttl: ttl, now: time.Now}
	s.cache.init(s.now)
	return s
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
	key := Key(token)
	var rev uint64
	err = engine.Ask(ctx, func(ctx context.Context, attempt int) error {
		var err error
		rev, err = s.kv.Create(ctx, key, b)
		if attempt > 0 && errors.Is(err, jetstream.ErrKeyExists) {
			// An earlier attempt was stored and its answer lost: the
			// key is a fresh random token's, so the entry is ours when
			// it holds what we sent.
			e, gerr := s.kv.Get(ctx, key)
			if gerr != nil {
				return gerr
			}
			if bytes.Equal(e.Value(), b) {
				rev, err = e.Revision(), nil
			}
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("session: store: %w", err)
	}
	s.cache.put(key, sess, rev)
	return token, nil
}

// Get loads the session of token.
func (s *JetStreamStore) Get(ctx context.Context, token string) (*Session, error) {
	sess, _, err := s.get(ctx, token, false)
	return sess, err
}

// get returns a copy of the session of token and its revision: from the
// cache when it holds the key (fresh=false), else from the bucket.
func (s *JetStreamStore) get(ctx context.Context, token string, fresh bool) (*Session, uint64, error) {
	if !wellFormed(token) {
		return nil, 0, ErrNotFound
	}
	key := Key(token)
	sess, rev, ok := s.cache.get(key, fresh)
	if !ok {
		var err error
		if sess, rev, err = s.load(ctx, key); err != nil {
			return nil, 0, err
		}
	}
	if !s.now().Before(sess.ExpiresAt) {
		s.cache.remove(key)
		_ = s.kv.Delete(ctx, key)
		return nil, 0, ErrNotFound
	}
	return sess, rev, nil
}

// load reads key from the bucket and, when nothing changed the key while
// it read, keeps the entry in the cache.
func (s *JetStreamStore) load(ctx context.Context, key string) (*Session, uint64, error) {
	done := s.cache.loading(key)
	var e jetstream.KeyValueEntry
	err := engine.Ask(ctx, func(ctx context.Context, _ int) error {
		var err error
		e, err = s.kv.Get(ctx, key)
		return err
	})
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		done(nil, 0)
		return nil, 0, ErrNotFound
	}
	if err != nil {
		done(nil, 0)
		return nil, 0, fmt.Errorf("session: load: %w", err)
	}
	var sess Session
	if err := json.Unmarshal(e.Value(), &sess); err != nil {
		done(nil, 0)
		return nil, 0, fmt.Errorf("session: decode: %w", err)
	}
	done(&sess, e.Revision())
	return &sess, e.Revision(), nil
}

// Update applies fn with compare-and-set on the entry's revision, retrying
// when another request of the same session wrote in between. The first
// attempt starts from the cache; a conflict means the cache is behind (a
// write on another replica its watch has not delivered yet), so retries
// read the bucket.
func (s *JetStreamStore) Update(ctx context.Context, token string, fn func(*Session) error) (*Session, error) {
	if wellFormed(token) {
		w := &s.writers[stripe(token)]
		w.Lock()
		defer w.Unlock()
	}
	for attempt := 0; ; attempt++ {
		sess, rev, err := s.get(ctx, token, attempt > 0)
		if err != nil {
			return nil, err
		}
		// A session from the cache is a copy of the entry that shares its
		// map and slice with every request holding one: fn writes its own.
		sess.Grants = maps.Clone(sess.Grants)
		sess.BankingCandidates = slices.Clone(sess.BankingCandidates)
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
		key := Key(token)
		// An unanswered write asked again that had landed meets its own
		// revision as a conflict, and the loop reads and applies fn again.
		var newRev uint64
		err = engine.Ask(ctx, func(ctx context.Context, _ int) error {
			var err error
			newRev, err = s.kv.Update(ctx, key, b, rev)
			return err
		})
		if err == nil {
			s.cache.put(key, sess, newRev)
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

// stripe picks a writers lock for token: tokens are random, so their first
// bytes spread evenly.
func stripe(token string) int { return int(token[0]^token[len(token)-1]) % 64 }

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
	// The cache forgets the session first: from here on no request on
	// this replica sees it, even before the bucket's delete is done.
	s.cache.remove(Key(token))
	err := engine.Ask(ctx, func(ctx context.Context, _ int) error { return s.kv.Delete(ctx, Key(token)) })
	if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("session: delete: %w", err)
	}
	return nil
}
