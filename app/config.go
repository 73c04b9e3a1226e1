package app

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/fingraph/fingraph/gqlhttp"
	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// Config is the gateway's settings, typed: from flags and FINGRAPH_*
// environment variables by ParseConfig (a flag wins over its variable), or
// built by hand in tests. Validate checks one, whichever way it was made,
// and Start refuses one it does not pass. Nothing changes a Config once it
// is validated: what start-up derives from it (the in-process sandbox's
// addresses and keys, the upload spool, ...) is Start's own (resolved).
// The README's table lists the same settings; keep them in step.
type Config struct {
	// Mode says where the upstreams are: the in-process sandbox, or real
	// ones at PaymentsURL and BankingURL. ParseConfig decides it.
	Mode            Mode
	Addr            string
	PaymentsURL     string
	BankingURL      string
	PaymentsPrivate string
	PaymentsPublic  string
	PaymentsAccess  string
	NATSURL         string
	// NATSReplicas is how many copies of every stream and key-value bucket
	// the gateway creates: 1 on one server, 3 on a cluster of three or more.
	NATSReplicas int
	DataDir      string
	PublicURL    string
	SandboxAddr  string
	LogFormat    string
	LogLevel     slog.Level
	// AllowedOrigins are the web frontends' origins, allowed by CORS and to
	// open websockets besides the gateway's own.
	AllowedOrigins []string
	// RegisterWebhook registers the gateway as the company's webhook on
	// start: PublicURL + /webhooks/payments, or in sandbox mode (where it is
	// on by default) the gateway's own loopback address.
	RegisterWebhook bool
	// ReconcileInterval is how often the event listing is polled for what
	// webhooks missed; 0 turns polling off (the spec's real upstream does
	// not show a listing).
	ReconcileInterval time.Duration
	// ShutdownTimeout bounds a graceful shutdown; no flag sets it.
	ShutdownTimeout time.Duration
	// ShutdownDrain is how long a stopping gateway answers /readyz with 503
	// while it still serves, before it stops accepting: time for a load
	// balancer's health check to take it out of rotation, so that a rolling
	// restart fails no request. 0 (the default) stops at once.
	ShutdownDrain time.Duration
	// SandboxAnonymous lets requests without a session act as the sandbox's
	// demo API client (sandbox mode only), so a first query works at once.
	SandboxAnonymous bool
	// ReadTimeout bounds reading one request, body included; a trickled
	// body is cut when it passes.
	ReadTimeout time.Duration
	// OperationTimeout bounds one query or mutation.
	OperationTimeout time.Duration
	// TrustedDocuments, when set, is a manifest of the only operations the
	// gateway runs (Apollo's persisted query manifest or Relay's map).
	TrustedDocuments string
	// Limits are the operation limits, DefaultLimits with the overrides
	// of FINGRAPH_LIMITS.
	Limits gqlhttp.Limits
	// MetricsAddr, when set, serves /metrics on its own listener (for
	// example loopback or an internal interface) instead of the public one.
	MetricsAddr string
	// TLSCert and TLSKey, when both set, make the gateway serve HTTPS.
	TLSCert, TLSKey string
	// TrustedProxies are the proxies whose forwarding headers name the
	// client address rate limits are keyed on.
	TrustedProxies TrustedProxies
	// Introspection answers __schema and __type and lets validation errors
	// suggest field names. On in sandbox mode, off by default with real
	// upstreams, where the schema is for the gateway's own frontends.
	Introspection bool
	// OTLPEndpoint receives traces over OTLP/HTTP; empty records none.
	OTLPEndpoint string
	// TracerProvider replaces the OTLP exporter in tests; no flag sets it.
	TracerProvider trace.TracerProvider
	// LoaderWait is how long the customer loader gathers ids before its
	// batch goes upstream: longer batches more on a slow machine, shorter
	// adds less latency.
	LoaderWait time.Duration
	// ShareWindow is how long a payments read that others are sending at
	// the same time waits, before it goes upstream, for more of them to
	// share it (roundtrip.WithShareWindow), and a query that one session
	// is already running waits for identical ones to share its execution
	// (gqlhttp's operation sharing). NoSharing ("off") makes every read a
	// call of its own and every query an execution of its own.
	ShareWindow time.Duration
	NoSharing   bool
	// ShareQueries lets identical queries share an execution within the
	// share window; false keeps the shared reads (identical upstream calls
	// in flight) and runs every query on its own, which is how Tailcall's
	// batch window shares when its operation dedupe is off.
	ShareQueries bool
	// OutcomeSettle is how long after a money movement whose answer was
	// lost its absence upstream proves it had no effect; zero is
	// resolvers.DefaultOutcomeSettle. Tests whose faults never delay the
	// upstream shorten it; no flag sets it.
	OutcomeSettle time.Duration
	// UpstreamTimeout bounds every upstream call, retries included;
	// PaymentsTimeout and BankingTimeout bound one upstream's, and are
	// UpstreamTimeout unless set.
	UpstreamTimeout time.Duration
	PaymentsTimeout time.Duration
	BankingTimeout  time.Duration
	// BankingVersion is the banking API version the client speaks (v2, v3).
	BankingVersion string
	// SessionTTL is how long a session lives.
	SessionTTL time.Duration
	// PaymentsOperators lists the principal kinds that may operate the
	// merchant's payments (private-key operations).
	PaymentsOperators []string
	// PaymentsCorporations lists the banking corporations whose principals
	// (of the PaymentsOperators kinds) operate the merchant's payments:
	// the merchant's own. Staff operate them whatever their corporation.
	// "*" allows any corporation. Unset, it is the sandbox's demo
	// corporation in sandbox mode, and none otherwise.
	PaymentsCorporations []string
	// PublicRateLimit is how many public operations (sign-in,
	// createCustomer, feedback, ...) one client address may call per minute.
	PublicRateLimit int
	// WebhookRateLimit is how many refused webhooks one sending address may
	// post per second (with a burst of twice as many).
	WebhookRateLimit float64
	// EnricherWorkers bounds the upstream event reads in flight behind the
	// webhook intake (paymentsfeed.Enricher.Workers).
	EnricherWorkers int
	// EnricherBusyWorkers bounds them during a burst of webhooks
	// (paymentsfeed.Enricher.BusyWorkers); EnricherWorkers turns that off.
	EnricherBusyWorkers int
	// SandboxTokenGrace is how long the in-process sandbox keeps accepting a
	// superseded banking token; tests shrink it.
	SandboxTokenGrace time.Duration
	// DownloadKey signs report download links; empty draws one per process.
	DownloadKey string
	// SandboxMiddleware wraps the in-process sandbox's handler. Only tests
	// set it (the e2e contract validator), like TracerProvider; it has no
	// flag, so production never runs it.
	SandboxMiddleware func(http.Handler) http.Handler
	// SandboxStrict runs the in-process sandbox serving only what the specs
	// show, and the gateway without the features that need the sandbox's
	// additions (see specOnlyNotice).
	SandboxStrict bool
	// SandboxFaults are faults the sandbox starts with, as the control API
	// takes them (POST /_sandbox/faults), for demos of a slow or failing
	// upstream without a script.
	SandboxFaults SandboxFaults
	// PprofAddr, when set, serves net/http/pprof there; loopback only.
	PprofAddr string
	// BankPollInterval is how often the banking poller (package bankpoll)
	// reads the listings of each corporation with a live subscriber for
	// changes made outside the gateway.
	BankPollInterval time.Duration
	// UploadDir is where uploads beyond the memory bound are spooled: each
	// gateway a directory of its own under it. Empty is uploads/ in the
	// data directory, or the system's temporary directory without one.
	UploadDir string

	// oldNames are the settings given by an old name, said in a warning at
	// start.
	oldNames []string
}

// commandsUsage heads -h: the sub-commands, then every setting.
const commandsUsage = `usage:
  fingraph [flags]                 run the gateway (with no upstream URL: the sandbox and JetStream in-process)
  fingraph sandbox [flags]         run only the sandbox, the emulator of both upstreams (default 127.0.0.1:9090)
  fingraph trigger <Event>|--list  fire a sandbox event at a running sandbox or gateway (trigger -h for its flags)

Every flag has an environment variable, named after it; a flag wins over its variable.

flags:
`

// operatorKinds are the principal kinds FINGRAPH_PAYMENTS_OPERATORS may name.
// CUSTOMER is not one: a customer acts only on itself.
var operatorKinds = []string{"STAFF", "PERSON", "INTRODUCER", "API_CLIENT"}

// setting is one row of the settings table: a flag, its environment
// variable, its default (as the flag takes it; "" leaves the zero value or
// a default ParseConfig derives) and the typed value it sets.
type setting struct {
	flag, env, def, usage string
	value                 flag.Value
	// emptyIsDefault says that Set("") makes the field its default, as
	// for FINGRAPH_LIMITS (no change to gqlhttp.DefaultLimits): ParseConfig
	// applies an empty def as it applies any other.
	emptyIsDefault bool
	// renamed, on the row of an old name, is the flag of the new one: the
	// old name is still read, and Start warns that it is.
	renamed string
}

// Set decodes raw into the setting's field; an error names the variable.
func (s *setting) Set(raw string) error {
	if err := s.value.Set(raw); err != nil {
		return fmt.Errorf("%s: %w", s.env, err)
	}
	return nil
}

// String is the field as the flag would take it.
func (s *setting) String() string {
	if s == nil || s.value == nil {
		return ""
	}
	return s.value.String()
}

// name is the setting's flag, its new one for an old name.
func (s *setting) name() string { return cmp.Or(s.renamed, s.flag) }

// settings is the table of every setting, over c's fields: the one place
// that names a setting's flag, variable, default and type.
func (c *Config) settings() []*setting {
	optionalAddr := func(v string) error {
		if v == "" {
			return nil
		}
		return checkAddr(v)
	}
	optionalURL := func(v string) error {
		if v == "" {
			return nil
		}
		return checkURL(v)
	}
	oneOf := func(choices ...string) func(string) error {
		return func(v string) error {
			if !slices.Contains(choices, v) {
				return fmt.Errorf("%q is not %s", v, strings.Join(choices, " or "))
			}
			return nil
		}
	}
	bankPoll := durationValue{p: &c.BankPollInterval, min: time.Second, max: maxPollInterval, example: "10s"}
	return []*setting{
		{flag: "mode", env: "FINGRAPH_MODE", value: &c.Mode,
			usage: "sandbox runs the sandbox in-process with demo data; upstreams talks to the upstreams at payments-url and banking-url (default: sandbox when neither URL is set, else upstreams)"},
		{flag: "addr", env: "FINGRAPH_ADDR", def: ":8080", value: stringValue{&c.Addr, checkAddr},
			usage: "listen address of the gateway"},
		{flag: "payments-url", env: "FINGRAPH_PAYMENTS_URL", value: stringValue{&c.PaymentsURL, optionalURL},
			usage: "base URL of the payments upstream; empty (with banking-url empty) runs the sandbox"},
		{flag: "banking-url", env: "FINGRAPH_BANKING_URL", value: stringValue{&c.BankingURL, optionalURL},
			usage: "base URL of the banking upstream"},
		{flag: "payments-private-key", env: "FINGRAPH_PAYMENTS_PRIVATE_KEY", value: stringValue{p: &c.PaymentsPrivate},
			usage: "the merchant's private key (secret)"},
		{flag: "payments-public-key", env: "FINGRAPH_PAYMENTS_PUBLIC_KEY", value: stringValue{p: &c.PaymentsPublic},
			usage: "the merchant's public key"},
		{flag: "payments-access-token", env: "FINGRAPH_PAYMENTS_ACCESS_TOKEN", value: stringValue{p: &c.PaymentsAccess},
			usage: "access token for webhooks and events (secret)"},
		{flag: "nats-url", env: "FINGRAPH_NATS_URL", value: stringValue{&c.NATSURL, checkNATSURL},
			usage: "external NATS JetStream cluster; empty embeds one"},
		{flag: "nats-replicas", env: "FINGRAPH_NATS_REPLICAS", def: "1", value: intValue{&c.NATSReplicas, 1, 5, "a number"},
			usage: "copies of every stream and key-value bucket the gateway creates, 1 to 5: 3 on a NATS cluster, so that losing a node loses nothing; existing ones with fewer are raised at start"},
		{flag: "data-dir", env: "FINGRAPH_DATA_DIR", value: stringValue{p: &c.DataDir},
			usage: "storage of the embedded JetStream (sessions, idempotency keys, event history), one gateway at a time; default: fingraph/jetstream under the user's state directory ($XDG_STATE_HOME or ~/.local/state), or the cache directory. In sandbox mode the store is its sandbox/ subdirectory, emptied at each start as the sandbox's data is"},
		{flag: "public-url", env: "FINGRAPH_PUBLIC_URL", value: stringValue{&c.PublicURL, optionalURL},
			usage: "public HTTPS URL of this gateway, for webhook registration"},
		{flag: "sandbox-addr", env: "FINGRAPH_SANDBOX_ADDR", value: stringValue{&c.SandboxAddr, optionalAddr},
			usage: "listen address of the sandbox, in-process or as the sandbox command (default 127.0.0.1:9090; in-process, a free loopback port when that one is taken)"},
		{flag: "log-format", env: "FINGRAPH_LOG_FORMAT", def: "text", value: stringValue{&c.LogFormat, oneOf("text", "json")},
			usage: "log format: text or json"},
		{flag: "log-level", env: "FINGRAPH_LOG_LEVEL", def: "info", value: levelValue{&c.LogLevel},
			usage: "log level: debug, info, warn or error"},
		{flag: "otlp-endpoint", env: "FINGRAPH_OTLP_ENDPOINT", value: stringValue{&c.OTLPEndpoint, optionalURL},
			usage: "OTLP/HTTP endpoint receiving traces, e.g. http://collector:4318; empty records none"},
		{flag: "banking-version", env: "FINGRAPH_BANKING_VERSION", def: "v2", value: stringValue{&c.BankingVersion, oneOf("v2", "v3")},
			usage: "banking API version: v2 or v3 (v3 has the challenge-shaped two-factor)"},
		{flag: "session-ttl", env: "FINGRAPH_SESSION_TTL", def: "12h", value: durationValue{p: &c.SessionTTL, min: time.Minute, max: maxSessionTTL, example: "12h"},
			usage: "lifetime of a sign-in session"},
		{flag: "payments-operators", env: "FINGRAPH_PAYMENTS_OPERATORS", def: "STAFF,API_CLIENT", value: listValue{&c.PaymentsOperators, true, checkOperatorKind},
			usage: "comma-separated principal kinds allowed to operate payments: STAFF, PERSON, INTRODUCER, API_CLIENT"},
		{flag: "payments-corporations", env: "FINGRAPH_PAYMENTS_CORPORATIONS", value: listValue{p: &c.PaymentsCorporations},
			usage: "comma-separated banking corporation ids whose principals (of the payments-operators kinds) operate payments: the merchant's own; staff always may; * allows any corporation. Empty: the sandbox's demo corporation when running the sandbox, none otherwise"},
		{flag: "public-rate-limit", env: "FINGRAPH_PUBLIC_RATE_LIMIT", def: "60", value: intValue{&c.PublicRateLimit, 1, maxPublicRateLimit, "a number of requests per minute"},
			usage: "public operations (sign-in, createCustomer, feedback) per minute per client address"},
		{flag: "webhook-rate-limit", env: "FINGRAPH_WEBHOOK_RATE_LIMIT", def: "200", value: floatValue{&c.WebhookRateLimit, 1, maxWebhookRateLimit, "a number of webhooks per second"},
			usage: "refused webhook deliveries (malformed, or not an event id) per second per sending address, with a burst of twice as many; a well-formed webhook is never limited"},
		{flag: "enricher-workers", env: "FINGRAPH_ENRICHER_WORKERS", def: "8", value: intValue{&c.EnricherWorkers, 1, 1024, "a number of concurrent reads"},
			usage: "upstream event reads in flight behind the webhook intake, at most"},
		{flag: "enricher-busy-workers", env: "FINGRAPH_ENRICHER_BUSY_WORKERS", def: "1", value: intValue{&c.EnricherBusyWorkers, 1, 1024, "a number of concurrent reads"},
			usage: "upstream event reads in flight during a burst of webhooks, at most (enrichment yields to the acknowledgements, for at most 2 s per webhook); the enricher-workers value turns that off"},
		{flag: "trusted-documents", env: "FINGRAPH_TRUSTED_DOCUMENTS", value: stringValue{p: &c.TrustedDocuments},
			usage: "manifest of the only operations to run (Apollo persisted query manifest or Relay map of sha256 to text); empty runs any operation within the limits"},
		{flag: "limits", env: "FINGRAPH_LIMITS", value: limitsValue{&c.Limits}, emptyIsDefault: true,
			usage: "operation limits to change, e.g. depth=8,fields=600 (" + strings.Join(limitNames(), ", ") + ")"},
		{flag: "metrics-addr", env: "FINGRAPH_METRICS_ADDR", value: stringValue{&c.MetricsAddr, optionalAddr},
			usage: "listen address of /metrics on its own listener (e.g. 127.0.0.1:9100); empty serves it on the gateway's address"},
		{flag: "tls-cert", env: "FINGRAPH_TLS_CERT", value: stringValue{p: &c.TLSCert},
			usage: "PEM certificate file; with FINGRAPH_TLS_KEY the gateway serves HTTPS"},
		{flag: "tls-key", env: "FINGRAPH_TLS_KEY", value: stringValue{p: &c.TLSKey},
			usage: "PEM private key file of FINGRAPH_TLS_CERT"},
		{flag: "trusted-proxies", env: "FINGRAPH_TRUSTED_PROXIES", value: &c.TrustedProxies,
			usage: "comma-separated addresses or CIDRs of proxies whose X-Forwarded-For or Forwarded header names the client; empty trusts none"},
		{flag: "read-timeout", env: "FINGRAPH_READ_TIMEOUT", def: "30s", value: durationValue{p: &c.ReadTimeout, positive: true, max: maxReadTimeout, example: "30s"},
			usage: "longest time to read one request, body included"},
		{flag: "operation-timeout", env: "FINGRAPH_OPERATION_TIMEOUT", def: "30s", value: durationValue{p: &c.OperationTimeout, positive: true, max: maxOperationTimeout, example: "30s"},
			usage: "longest time one query or mutation may run (subscriptions are not bounded)"},
		{flag: "download-key", env: "FINGRAPH_DOWNLOAD_KEY", value: stringValue{p: &c.DownloadKey},
			usage: "secret signing report download links (secret); empty draws one per process, so links work only on the replica that made them"},
		{flag: "sandbox-faults", env: "FINGRAPH_SANDBOX_FAULTS", value: &c.SandboxFaults,
			usage: `sandbox: faults to start with, a JSON array as POST /_sandbox/faults takes, e.g. [{"route":"GET /payments/v1/customer","latency_ms":100,"latency_max_ms":900,"error_rate":0.1,"status":502,"drop_rate":0.01}]`},
		{flag: "sandbox-token-grace", env: "FINGRAPH_SANDBOX_TOKEN_GRACE", def: "10s", value: durationValue{p: &c.SandboxTokenGrace, positive: true, max: maxSandboxGrace, example: "10s"},
			usage: "in-process sandbox: how long a superseded banking token keeps working"},
		{flag: "loader-wait", env: "FINGRAPH_LOADER_WAIT", def: "1ms", value: durationValue{p: &c.LoaderWait, min: 100 * time.Microsecond, max: 50 * time.Millisecond, example: "1ms"},
			usage: "how long the customer loader gathers ids before it calls the upstream (100us to 50ms)"},
		{flag: "share-window", env: "FINGRAPH_SHARE_WINDOW", def: "1ms", value: shareWindowValue{&c.ShareWindow, &c.NoSharing},
			usage: "how long a payments read that other queries are sending at the same moment waits for more of them to share its call, and a query its session is already running waits for identical ones to share its execution: 0 to 10ms (0 sends it at once), or off to share no call and no execution"},
		{flag: "share-queries", env: "FINGRAPH_SHARE_QUERIES", def: "true", value: boolValue{&c.ShareQueries},
			usage: "whether identical queries of one session sent at the same moment share one execution; false shares upstream reads only (see share-window)"},
		{flag: "upstream-timeout", env: "FINGRAPH_UPSTREAM_TIMEOUT", def: "10s", value: upstreamTimeout(&c.UpstreamTimeout),
			usage: "deadline of one upstream call, retries included"},
		{flag: "payments-timeout", env: "FINGRAPH_PAYMENTS_TIMEOUT", value: upstreamTimeout(&c.PaymentsTimeout),
			usage: "deadline of one payments call; unset uses the upstream timeout"},
		{flag: "banking-timeout", env: "FINGRAPH_BANKING_TIMEOUT", value: upstreamTimeout(&c.BankingTimeout),
			usage: "deadline of one banking call; unset uses the upstream timeout"},
		{flag: "shutdown-drain", env: "FINGRAPH_SHUTDOWN_DRAIN", def: "0s", value: durationValue{p: &c.ShutdownDrain, max: 5 * time.Minute, example: "2s"},
			usage: "on SIGTERM, how long to answer /readyz with 503 while still serving, before closing: longer than the load balancer's health-check interval (e.g. 2s); 0 stops at once"},
		{flag: "pprof-addr", env: "FINGRAPH_PPROF_ADDR", value: stringValue{&c.PprofAddr, checkPprofAddr},
			usage: "loopback address serving Go profiles (net/http/pprof), e.g. 127.0.0.1:6060; empty serves none"},
		{flag: "bank-poll-interval", env: "FINGRAPH_BANK_POLL_INTERVAL", def: "10s", value: bankPoll,
			usage: "how often the banking poller reads the listings of each corporation with a live subscriber for changes made outside the gateway, 1s to 1h"},
		{flag: "live-poll-interval", env: "FINGRAPH_LIVE_POLL_INTERVAL", value: bankPoll, renamed: "bank-poll-interval",
			usage: "old name of -bank-poll-interval (and of FINGRAPH_BANK_POLL_INTERVAL), still read, and start-up warns; of the two variables the new one wins, and a flag of either name beats a variable"},
		{flag: "upload-dir", env: "FINGRAPH_UPLOAD_DIR", value: stringValue{p: &c.UploadDir},
			usage: "where file uploads beyond 1 MiB are kept while they are read (bounded by the uploadSpoolBytes limit): a directory of each gateway's own under it, removed when it stops; default: uploads/ in the data directory, emptied at start, else the system's temporary directory"},
		{flag: "register-webhook", env: "FINGRAPH_REGISTER_WEBHOOK", value: boolValue{&c.RegisterWebhook},
			usage: "register FINGRAPH_PUBLIC_URL/webhooks/payments as the webhook on start: true or false (default true in sandbox mode)"},
		{flag: "sandbox-anonymous", env: "FINGRAPH_SANDBOX_ANONYMOUS", value: boolValue{&c.SandboxAnonymous},
			usage: "sandbox mode: requests without a session act as the demo API client: true or false (default true in sandbox mode)"},
		{flag: "reconcile-interval", env: "FINGRAPH_RECONCILE_INTERVAL", def: "30s", value: durationValue{p: &c.ReconcileInterval, min: 10 * time.Millisecond, max: maxPollInterval, off: "turns polling off", example: "30s"},
			usage: "how often to poll the upstream event listing for missed webhooks, 10ms to 1h; 0 turns it off"},
		{flag: "introspection", env: "FINGRAPH_INTROSPECTION", value: boolValue{&c.Introspection},
			usage: "answer introspection and suggest field names in errors: true or false (default true in sandbox mode, false with real upstreams)"},
		{flag: "sandbox-strict", env: "FINGRAPH_SANDBOX_STRICT", value: boolValue{&c.SandboxStrict},
			usage: "sandbox mode: serve only what the upstream specs show (no event or individuals listing, no order-token JWKS, no offset paging) and run the gateway without what needs them: true or false"},
		{flag: "allowed-origins", env: "FINGRAPH_ALLOWED_ORIGINS", value: listValue{p: &c.AllowedOrigins, valid: checkOrigin},
			usage: "comma-separated origins of web frontends: allowed by CORS (with credentials) and to open websockets, besides the gateway's own"},
	}
}

// upstreamTimeout is the value of an upstream deadline.
func upstreamTimeout(p *time.Duration) durationValue {
	return durationValue{p: p, min: 10 * time.Millisecond, max: 10 * time.Minute, example: "10s"}
}

// ParseConfig reads args (without the program name and sub-command), then
// the environment for every setting no flag gave, over the defaults of the
// settings table; then it derives the defaults that depend on other
// settings (deriveDefaults) and validates the result. An error names the
// setting, says what was wrong and what is accepted; -h prints the usage
// to usage and returns flag.ErrHelp.
func ParseConfig(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	var c Config
	table := c.settings()
	fs := flag.NewFlagSet("fingraph", flag.ContinueOnError)
	// The flag package's own messages are not printed: the error returned
	// says what was wrong. -h and an unknown flag print the usage; a bad
	// value does not, as a bad variable does not.
	fs.SetOutput(io.Discard)
	var badValue error
	fs.Usage = func() {
		if badValue == nil {
			printUsage(usage, table)
		}
	}
	for _, s := range table {
		if s.def != "" || s.emptyIsDefault {
			if err := s.Set(s.def); err != nil {
				panic("the settings table's default is refused: " + err.Error())
			}
		}
		fs.Var(recorded{s, &badValue}, s.flag, s.usage)
	}
	if err := fs.Parse(args); err != nil {
		if badValue != nil {
			return c, badValue
		}
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) {
		s := f.Value.(recorded).s
		given[s.name()] = true
		if s.renamed != "" {
			c.oldNames = append(c.oldNames, fmt.Sprintf("-%s is the old name of -%s: it is still read; rename it", s.flag, s.renamed))
		}
	})
	for _, s := range table {
		raw := getenv(s.env)
		if raw == "" || given[s.name()] {
			continue
		}
		if err := s.Set(raw); err != nil {
			return c, err
		}
		given[s.name()] = true
		if s.renamed != "" {
			c.oldNames = append(c.oldNames, fmt.Sprintf("%s is the old name of %s: it is still read; rename it", s.env, settingNamed(table, s.renamed).env))
		}
	}
	if err := c.deriveDefaults(given, getenv); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// recorded is a setting as the flag set holds it: the first error of a
// Set is kept, so that ParseConfig returns it as it is (naming the
// variable) instead of the flag package's rewording.
type recorded struct {
	s   *setting
	bad *error
}

func (r recorded) String() string { return r.s.String() }

func (r recorded) Set(raw string) error {
	err := r.s.Set(raw)
	if err != nil && *r.bad == nil {
		*r.bad = err
	}
	return err
}

// settingNamed is the row of the table whose flag is name.
func settingNamed(table []*setting, name string) *setting {
	for _, s := range table {
		if s.flag == name {
			return s
		}
	}
	panic("no setting " + name)
}

// deriveDefaults sets what defaults to another setting's value, for the
// settings no flag or variable gave: the mode from the upstream URLs, what
// sandbox mode turns on, the sandbox's merchant corporation, the
// per-upstream deadlines, the data directory.
func (c *Config) deriveDefaults(given map[string]bool, getenv func(string) string) error {
	if !given["mode"] {
		c.Mode = ModeUpstreams
		if c.PaymentsURL == "" && c.BankingURL == "" {
			// No upstream: the sandbox, so that `go run .` works on a
			// fresh machine.
			c.Mode = ModeSandbox
		}
	}
	sandboxMode := c.Mode == ModeSandbox
	// Sandbox mode registers its own webhook, answers a first query without
	// a sign-in and shows its schema, unless told not to.
	for name, b := range map[string]*bool{"register-webhook": &c.RegisterWebhook, "sandbox-anonymous": &c.SandboxAnonymous, "introspection": &c.Introspection} {
		if !given[name] {
			*b = sandboxMode
		}
	}
	if len(c.PaymentsCorporations) == 0 && (sandboxMode || c.PaymentsPrivate == paymentsim.PrivateKey) {
		// The sandbox's merchant is its demo corporation, whose API client
		// (demo-api-key) the README's queries sign in as. The sandbox's
		// own merchant key names it too: a gateway before a standalone
		// sandbox (`fingraph sandbox`, the side-by-side recipe) operates
		// the same merchant. No real merchant's key is that test key.
		c.PaymentsCorporations = []string{bankingsim.DemoCorporationID}
	}
	if !given["payments-timeout"] {
		c.PaymentsTimeout = c.UpstreamTimeout
	}
	if !given["banking-timeout"] {
		c.BankingTimeout = c.UpstreamTimeout
	}
	if c.DataDir == "" && c.NATSURL == "" {
		dir, err := defaultDataDir(getenv)
		if err != nil {
			return fmt.Errorf("FINGRAPH_DATA_DIR: no default directory (%v); set one", err)
		}
		c.DataDir = dir
	}
	c.ShutdownTimeout = 10 * time.Second
	return nil
}

// Validate checks every setting of c, however c was made: each value's own
// range (the upper bounds of configbounds.go included), then the rules
// between settings. Its error is one line naming the setting, the value
// and what is accepted, never a secret.
func (c Config) Validate() error {
	for _, s := range c.settings() {
		v, ok := s.value.(checker)
		if !ok || s.renamed != "" {
			continue
		}
		if err := v.check(); err != nil {
			return fmt.Errorf("%s: %w", s.env, err)
		}
	}
	return c.validateTogether()
}

// validateTogether checks the rules between settings.
func (c Config) validateTogether() error {
	sandboxMode := c.Mode == ModeSandbox
	switch {
	case sandboxMode && (c.PaymentsURL != "" || c.BankingURL != ""):
		return errors.New("FINGRAPH_MODE: sandbox runs the in-process sandbox; leave FINGRAPH_PAYMENTS_URL and FINGRAPH_BANKING_URL unset")
	case !sandboxMode && (c.PaymentsURL == "") != (c.BankingURL == ""):
		return errors.New("FINGRAPH_PAYMENTS_URL and FINGRAPH_BANKING_URL: set both, or neither to run the sandbox")
	case !sandboxMode && c.PaymentsURL == "":
		return errors.New("FINGRAPH_MODE: upstreams needs FINGRAPH_PAYMENTS_URL and FINGRAPH_BANKING_URL")
	}
	if !sandboxMode {
		for _, k := range []struct{ name, v string }{
			{"FINGRAPH_PAYMENTS_PRIVATE_KEY", c.PaymentsPrivate},
			{"FINGRAPH_PAYMENTS_PUBLIC_KEY", c.PaymentsPublic},
			{"FINGRAPH_PAYMENTS_ACCESS_TOKEN", c.PaymentsAccess},
		} {
			if k.v == "" {
				return fmt.Errorf("%s is required when FINGRAPH_PAYMENTS_URL is set", k.name)
			}
		}
	}
	switch {
	case c.SandboxStrict && !sandboxMode:
		return errors.New("FINGRAPH_SANDBOX_STRICT: only the in-process sandbox has a strict mode")
	case c.SandboxAnonymous && !sandboxMode:
		return errors.New("FINGRAPH_SANDBOX_ANONYMOUS: only the in-process sandbox may serve requests without a session; with real upstreams every request signs in")
	case c.RegisterWebhook && !sandboxMode && !strings.HasPrefix(c.PublicURL, "https://"):
		return errors.New("FINGRAPH_PUBLIC_URL: an https:// URL is required with FINGRAPH_REGISTER_WEBHOOK (the upstream accepts HTTPS webhooks only)")
	case c.NATSReplicas > 1 && c.NATSURL == "":
		return fmt.Errorf("FINGRAPH_NATS_REPLICAS: %d copies need a NATS cluster (FINGRAPH_NATS_URL); the embedded JetStream is one server", c.NATSReplicas)
	case c.NATSURL == "" && c.DataDir == "":
		return errors.New("FINGRAPH_DATA_DIR: the embedded JetStream needs a directory (ParseConfig sets a default)")
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return errors.New("FINGRAPH_TLS_CERT: set both FINGRAPH_TLS_CERT and FINGRAPH_TLS_KEY, or neither")
	case c.ShutdownTimeout <= 0:
		return fmt.Errorf("ShutdownTimeout: %s is not a positive duration (ParseConfig sets 10s)", shortDuration(c.ShutdownTimeout))
	case c.OutcomeSettle < 0:
		return fmt.Errorf("OutcomeSettle: %s is negative (0 is the resolvers' default)", shortDuration(c.OutcomeSettle))
	}
	return nil
}

// printUsage writes -h: the sub-commands, then every flag with its type,
// its variable and its default (the table's, never a variable's value,
// which may be a secret).
func printUsage(w io.Writer, table []*setting) {
	fmt.Fprint(w, commandsUsage)
	sorted := slices.SortedFunc(slices.Values(table), func(a, b *setting) int { return strings.Compare(a.flag, b.flag) })
	for _, s := range sorted {
		kind := "value"
		if t, ok := s.value.(typeNamer); ok {
			kind = t.typeName()
		}
		fmt.Fprintf(w, "  -%s %s\n    \t%s ($%s)", s.flag, kind, s.usage, s.env)
		switch {
		case s.def == "":
		case kind == "string":
			fmt.Fprintf(w, " (default %q)", s.def)
		default:
			fmt.Fprintf(w, " (default %s)", s.def)
		}
		fmt.Fprintln(w)
	}
}

func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port (e.g. :8080): %v", addr, err)
	}
	if port == "" {
		return fmt.Errorf("%q has no port", addr)
	}
	return nil
}

func checkURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", v)
	}
	return nil
}

// checkNATSURL takes a cluster named by several URLs, comma-separated, as
// the NATS client takes them: it connects to any and learns the rest. A
// password in a refused URL is not repeated.
func checkNATSURL(v string) error {
	if v == "" {
		return nil
	}
	for _, one := range strings.Split(v, ",") {
		u, err := url.Parse(strings.TrimSpace(one))
		if err != nil || (u.Scheme != "nats" && u.Scheme != "tls" && u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
			return fmt.Errorf("%q is not a NATS URL such as nats://host:4222 (or several, comma-separated)", redactURL(strings.TrimSpace(one)))
		}
	}
	return nil
}

func checkOperatorKind(k string) error {
	if !slices.Contains(operatorKinds, k) {
		return fmt.Errorf("%q is not one of %s", k, strings.Join(operatorKinds, ", "))
	}
	return nil
}

func checkOrigin(o string) error {
	if u, err := url.Parse(o); err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" {
		return fmt.Errorf("%q is not an origin such as https://app.example", o)
	}
	return nil
}

// Logger is the logger the settings ask for, writing to w.
func (c Config) Logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// defaultDataDir is where the embedded JetStream keeps its files when
// FINGRAPH_DATA_DIR is unset: persistent, so that a restart keeps sessions,
// order idempotency keys and the event history. State, not cache, in the XDG
// sense (losing it signs everyone out); the cache directory is the fallback
// on systems without a state directory.
func defaultDataDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "fingraph", "jetstream"), nil
	}
	if home := getenv("HOME"); home != "" && runtime.GOOS != "windows" && runtime.GOOS != "darwin" {
		return filepath.Join(home, ".local", "state", "fingraph", "jetstream"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "fingraph", "jetstream"), nil
}
