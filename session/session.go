// Package session keeps the gateway's BFF sessions: who signed in, and the
// upstream credential that signing in produced (a banking access token or a
// payments customer key). The credential never leaves the gateway; frontends
// hold only an opaque session token, as a cookie (web) or a bearer token
// (mobile).
//
// Sessions live in a JetStream key-value bucket so every replica sees them.
// The bucket key is a SHA-256 of the session token, so a dump of the bucket
// yields no token a client could present.
package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Store keeps sessions by session token.
type Store interface {
	// Create stores s (its ID, CSRFToken, CreatedAt and ExpiresAt are
	// filled in) and returns the new session token, shown to the client
	// once.
	Create(ctx context.Context, s *Session) (token string, err error)
	// Get returns the session of token, or ErrNotFound (also for an expired
	// one).
	Get(ctx context.Context, token string) (*Session, error)
	// Update applies fn to the stored session atomically: a concurrent
	// change makes it re-read and apply fn again. fn returning
	// ErrNoChange skips the write.
	Update(ctx context.Context, token string, fn func(*Session) error) (*Session, error)
	// Delete removes the session; deleting a missing one is not an error.
	Delete(ctx context.Context, token string) error
	// TTL is how long a session lives.
	TTL() time.Duration
}

var (
	// ErrNotFound means no live session has that token.
	ErrNotFound = errors.New("session: not found")
	// ErrNoChange, returned by an Update function, leaves the entry as is.
	ErrNoChange = errors.New("session: no change")
)

// Kind is the kind of principal a session speaks for.
type Kind string

// Principal kinds.
const (
	Staff      Kind = "STAFF"
	Person     Kind = "PERSON"
	Introducer Kind = "INTRODUCER"
	APIClient  Kind = "API_CLIENT"
	Customer   Kind = "CUSTOMER"
)

// Valid reports whether k is one of the known kinds.
func (k Kind) Valid() bool {
	switch k {
	case Staff, Person, Introducer, APIClient, Customer:
		return true
	}
	return false
}

// Secret is a credential held in a session. It prints as [REDACTED] through
// fmt and slog; JSON keeps the value because the store needs it.
type Secret string

// Reveal returns the value, where it is really needed.
func (s Secret) Reveal() string { return string(s) }

// String hides the value.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[REDACTED]"
}

// GoString hides the value from %#v.
func (s Secret) GoString() string { return "session.Secret(" + s.String() + ")" }

// LogValue hides the value from slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Session is one signed-in principal.
type Session struct {
	// ID names the session in logs; it is not the session token.
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	// PrincipalID is the id of the staff member, person, introducer, API
	// key or payments customer, when known.
	PrincipalID string `json:"principal_id,omitempty"`
	// PersonID is set for person sessions.
	PersonID string `json:"person_id,omitempty"`
	// CorporationID is set when the principal belongs to one corporation.
	CorporationID string `json:"corporation_id,omitempty"`
	// BankingToken is the upstream banking access token (not for CUSTOMER).
	BankingToken Secret `json:"banking_token,omitempty"`
	// BankingTokenAt is when the response carrying BankingToken arrived;
	// write-back keeps the token of the latest response (see FollowCall).
	BankingTokenAt time.Time `json:"banking_token_at"`
	// BankingCandidates are the other tokens of the last burst of
	// overlapping banking calls, oldest arrival first: one of them may be
	// newer than BankingToken (see FollowCall). Never logged or shown.
	BankingCandidates []Secret `json:"banking_candidates,omitempty"`
	// BankingBurst names the burst BankingToken came from.
	BankingBurst string `json:"banking_burst,omitempty"`
	// CustomerKey is the payments customer key of a CUSTOMER session.
	CustomerKey Secret `json:"customer_key,omitempty"`
	// CSRFToken must accompany cookie-authenticated requests that change
	// state (double-submit).
	CSRFToken string `json:"csrf_token"`
	// Grants are the authorities the session rests on, each with the
	// generation of its record the session was begun under or last proved
	// itself against (see Authority).
	Grants map[string]uint64 `json:"grants,omitempty"`
	// Account names the sign-in account (a digest, never the e-mail) whose
	// failed attempts a wrong current password counts toward.
	Account   string    `json:"account,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// LogValue keeps secrets out of logs even when a session is logged whole.
func (s *Session) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", s.ID), slog.String("kind", string(s.Kind)))
}

// NewToken returns 32 random bytes, base64url without padding.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("session: random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// Key derives the bucket key of a session token.
func Key(token string) string {
	sum := sha256.Sum256([]byte("fingraph-session\x00" + token))
	return hex.EncodeToString(sum[:])
}

// wellFormed rejects anything that cannot be a token before any lookup.
func wellFormed(token string) bool {
	if len(token) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(token)
	return err == nil
}
