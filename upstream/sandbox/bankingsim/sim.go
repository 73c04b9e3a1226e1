// Package bankingsim emulates the banking upstream interface
// (shared/spec/001_6c54d25638069068.txt) for the sandbox, under /banking.
//
// This part covers identity: sign-in for staff, persons, introducers and API
// clients with SMS two-factor codes, password recovery, persons,
// corporations, corporation settings, API keys and feedback. Every choice the
// spec leaves open is documented in docs/sandbox.md, which is a
// contract with the banking client.
package bankingsim

import (
	"crypto/rand"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
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

// Supported API versions. v2 is the minimum; v3 only changes the two-factor
// response shape.
const (
	minVersion = 2
	maxVersion = 3
)

var versionRe = regexp.MustCompile(`^v(\d+)$`)

// Routes registers the banking routes; the caller mounts them at /banking.
func (s *Sim) Routes(r chi.Router) {
	r.Route("/v2", func(r chi.Router) { s.api(r, 2) })
	r.Route("/v3", func(r chi.Router) { s.api(r, 3) })
	// The spec shows the card routes without a version prefix.
	r.Group(func(r chi.Router) { r.Use(s.authenticate); s.cardRoutes(r) })
	// Any other first segment that looks like a version is refused the way
	// the spec's Errors rule 4 says: 400 with an empty field.
	r.HandleFunc("/{version}", s.refuseVersion)
	r.HandleFunc("/{version}/*", s.refuseVersion)
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		writeErrors(w, http.StatusNotFound, fieldErr("", "not found", 0))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		writeErrors(w, http.StatusMethodNotAllowed, fieldErr("", "method not allowed", 0))
	})
}

func (s *Sim) refuseVersion(w http.ResponseWriter, r *http.Request) {
	v := chi.URLParam(r, "version")
	if m := versionRe.FindStringSubmatch(v); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n < minVersion {
			writeErrors(w, http.StatusBadRequest, fieldErr("", "this API version is no longer supported", CodeVersionGone))
			return
		}
	}
	writeErrors(w, http.StatusBadRequest, fieldErr("", "this API version is not supported", CodeVersionUnsupported))
}

// api registers the versioned routes; v2 and v3 share every handler.
func (s *Sim) api(r chi.Router, version int) {
	r.Use(withVersion(version))
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		writeErrors(w, http.StatusNotFound, fieldErr("", "not found", 0))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		writeErrors(w, http.StatusMethodNotAllowed, fieldErr("", "method not allowed", 0))
	})

	// Public routes.
	r.Post("/staff/signin", s.staffSignIn)
	r.Post("/person/signin", s.personSignIn)
	r.Post("/introducer/signin", s.introducerSignIn)
	r.Post("/api/signin", s.apiSignIn)
	r.Post("/person/forgot-password", s.forgotPassword)
	r.Post("/person/recover-password", s.recoverPassword)
	r.Post("/corporation/signup", s.corporationSignUp)
	r.Post("/feedback", s.postFeedback)
	r.Get("/reports/files/{file}", s.getReportFile)

	// Routes that need x-access-token.
	r.Group(func(r chi.Router) {
		r.Use(s.authenticate)
		s.kycRoutes(r)
		s.cardRoutes(r)
		s.personRoutes(r)
		s.corporationRoutes(r)
		s.apiKeyRoutes(r)
		s.walletRoutes(r)
		s.walletWriteRoutes(r)
		s.moneyRoutes(r)
	})
}

// Control registers the banking part of the control API under /_sandbox.
func (s *Sim) Control(r chi.Router) {
	r.Get("/sms", s.getSMS)
	r.Get("/email", s.getEmail)
	r.Get("/feedback", s.getFeedback)
	r.Get("/kyc-documents", s.getKYCStore)
	s.cardControl(r)
	s.moneyControl(r)
}

// Close stops background work; the banking emulator has none.
func (s *Sim) Close() {}
