// Package idempotency remembers order attempts under client-chosen keys, so
// that a retried createOrder carries the upstream order id of the earlier
// failed attempt (the payments spec's rule 3) and a repeated successful one
// returns the same order instead of charging twice. Entries live in a
// JetStream key-value bucket with a TTL, shared by every replica.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Attempt is what is remembered of an order attempt. It never holds a card
// token or card number.
type Attempt struct {
	// OrderID is the upstream order id of the attempt.
	OrderID string `json:"order_id"`
	// Succeeded is set once the order was created.
	Succeeded bool `json:"succeeded"`
	// Fingerprint identifies what the attempt asked for, so a key reused
	// for a different order can be refused.
	Fingerprint string `json:"fingerprint"`
	// Order is the created order, as the upstream answered it.
	Order json.RawMessage `json:"order,omitempty"`
}

// Store keeps attempts in a JetStream key-value bucket.
type Store struct {
	kv jetstream.KeyValue
}

// Bucket is the key-value bucket's name; TTL how long an attempt is kept.
const (
	Bucket = "order_attempts"
	TTL    = 24 * time.Hour
)

// New wraps an opened bucket.
func New(kv jetstream.KeyValue) *Store { return &Store{kv: kv} }

// key derives a bucket key: keys are client text, and bucket keys allow only
// a small alphabet, so they are hashed together with their scope.
func key(scope, k string) string {
	sum := sha256.Sum256([]byte(scope + "\x00" + k))
	return hex.EncodeToString(sum[:])
}

// Get returns the attempt stored under (scope, k), if any.
func (s *Store) Get(ctx context.Context, scope, k string) (*Attempt, error) {
	e, err := s.kv.Get(ctx, key(scope, k))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("idempotency: get: %w", err)
	}
	var a Attempt
	if err := json.Unmarshal(e.Value(), &a); err != nil {
		return nil, fmt.Errorf("idempotency: decode: %w", err)
	}
	return &a, nil
}

// Put stores a under (scope, k).
func (s *Store) Put(ctx context.Context, scope, k string, a Attempt) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if _, err := s.kv.Put(ctx, key(scope, k), b); err != nil {
		return fmt.Errorf("idempotency: put: %w", err)
	}
	return nil
}
