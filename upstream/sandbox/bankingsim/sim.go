// Package bankingsim emulates the banking upstream interface
// (shared/spec/001_6c54d25638069068.txt) for the sandbox, under /banking.
//
// This part covers identity: sign-in for staff, persons, introducers and API
// clients with SMS two-factor codes, password recovery, persons,
// corporations, corporation settings, API keys and feedback. Every choice the
// spec leaves open is documented in docs/sandbox-banking.md (wallets and
// money movement in docs/sandbox-wallets.md, cards and KYC documents in
// docs/sandbox-cards.md), which are a contract with the banking client.
package bankingsim

import (
	"crypto/rand"
	"log/slog"
	"sync"
	"time"
)

// Defaults of the tunable durations.
const (
	// DefaultTokenGrace is how long a superseded access token keeps working.
	DefaultTokenGrace = 10 * time.Second
	// DefaultTokenTTL is the lifetime of the newest access token.
	DefaultTokenTTL = time.Hour
	// CodeTTL is the lifetime of a two-factor or phone-change code.
	CodeTTL = 300 * time.Second
	// RecoveryTTL is the lifetime of a password recovery or invitation token.
	RecoveryTTL = 24 * time.Hour
)

// Options configures a Sim.
type Options struct {
	Logger *slog.Logger
	// TokenGrace is how long a superseded access token stays valid;
	// DefaultTokenGrace when zero.
	TokenGrace time.Duration
	// TokenTTL is the lifetime of an access token; DefaultTokenTTL when zero.
	TokenTTL time.Duration
	// Now is the clock; time.Now when nil. Tests move it to expire codes.
	Now func() time.Time
	// SettleAfter is how long a conversion stays PENDING, its funds
	// reserved in the pending wallet, before the sandbox approves it;
	// DefaultSettleAfter when zero, never (only the control API settles)
	// when negative.
	SettleAfter time.Duration
	// Strict serves only what the spec shows: the routes it does not list
	// answer 404, and the meta[offset] paging addition is refused.
	Strict bool
}

// Sim is the stateful banking emulator. All state sits behind one mutex:
// the sandbox is for tests and demos, not throughput.
type Sim struct {
	opts   Options
	log    *slog.Logger
	jwtKey []byte

	mu           sync.Mutex
	staff        map[string]*staffMember
	introducers  map[string]*introducer
	persons      map[string]*person
	corporations map[string]*corporation
	apiKeys      map[string]*apiKey
	tokens       map[string]*tokenState // by jti
	pruneAt      int                    // len(tokens) at which the next prune runs
	prunes       int                    // prunes so far (tests count them)
	superseded   jtiQueue               // superseded tokens, in the order their grace ends
	chains       map[string]string      // chain id -> newest jti
	challenges   map[string]*challenge  // by challenge id
	active       map[string]string      // subject -> its one pending challenge id
	recoveries   map[string]*recovery   // by recovery token
	kyc          map[string]*kycDocument
	cards        map[string]*card
	sms          []message
	email        []message
	feedback     []map[string]any
	wallets      map[string]*wallet    // real and pending, by id
	requisites   map[string]*requisite // by id
	ibanSeq      int
	transactions map[string]*transaction // by id
	invoices     map[string]*invoice     // by id
	limits       map[string]*limit       // by id
	reports      map[string]*report      // by unguessable file id
}

// New returns an empty emulator.
func New(opts Options) *Sim {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.TokenGrace == 0 {
		opts.TokenGrace = DefaultTokenGrace
	}
	if opts.TokenTTL == 0 {
		opts.TokenTTL = DefaultTokenTTL
	}
	if opts.SettleAfter == 0 {
		opts.SettleAfter = DefaultSettleAfter
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &Sim{
		opts:         opts,
		log:          opts.Logger,
		jwtKey:       key,
		staff:        map[string]*staffMember{},
		introducers:  map[string]*introducer{},
		persons:      map[string]*person{},
		corporations: map[string]*corporation{},
		apiKeys:      map[string]*apiKey{},
		kyc:          map[string]*kycDocument{},
		cards:        map[string]*card{},
		tokens:       map[string]*tokenState{},
		chains:       map[string]string{},
		challenges:   map[string]*challenge{},
		active:       map[string]string{},
		recoveries:   map[string]*recovery{},
		wallets:      map[string]*wallet{},
		requisites:   map[string]*requisite{},
		transactions: map[string]*transaction{},
		invoices:     map[string]*invoice{},
		limits:       map[string]*limit{},
		reports:      map[string]*report{},
	}
}

func (s *Sim) now() time.Time { return s.opts.Now().UTC() }

// Close stops background work; the banking emulator has none.
func (s *Sim) Close() {}
