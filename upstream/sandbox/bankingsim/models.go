package bankingsim

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// bcryptCost is deliberately low: the sandbox hashes passwords so that they
// are never stored in clear, not to resist offline attacks.
const bcryptCost = bcrypt.MinCost

// actor is the spec's CreatedBy / UpdatedBy shape.
type actor struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	FullName string `json:"full_name"`
}

type staffMember struct {
	ID, Email, FirstName, LastName, Phone string
	Is2FA                                 bool
	hash                                  []byte
}

type introducer struct {
	ID, Email, FirstName, LastName, Phone string
	hash                                  []byte
}

// message is one entry of the SMS or e-mail outbox.
type message struct {
	To   string    `json:"to"`
	Text string    `json:"text"`
	Code string    `json:"code,omitempty"`
	At   time.Time `json:"at"`
}

// challenge is a pending two-factor (or phone-change) code.
type challenge struct {
	ID       string
	subject  string // "staff:<id>", "person:<id>", "introducer:<id>", "phone:<id>"
	code     string
	issuedAt time.Time
	fails    int
	dead     bool   // the expired message was given; the code no longer works
	newPhone string // phone change only
}

// recovery is a single-use password recovery or invitation token.
type recovery struct {
	personID string
	expires  time.Time
	used     bool
}

func hashPassword(pw string) []byte {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcryptCost)
	if err != nil { // only for passwords over 72 bytes, refused earlier
		panic(err)
	}
	return h
}

func passwordOK(hash []byte, pw string) bool {
	return hash != nil && bcrypt.CompareHashAndPassword(hash, []byte(pw)) == nil
}

func keyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// sixDigits returns a uniformly random 6-digit code.
func sixDigits() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("%06d", n.Int64())
}

// randomToken returns a URL-safe secret.
func randomToken(prefix string) string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// truncatePhone masks all but the first five and last two characters,
// e.g. +37120000002 -> +3712*****02.
func truncatePhone(p string) string {
	r := []rune(p)
	if len(r) <= 7 {
		return p
	}
	out := make([]rune, len(r))
	for i := range r {
		if i < 5 || i >= len(r)-2 {
			out[i] = r[i]
		} else {
			out[i] = '*'
		}
	}
	return string(out)
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func tsPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ts(*t)
}

func (s *Sim) sendSMSLocked(to, text, code string) {
	s.sms = append(s.sms, message{To: to, Text: text, Code: code, At: s.now()})
	s.log.Info("sms queued", "to", truncatePhone(to))
}

func (s *Sim) sendEmailLocked(to, text, code string) {
	s.email = append(s.email, message{To: to, Text: text, Code: code, At: s.now()})
	s.log.Info("email queued")
}
