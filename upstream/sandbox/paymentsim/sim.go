// Package paymentsim emulates the payments upstream interface
// (shared/spec/000_de95282c99b521fa.txt) for the sandbox: customers, stored
// card methods, orders and their events, webhooks with the spec's retry
// schedule, events, individual onboarding and pending actions.
//
// Every choice made where the spec says "not shown" is listed in
// docs/sandbox-payments.md; that list is the contract the upstream client
// follows, since the two share no code.
package paymentsim

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Demo credentials of the seeded merchant. They are fixed so that the demo,
// the documentation and the tests can name them.
const (
	// PublicKey is the merchant's public API key.
	PublicKey = "pk_sandbox_demo"
	// PrivateKey is the merchant's private API key.
	PrivateKey = "sk_sandbox_demo"
	// AccessToken authorises the webhook, event and pending-action routes.
	AccessToken = "at_sandbox_demo"
	// DemoCustomerKey is the customer key of the first seeded customer (C-1001).
	DemoCustomerKey = "ck_sandbox_demo"
)

// Test card token prefixes. Every distinct string with one of these prefixes
// is a fresh single-use card token; any other string is refused.
const (
	// TokenOK marks a card token that authorises.
	TokenOK = "tok_ok_"
	// Token3DS marks a card token whose order needs 3-D Secure first.
	Token3DS = "tok_3ds_"
	// TokenFail marks a card token that is declined.
	TokenFail = "tok_fail_"
)

// Event names the payments sandbox emits.
const (
	EventOrderCreated                     = "OrderCreated"
	EventOrderCaptured                    = "OrderCaptured"
	EventOrderRefunded                    = "OrderRefunded"
	EventOrderCancelled                   = "OrderCancelled"
	EventIndividualOnboardingDataProvided = "IndividualOnboardingDataProvided"
	EventIndividualActivated              = "IndividualActivated"
	EventIndividualBlocked                = "IndividualBlocked"
	EventPendingActionCreated             = "PendingActionCreated"
	EventPendingActionCompleted           = "PendingActionCompleted"
)

// Issuer is the iss claim of signed order tokens.
const Issuer = "fingraph-sandbox"

// seedNamespace makes seeded ids the same on every start.
var seedNamespace = uuid.MustParse("6f0c1d52-8a5e-4c1b-9a43-2f7d0e6b9c11")

// Options configures a Sim.
type Options struct {
	// Logger receives log lines; nil discards them.
	Logger *slog.Logger
	// RetryUnit scales the webhook retry schedule (1, 2, 4, 8, 16 units);
	// zero means one second, the spec's unit.
	RetryUnit time.Duration
	// HTTPClient sends webhooks; nil uses a client with a 5 s timeout.
	HTTPClient *http.Client
	// Strict serves only the routes the spec shows: the sandbox's additions
	// (event listing, individuals listing, the order-token JWKS) answer 404
	// and leave the OpenAPI document.
	Strict bool
}

// Sim is the stateful payments emulator. All its state is in memory and
// guarded by mu; webhook delivery runs in goroutines that Close stops.
type Sim struct {
	opts   Options
	log    *slog.Logger
	client *http.Client
	now    func() time.Time

	signKey ed25519.PrivateKey
	kid     string

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu          sync.Mutex
	closed      bool
	seeding     bool
	seeded      bool
	seedSeq     int
	customers   map[string]*customer
	custList    []string
	custNumbers map[string]string // number -> customer id
	custKeys    map[string]string // customer key -> customer id
	usedTokens  map[string]bool
	orders      map[string]*order
	orderList   []string
	pending     map[string]*pendingOrder // order ids returned in errors, awaiting a retry
	events      []*event
	eventIdx    map[string]int
	webhook     *webhook
	deliveries  []delivery
	slowUntil   map[string]time.Time // webhook URL -> end of the 503 slowdown
	// resumed is non-nil while webhook deliveries are paused; closing it
	// resumes them.
	resumed     chan struct{}
	individuals map[string]*individual
	indList     []string
	actions     map[string]*pendingAction
	actList     []string
}

// New returns an empty emulator with a fresh Ed25519 key for order tokens.
func New(opts Options) *Sim {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.RetryUnit <= 0 {
		opts.RetryUnit = time.Second
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(fmt.Sprintf("payments sandbox: ed25519 key: %v", err))
	}
	sum := sha256.Sum256(pub)
	ctx, cancel := context.WithCancel(context.Background())
	return &Sim{
		opts:        opts,
		log:         opts.Logger,
		client:      client,
		now:         func() time.Time { return time.Now().UTC() },
		signKey:     priv,
		kid:         "sandbox-" + hex.EncodeToString(sum[:8]),
		ctx:         ctx,
		cancel:      cancel,
		customers:   map[string]*customer{},
		custNumbers: map[string]string{},
		custKeys:    map[string]string{},
		usedTokens:  map[string]bool{},
		orders:      map[string]*order{},
		pending:     map[string]*pendingOrder{},
		eventIdx:    map[string]int{},
		slowUntil:   map[string]time.Time{},
		individuals: map[string]*individual{},
		actions:     map[string]*pendingAction{},
	}
}

// Close stops webhook delivery and waits for the delivery goroutines to end.
// Events created afterwards are still stored but never delivered.
func (s *Sim) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
}

// newID returns a random UUID, or while seeding a name-based one so that the
// demo data has the same ids on every start. Callers hold mu.
func (s *Sim) newID() string {
	if s.seeding {
		s.seedSeq++
		return uuid.NewSHA1(seedNamespace, fmt.Appendf(nil, "fingraph-sandbox-payments/%d", s.seedSeq)).String()
	}
	return uuid.NewString()
}

// timeFormat is RFC 3339 with milliseconds, as the spec's "ISO 8601 UTC
// timestamp with milliseconds".
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

func ts(t time.Time) string { return t.UTC().Format(timeFormat) }
