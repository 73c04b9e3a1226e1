package app

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/fingraph/fingraph/gqlhttp"
	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// Config is the gateway's configuration, from flags and FINGRAPH_*
// environment variables (a flag wins over its variable). The README's table
// lists the same settings; keep them in step.
type Config struct {
	Addr            string
	PaymentsURL     string
	BankingURL      string
	PaymentsPrivate string
	PaymentsPublic  string
	PaymentsAccess  string
	NATSURL         string
	// NATSReplicas is how many copies of every stream and key-value bucket
	// the gateway creates: 1 on one server, 3 on a cluster of three or more.
	NATSReplicas    int
	natsReplicasRaw string
	DataDir         string
	PublicURL       string
	SandboxAddr     string
	LogFormat       string
	LogLevel        string
	AllowedOrigins  []string
	// RegisterWebhook registers the gateway as the company's webhook on
	// start: PublicURL + /webhooks/payments, or in sandbox mode (where it is
	// on by default) the gateway's own loopback address.
	RegisterWebhook bool
	// ReconcileInterval is how often the event listing is polled for what
	// webhooks missed; 0 turns polling off (the spec's real upstream does
	// not show a listing).
	ReconcileInterval time.Duration
	ShutdownTimeout   time.Duration
	// ShutdownDrain is how long a stopping gateway answers /readyz with 503
	// while it still serves, before it stops accepting: time for a load
	// balancer's health check to take it out of rotation, so that a rolling
	// restart fails no request. 0 (the default) stops at once.
	ShutdownDrain    time.Duration
	shutdownDrainRaw string
	// SandboxAnonymous lets requests without a session act as the sandbox's
	// demo API client (sandbox mode only), so a first query works at once.
	SandboxAnonymous bool
	// ReadTimeout bounds reading one request, body included; a trickled
	// body is cut when it passes.
	ReadTimeout    time.Duration
	readTimeoutRaw string
	// OperationTimeout bounds one query or mutation.
	OperationTimeout    time.Duration
	operationTimeoutRaw string
	// TrustedDocuments, when set, is a manifest of the only operations the
	// gateway runs (Apollo's persisted query manifest or Relay's map).
	TrustedDocuments string
	// Limits are the operation limits, DefaultLimits with the overrides
	// of FINGRAPH_LIMITS.
	Limits    gqlhttp.Limits
	limitsRaw string
	// MetricsAddr, when set, serves /metrics on its own listener (for
	// example loopback or an internal interface) instead of the public one.
	MetricsAddr string
	// TLSCert and TLSKey, when both set, make the gateway serve HTTPS.
	TLSCert, TLSKey string
	// TrustedProxies are the proxies whose forwarding headers name the
	// client address rate limits are keyed on.
	TrustedProxies    []netip.Prefix
	trustedProxiesRaw string
	// Introspection answers __schema and __type and lets validation errors
	// suggest field names. On in sandbox mode, off by default with real
	// upstreams, where the schema is for the gateway's own frontends.
	Introspection bool
	// OTLPEndpoint receives traces over OTLP/HTTP; empty records none.
	OTLPEndpoint string
	// TracerProvider replaces the OTLP exporter in tests.
	TracerProvider trace.TracerProvider
	// LoaderWait is how long the customer loader gathers ids before its
	// batch goes upstream: longer batches more on a slow machine, shorter
	// adds less latency.
	LoaderWait time.Duration
	// ShareWindow is how long a payments read that others are sending at
	// the same time waits, before it goes upstream, for more of them to
	// share it (roundtrip.WithShareWindow). NoSharing ("off") makes every
	// read a call of its own.
	ShareWindow time.Duration
	NoSharing   bool
	// OutcomeSettle is how long after a money movement whose answer was
	// lost its absence upstream proves it had no effect; zero is
	// resolvers.DefaultOutcomeSettle. Tests whose faults never delay the
	// upstream shorten it; no flag sets it.
	OutcomeSettle time.Duration
	// UpstreamTimeout bounds every upstream call, retries included;
	// PaymentsTimeout and BankingTimeout override it for one upstream.
	UpstreamTimeout    time.Duration
	PaymentsTimeout    time.Duration
	BankingTimeout     time.Duration
	upstreamTimeoutRaw string
	loaderWaitRaw      string
	shareWindowRaw     string
	paymentsTimeoutRaw string
	bankingTimeoutRaw  string

	// BankingVersion is the banking API version the client speaks (v2, v3).
	BankingVersion string
	// SessionTTL is how long a session lives.
	SessionTTL    time.Duration
	sessionTTLRaw string
	// PaymentsOperators lists the principal kinds that may operate the
	// merchant's payments (private-key operations).
	PaymentsOperators    []string
	paymentsOperatorsRaw string
	// PaymentsCorporations lists the banking corporations whose principals
	// (of the PaymentsOperators kinds) operate the merchant's payments:
	// the merchant's own. Staff operate them whatever their corporation.
	// "*" allows any corporation. Empty is the sandbox's demo corporation
	// in sandbox mode, and none otherwise.
	PaymentsCorporations    []string
	paymentsCorporationsRaw string
	// PublicRateLimit is how many public operations (sign-in,
	// createCustomer, feedback, ...) one client address may call per minute.
	PublicRateLimit    int
	publicRateLimitRaw string
	// WebhookRateLimit is how many webhooks one sending address may post
	// per second (with a burst of twice as many). The upstream sends one
	// per event; load runs (bench/webhooks) raise it.
	WebhookRateLimit    float64
	webhookRateLimitRaw string
	// EnricherWorkers bounds the upstream event reads in flight behind the
	// webhook intake (events.Enricher.Workers).
	EnricherWorkers    int
	enricherWorkersRaw string
	// EnricherBusyWorkers bounds them during a burst of webhooks
	// (events.Enricher.BusyWorkers); EnricherWorkers turns that off.
	EnricherBusyWorkers    int
	enricherBusyWorkersRaw string
	// SandboxTokenGrace is how long the in-process sandbox keeps accepting a
	// superseded banking token; tests shrink it.
	SandboxTokenGrace    time.Duration
	sandboxTokenGraceRaw string
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
	SandboxFaults    []sandbox.Fault
	sandboxFaultsRaw string
	// PprofAddr, when set, serves net/http/pprof there; loopback only.
	PprofAddr string
	// LivePollInterval is how often the banking listings of each
	// corporation with a live subscriber are polled for changes made
	// outside the gateway (package bankpoll).
	LivePollInterval    time.Duration
	livePollIntervalRaw string
	// UploadDir is where uploads beyond the memory bound are spooled: each
	// gateway a directory of its own under it. Empty is uploads/ in the
	// data directory, or the system's temporary directory without one.
	UploadDir string
	// uploadSpool is the directory this process spools to, resolved at
	// start.
	uploadSpool string
	// wrapUpstream, set by benchmarks only, wraps each upstream client's
	// transport (name is "payments" or "banking").
	wrapUpstream func(name string, rt http.RoundTripper) http.RoundTripper
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

// sandboxMode reports whether the gateway runs the sandbox in-process: when
// no upstream is configured, so that `go run .` works on a fresh machine.
func (c Config) sandboxMode() bool { return c.PaymentsURL == "" && c.BankingURL == "" }

// setting ties a flag to its environment variable.
type setting struct {
	flag, env, def, usage string
	dst                   *string
}

func (c *Config) settings() []setting {
	return []setting{
		{"addr", "FINGRAPH_ADDR", ":8080", "listen address of the gateway", &c.Addr},
		{"payments-url", "FINGRAPH_PAYMENTS_URL", "", "base URL of the payments upstream; empty (with banking-url empty) runs the sandbox", &c.PaymentsURL},
		{"banking-url", "FINGRAPH_BANKING_URL", "", "base URL of the banking upstream", &c.BankingURL},
		{"payments-private-key", "FINGRAPH_PAYMENTS_PRIVATE_KEY", "", "the merchant's private key (secret)", &c.PaymentsPrivate},
		{"payments-public-key", "FINGRAPH_PAYMENTS_PUBLIC_KEY", "", "the merchant's public key", &c.PaymentsPublic},
		{"payments-access-token", "FINGRAPH_PAYMENTS_ACCESS_TOKEN", "", "access token for webhooks and events (secret)", &c.PaymentsAccess},
		{"nats-url", "FINGRAPH_NATS_URL", "", "external NATS JetStream cluster; empty embeds one", &c.NATSURL},
		{"nats-replicas", "FINGRAPH_NATS_REPLICAS", "1", "copies of every stream and key-value bucket the gateway creates, 1 to 5: 3 on a NATS cluster, so that losing a node loses nothing; existing ones with fewer are raised at start", &c.natsReplicasRaw},
		{"data-dir", "FINGRAPH_DATA_DIR", "", "storage of the embedded JetStream (sessions, idempotency keys, event history), one gateway at a time; default: fingraph/jetstream under the user's state directory ($XDG_STATE_HOME or ~/.local/state), or the cache directory. In sandbox mode the store is its sandbox/ subdirectory, emptied at each start as the sandbox's data is", &c.DataDir},
		{"public-url", "FINGRAPH_PUBLIC_URL", "", "public HTTPS URL of this gateway, for webhook registration", &c.PublicURL},
		{"sandbox-addr", "FINGRAPH_SANDBOX_ADDR", "", "listen address of the sandbox, in-process or as the sandbox command (default 127.0.0.1:9090; in-process, a free loopback port when that one is taken)", &c.SandboxAddr},
		{"log-format", "FINGRAPH_LOG_FORMAT", "text", "log format: text or json", &c.LogFormat},
		{"log-level", "FINGRAPH_LOG_LEVEL", "info", "log level: debug, info, warn or error", &c.LogLevel},
		{"otlp-endpoint", "FINGRAPH_OTLP_ENDPOINT", "", "OTLP/HTTP endpoint receiving traces, e.g. http://collector:4318; empty records none", &c.OTLPEndpoint},
		{"banking-version", "FINGRAPH_BANKING_VERSION", "v2", "banking API version: v2 or v3 (v3 has the challenge-shaped two-factor)", &c.BankingVersion},
		{"session-ttl", "FINGRAPH_SESSION_TTL", "12h", "lifetime of a sign-in session", &c.sessionTTLRaw},
		{"payments-operators", "FINGRAPH_PAYMENTS_OPERATORS", "STAFF,API_CLIENT", "comma-separated principal kinds allowed to operate payments: STAFF, PERSON, INTRODUCER, API_CLIENT", &c.paymentsOperatorsRaw},
		{"payments-corporations", "FINGRAPH_PAYMENTS_CORPORATIONS", "", "comma-separated banking corporation ids whose principals (of the payments-operators kinds) operate payments: the merchant's own; staff always may; * allows any corporation. Empty: the sandbox's demo corporation when running the sandbox, none otherwise", &c.paymentsCorporationsRaw},
		{"public-rate-limit", "FINGRAPH_PUBLIC_RATE_LIMIT", "60", "public operations (sign-in, createCustomer, feedback) per minute per client address", &c.publicRateLimitRaw},
		{"webhook-rate-limit", "FINGRAPH_WEBHOOK_RATE_LIMIT", "200", "refused webhook deliveries (malformed, or not an event id) per second per sending address, with a burst of twice as many; a well-formed webhook is never limited", &c.webhookRateLimitRaw},
		{"enricher-workers", "FINGRAPH_ENRICHER_WORKERS", "8", "upstream event reads in flight behind the webhook intake, at most", &c.enricherWorkersRaw},
		{"enricher-busy-workers", "FINGRAPH_ENRICHER_BUSY_WORKERS", "1", "upstream event reads in flight during a burst of webhooks, at most (enrichment yields to the acknowledgements, for at most 2 s per webhook); the enricher-workers value turns that off", &c.enricherBusyWorkersRaw},
		{"trusted-documents", "FINGRAPH_TRUSTED_DOCUMENTS", "", "manifest of the only operations to run (Apollo persisted query manifest or Relay map of sha256 to text); empty runs any operation within the limits", &c.TrustedDocuments},
		{"limits", "FINGRAPH_LIMITS", "", "operation limits to change, e.g. depth=8,fields=600 (tokens, fields, depth, introspectionDepth, aliases, rootFields, sameName, directives, complexity, bodyBytes, socketsPerAddress, anonymousPerAddress, socketsPerSession, operationsPerSocket, uploadsPerAddress, uploadsPerSession, uploadsPerTenant, uploads, uploadSpoolBytes)", &c.limitsRaw},
		{"metrics-addr", "FINGRAPH_METRICS_ADDR", "", "listen address of /metrics on its own listener (e.g. 127.0.0.1:9100); empty serves it on the gateway's address", &c.MetricsAddr},
		{"tls-cert", "FINGRAPH_TLS_CERT", "", "PEM certificate file; with FINGRAPH_TLS_KEY the gateway serves HTTPS", &c.TLSCert},
		{"tls-key", "FINGRAPH_TLS_KEY", "", "PEM private key file of FINGRAPH_TLS_CERT", &c.TLSKey},
		{"trusted-proxies", "FINGRAPH_TRUSTED_PROXIES", "", "comma-separated addresses or CIDRs of proxies whose X-Forwarded-For or Forwarded header names the client; empty trusts none", &c.trustedProxiesRaw},
		{"read-timeout", "FINGRAPH_READ_TIMEOUT", "30s", "longest time to read one request, body included", &c.readTimeoutRaw},
		{"operation-timeout", "FINGRAPH_OPERATION_TIMEOUT", "30s", "longest time one query or mutation may run (subscriptions are not bounded)", &c.operationTimeoutRaw},
		{"download-key", "FINGRAPH_DOWNLOAD_KEY", "", "secret signing report download links (secret); empty draws one per process, so links work only on the replica that made them", &c.DownloadKey},
		{"sandbox-faults", "FINGRAPH_SANDBOX_FAULTS", "", `sandbox: faults to start with, a JSON array as POST /_sandbox/faults takes, e.g. [{"route":"GET /payments/v1/customer","latency_ms":100,"latency_max_ms":900,"error_rate":0.1,"status":502,"drop_rate":0.01}]`, &c.sandboxFaultsRaw},
		{"sandbox-token-grace", "FINGRAPH_SANDBOX_TOKEN_GRACE", "10s", "in-process sandbox: how long a superseded banking token keeps working", &c.sandboxTokenGraceRaw},
		{"loader-wait", "FINGRAPH_LOADER_WAIT", "1ms", "how long the customer loader gathers ids before it calls the upstream (100us to 50ms)", &c.loaderWaitRaw},
		{"share-window", "FINGRAPH_SHARE_WINDOW", "1ms", "how long a payments read that other queries are sending at the same moment waits for more of them to share its call: 0 to 10ms (0 sends it at once), or off to share no call", &c.shareWindowRaw},
		{"upstream-timeout", "FINGRAPH_UPSTREAM_TIMEOUT", "10s", "deadline of one upstream call, retries included", &c.upstreamTimeoutRaw},
		{"payments-timeout", "FINGRAPH_PAYMENTS_TIMEOUT", "", "deadline of one payments call; empty uses the upstream timeout", &c.paymentsTimeoutRaw},
		{"shutdown-drain", "FINGRAPH_SHUTDOWN_DRAIN", "0s", "on SIGTERM, how long to answer /readyz with 503 while still serving, before closing: longer than the load balancer's health-check interval (e.g. 2s); 0 stops at once", &c.shutdownDrainRaw},
		{"pprof-addr", "FINGRAPH_PPROF_ADDR", "", "loopback address serving Go profiles (net/http/pprof), e.g. 127.0.0.1:6060; empty serves none", &c.PprofAddr},
		{"live-poll-interval", "FINGRAPH_LIVE_POLL_INTERVAL", "10s", "how often the banking listings of each corporation with a live subscriber are polled for changes made outside the gateway, 1s to 1h", &c.livePollIntervalRaw},
		{"banking-timeout", "FINGRAPH_BANKING_TIMEOUT", "", "deadline of one banking call; empty uses the upstream timeout", &c.bankingTimeoutRaw},
		{"upload-dir", "FINGRAPH_UPLOAD_DIR", "", "where file uploads beyond 1 MiB are kept while they are read (bounded by the uploadSpoolBytes limit): a directory of each gateway's own under it, removed when it stops; default: uploads/ in the data directory, emptied at start, else the system's temporary directory", &c.UploadDir},
	}
}

// ParseConfig reads args (without the program name and subcommand) and the
// environment, and validates the result. An error names the setting.
func ParseConfig(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("fingraph", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.Usage = func() {
		fmt.Fprint(usage, commandsUsage)
		fs.PrintDefaults()
	}
	for _, s := range c.settings() {
		def := s.def
		if v := getenv(s.env); v != "" {
			def = v
		}
		fs.StringVar(s.dst, s.flag, def, s.usage+" ($"+s.env+")")
	}
	register := fs.String("register-webhook", getenv("FINGRAPH_REGISTER_WEBHOOK"), "register FINGRAPH_PUBLIC_URL/webhooks/payments as the webhook on start: true or false ($FINGRAPH_REGISTER_WEBHOOK)")
	anonymous := fs.String("sandbox-anonymous", getenv("FINGRAPH_SANDBOX_ANONYMOUS"), "sandbox mode: requests without a session act as the demo API client: true or false (default true in sandbox mode) ($FINGRAPH_SANDBOX_ANONYMOUS)")
	reconcile := fs.String("reconcile-interval", getenv("FINGRAPH_RECONCILE_INTERVAL"), "how often to poll the upstream event listing for missed webhooks, 10ms to 1h; 0 turns it off (default 30s) ($FINGRAPH_RECONCILE_INTERVAL)")
	introspection := fs.String("introspection", getenv("FINGRAPH_INTROSPECTION"), "answer introspection and suggest field names in errors: true or false (default true in sandbox mode, false with real upstreams) ($FINGRAPH_INTROSPECTION)")
	strict := fs.String("sandbox-strict", getenv("FINGRAPH_SANDBOX_STRICT"), "sandbox mode: serve only what the upstream specs show (no event or individuals listing, no order-token JWKS, no offset paging) and run the gateway without what needs them: true or false ($FINGRAPH_SANDBOX_STRICT)")
	origins := fs.String("allowed-origins", getenv("FINGRAPH_ALLOWED_ORIGINS"), "comma-separated origins of web frontends: allowed by CORS (with credentials) and to open websockets, besides the gateway's own ($FINGRAPH_ALLOWED_ORIGINS)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := checkPprofAddr(c.PprofAddr); err != nil {
		return c, err
	}
	for _, o := range strings.Split(*origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.AllowedOrigins = append(c.AllowedOrigins, o)
		}
	}
	// Sandbox mode registers the gateway's own webhook unless told not to.
	c.RegisterWebhook = c.sandboxMode()
	if *register != "" {
		b, err := strconv.ParseBool(*register)
		if err != nil {
			return c, fmt.Errorf("FINGRAPH_REGISTER_WEBHOOK: %q is not true or false", *register)
		}
		c.RegisterWebhook = b
	}
	c.SandboxAnonymous = c.sandboxMode()
	if *anonymous != "" {
		b, err := strconv.ParseBool(*anonymous)
		if err != nil {
			return c, fmt.Errorf("FINGRAPH_SANDBOX_ANONYMOUS: %q is not true or false", *anonymous)
		}
		if b && !c.sandboxMode() {
			return c, errors.New("FINGRAPH_SANDBOX_ANONYMOUS: only the in-process sandbox may serve requests without a session; with real upstreams every request signs in")
		}
		c.SandboxAnonymous = b
	}
	if c.sandboxFaultsRaw != "" {
		dec := json.NewDecoder(strings.NewReader(c.sandboxFaultsRaw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c.SandboxFaults); err != nil {
			return c, fmt.Errorf("FINGRAPH_SANDBOX_FAULTS: not a JSON array of faults: %v", err)
		}
	}
	if *strict != "" {
		b, err := strconv.ParseBool(*strict)
		if err != nil {
			return c, fmt.Errorf("FINGRAPH_SANDBOX_STRICT: %q is not true or false", *strict)
		}
		if b && !c.sandboxMode() {
			return c, errors.New("FINGRAPH_SANDBOX_STRICT: only the in-process sandbox has a strict mode")
		}
		c.SandboxStrict = b
	}
	c.Introspection = c.sandboxMode()
	if *introspection != "" {
		b, err := strconv.ParseBool(*introspection)
		if err != nil {
			return c, fmt.Errorf("FINGRAPH_INTROSPECTION: %q is not true or false", *introspection)
		}
		c.Introspection = b
	}
	if c.DataDir == "" && c.NATSURL == "" {
		dir, err := defaultDataDir(getenv)
		if err != nil {
			return c, fmt.Errorf("FINGRAPH_DATA_DIR: no default directory (%v); set one", err)
		}
		c.DataDir = dir
	}
	c.ReconcileInterval = 30 * time.Second
	if *reconcile != "" {
		d, err := time.ParseDuration(*reconcile)
		if err != nil || d < 0 || (d > 0 && d < 10*time.Millisecond) || d > maxPollInterval {
			return c, fmt.Errorf("FINGRAPH_RECONCILE_INTERVAL: %q is not a duration from 10ms to 1h such as 30s (0 turns polling off)", *reconcile)
		}
		c.ReconcileInterval = d
	}
	c.ShutdownTimeout = 10 * time.Second
	if d, err := time.ParseDuration(c.shutdownDrainRaw); err != nil || d < 0 || d > 5*time.Minute {
		return c, fmt.Errorf("FINGRAPH_SHUTDOWN_DRAIN: %q is not a duration from 0s to 5m, such as 2s", c.shutdownDrainRaw)
	} else {
		c.ShutdownDrain = d
	}
	n, err := strconv.Atoi(c.natsReplicasRaw)
	if err != nil || n < 1 || n > 5 {
		return c, fmt.Errorf("FINGRAPH_NATS_REPLICAS: %q is not a number from 1 to 5", c.natsReplicasRaw)
	}
	if n > 1 && c.NATSURL == "" {
		return c, fmt.Errorf("FINGRAPH_NATS_REPLICAS: %d copies need a NATS cluster (FINGRAPH_NATS_URL); the embedded JetStream is one server", n)
	}
	c.NATSReplicas = n
	if d, err := time.ParseDuration(c.livePollIntervalRaw); err != nil || d < time.Second || d > maxPollInterval {
		return c, fmt.Errorf("FINGRAPH_LIVE_POLL_INTERVAL: %q is not a duration from 1s to 1h, such as 10s", c.livePollIntervalRaw)
	} else {
		c.LivePollInterval = d
	}
	if err := c.parseTimeouts(); err != nil {
		return c, err
	}
	if err := c.parseIdentity(); err != nil {
		return c, err
	}
	return c, c.validate()
}

// parseTimeouts reads the upstream deadlines: one for both upstreams, and
// one per upstream that overrides it when set. Errors name the setting.
func (c *Config) parseTimeouts() error {
	parse := func(env, raw string) (time.Duration, error) {
		d, err := time.ParseDuration(raw)
		if err != nil || d < 10*time.Millisecond || d > 10*time.Minute {
			return 0, fmt.Errorf("%s: %q is not a duration from 10ms to 10m, such as 10s", env, raw)
		}
		return d, nil
	}
	var err error
	if c.UpstreamTimeout, err = parse("FINGRAPH_UPSTREAM_TIMEOUT", c.upstreamTimeoutRaw); err != nil {
		return err
	}
	if c.LoaderWait, err = time.ParseDuration(c.loaderWaitRaw); err != nil || c.LoaderWait < 100*time.Microsecond || c.LoaderWait > 50*time.Millisecond {
		return fmt.Errorf("FINGRAPH_LOADER_WAIT: %q is not a duration from 100us to 50ms, such as 1ms", c.loaderWaitRaw)
	}
	if c.NoSharing = c.shareWindowRaw == "off"; !c.NoSharing {
		if c.ShareWindow, err = time.ParseDuration(c.shareWindowRaw); err != nil || c.ShareWindow < 0 || c.ShareWindow > 10*time.Millisecond {
			return fmt.Errorf("FINGRAPH_SHARE_WINDOW: %q is not a duration from 0 to 10ms, such as 1ms, or off", c.shareWindowRaw)
		}
	}
	c.PaymentsTimeout, c.BankingTimeout = c.UpstreamTimeout, c.UpstreamTimeout
	if c.paymentsTimeoutRaw != "" {
		if c.PaymentsTimeout, err = parse("FINGRAPH_PAYMENTS_TIMEOUT", c.paymentsTimeoutRaw); err != nil {
			return err
		}
	}
	if c.bankingTimeoutRaw != "" {
		if c.BankingTimeout, err = parse("FINGRAPH_BANKING_TIMEOUT", c.bankingTimeoutRaw); err != nil {
			return err
		}
	}
	return nil
}

// parseIdentity reads the settings of sessions, payments policy and the
// public rate limit; errors name the setting.
func (c *Config) parseIdentity() error {
	var err error
	if c.SessionTTL, err = time.ParseDuration(c.sessionTTLRaw); err != nil || c.SessionTTL < time.Minute {
		return fmt.Errorf("FINGRAPH_SESSION_TTL: %q is not a duration of at least 1m, such as 12h", c.sessionTTLRaw)
	}
	if c.SandboxTokenGrace, err = time.ParseDuration(c.sandboxTokenGraceRaw); err != nil || c.SandboxTokenGrace <= 0 {
		return fmt.Errorf("FINGRAPH_SANDBOX_TOKEN_GRACE: %q is not a positive duration, such as 10s", c.sandboxTokenGraceRaw)
	}
	if err := c.parseLimits(); err != nil {
		return err
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("FINGRAPH_TLS_CERT: set both FINGRAPH_TLS_CERT and FINGRAPH_TLS_KEY, or neither")
	}
	if c.MetricsAddr != "" {
		if err := checkAddr("FINGRAPH_METRICS_ADDR", c.MetricsAddr); err != nil {
			return err
		}
	}
	c.TrustedProxies = nil
	for _, p := range strings.Split(c.trustedProxiesRaw, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			addr, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return fmt.Errorf("FINGRAPH_TRUSTED_PROXIES: %q is not an address or a CIDR such as 10.0.0.0/8", p)
			}
			pfx = netip.PrefixFrom(addr, addr.BitLen())
		}
		c.TrustedProxies = append(c.TrustedProxies, pfx.Masked())
	}
	if c.ReadTimeout, err = time.ParseDuration(c.readTimeoutRaw); err != nil || c.ReadTimeout <= 0 {
		return fmt.Errorf("FINGRAPH_READ_TIMEOUT: %q is not a positive duration, such as 30s", c.readTimeoutRaw)
	}
	if c.OperationTimeout, err = time.ParseDuration(c.operationTimeoutRaw); err != nil || c.OperationTimeout <= 0 {
		return fmt.Errorf("FINGRAPH_OPERATION_TIMEOUT: %q is not a positive duration, such as 30s", c.operationTimeoutRaw)
	}
	if c.PublicRateLimit, err = strconv.Atoi(c.publicRateLimitRaw); err != nil || c.PublicRateLimit < 1 {
		return fmt.Errorf("FINGRAPH_PUBLIC_RATE_LIMIT: %q is not a positive number of requests per minute", c.publicRateLimitRaw)
	}
	if c.WebhookRateLimit, err = strconv.ParseFloat(c.webhookRateLimitRaw, 64); err != nil || !(c.WebhookRateLimit >= 1) || math.IsInf(c.WebhookRateLimit, 0) {
		return fmt.Errorf("FINGRAPH_WEBHOOK_RATE_LIMIT: %q is not a number of webhooks per second, 1 or more", c.webhookRateLimitRaw)
	}
	if c.EnricherWorkers, err = strconv.Atoi(c.enricherWorkersRaw); err != nil || c.EnricherWorkers < 1 || c.EnricherWorkers > 1024 {
		return fmt.Errorf("FINGRAPH_ENRICHER_WORKERS: %q is not a number of concurrent reads from 1 to 1024", c.enricherWorkersRaw)
	}
	if c.EnricherBusyWorkers, err = strconv.Atoi(c.enricherBusyWorkersRaw); err != nil || c.EnricherBusyWorkers < 1 || c.EnricherBusyWorkers > 1024 {
		return fmt.Errorf("FINGRAPH_ENRICHER_BUSY_WORKERS: %q is not a number of concurrent reads from 1 to 1024", c.enricherBusyWorkersRaw)
	}
	c.PaymentsOperators = nil
	for _, k := range strings.Split(c.paymentsOperatorsRaw, ",") {
		k = strings.ToUpper(strings.TrimSpace(k))
		if k == "" {
			continue
		}
		if !slices.Contains(operatorKinds, k) {
			return fmt.Errorf("FINGRAPH_PAYMENTS_OPERATORS: %q is not one of %s", k, strings.Join(operatorKinds, ", "))
		}
		c.PaymentsOperators = append(c.PaymentsOperators, k)
	}
	c.PaymentsCorporations = nil
	for _, id := range strings.Split(c.paymentsCorporationsRaw, ",") {
		if id = strings.TrimSpace(id); id != "" {
			c.PaymentsCorporations = append(c.PaymentsCorporations, id)
		}
	}
	if len(c.PaymentsCorporations) == 0 && (c.sandboxMode() || c.PaymentsPrivate == paymentsim.PrivateKey) {
		// The sandbox's merchant is its demo corporation, whose API client
		// (demo-api-key) the README's queries sign in as. The sandbox's
		// own merchant key names it too: a gateway before a standalone
		// sandbox (`fingraph sandbox`, the side-by-side recipe) operates
		// the same merchant. No real merchant's key is that test key.
		c.PaymentsCorporations = []string{bankingsim.DemoCorporationID}
	}
	if c.BankingVersion != "v2" && c.BankingVersion != "v3" {
		return fmt.Errorf("FINGRAPH_BANKING_VERSION: %q is not v2 or v3", c.BankingVersion)
	}
	return nil
}

func (c Config) validate() error {
	if err := c.checkUpperBounds(); err != nil {
		return err
	}
	if err := checkAddr("FINGRAPH_ADDR", c.Addr); err != nil {
		return err
	}
	if c.SandboxAddr != "" {
		if err := checkAddr("FINGRAPH_SANDBOX_ADDR", c.SandboxAddr); err != nil {
			return err
		}
	}
	if (c.PaymentsURL == "") != (c.BankingURL == "") {
		return errors.New("FINGRAPH_PAYMENTS_URL and FINGRAPH_BANKING_URL: set both, or neither to run the sandbox")
	}
	if !c.sandboxMode() {
		for _, u := range []struct{ name, v string }{{"FINGRAPH_PAYMENTS_URL", c.PaymentsURL}, {"FINGRAPH_BANKING_URL", c.BankingURL}} {
			if err := checkURL(u.name, u.v); err != nil {
				return err
			}
		}
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
	// A cluster is named by several URLs, comma-separated, as the NATS
	// client takes them: it connects to any and learns the rest.
	for _, one := range strings.Split(c.NATSURL, ",") {
		if c.NATSURL == "" {
			break
		}
		u, err := url.Parse(strings.TrimSpace(one))
		if err != nil || (u.Scheme != "nats" && u.Scheme != "tls" && u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
			return fmt.Errorf("FINGRAPH_NATS_URL: %q is not a NATS URL such as nats://host:4222 (or several, comma-separated)", redactURL(strings.TrimSpace(one)))
		}
	}
	if c.PublicURL != "" {
		if err := checkURL("FINGRAPH_PUBLIC_URL", c.PublicURL); err != nil {
			return err
		}
	}
	if c.RegisterWebhook && !c.sandboxMode() && !strings.HasPrefix(c.PublicURL, "https://") {
		return errors.New("FINGRAPH_PUBLIC_URL: an https:// URL is required with FINGRAPH_REGISTER_WEBHOOK (the upstream accepts HTTPS webhooks only)")
	}
	if c.OTLPEndpoint != "" {
		if err := checkURL("FINGRAPH_OTLP_ENDPOINT", c.OTLPEndpoint); err != nil {
			return err
		}
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("FINGRAPH_LOG_FORMAT: %q is not text or json", c.LogFormat)
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return fmt.Errorf("FINGRAPH_LOG_LEVEL: %q is not debug, info, warn or error", c.LogLevel)
	}
	for _, o := range c.AllowedOrigins {
		if u, err := url.Parse(o); err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" {
			return fmt.Errorf("FINGRAPH_ALLOWED_ORIGINS: %q is not an origin such as https://app.example", o)
		}
	}
	return nil
}

func checkAddr(name, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: %q is not host:port (e.g. :8080): %v", name, addr, err)
	}
	_ = host
	if port == "" {
		return fmt.Errorf("%s: %q has no port", name, addr)
	}
	return nil
}

func checkURL(name, v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s: %q is not an http(s) URL", name, v)
	}
	return nil
}

func (c Config) logger(w io.Writer) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.LogLevel))
	opts := &slog.HandlerOptions{Level: lvl}
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

// maxPollInterval bounds the polling intervals: a poll further apart than
// this announces changes too late to be live.
const maxPollInterval = time.Hour

// maxBodyBytes bounds the bodyBytes limit.
const maxBodyBytes = 16 << 20

// parseLimits applies FINGRAPH_LIMITS, "name=value" pairs, to the default
// limits; an unknown name or a value that is not a positive number is
// refused.
func (c *Config) parseLimits() error {
	c.Limits = gqlhttp.DefaultLimits
	fields := map[string]*int{
		"tokens": &c.Limits.MaxTokens, "fields": &c.Limits.MaxFields, "depth": &c.Limits.MaxDepth,
		"introspectionDepth": &c.Limits.MaxIntrospectionDepth, "aliases": &c.Limits.MaxAliases,
		"rootFields": &c.Limits.MaxRootFields, "sameName": &c.Limits.MaxSameName, "directives": &c.Limits.MaxDirectives,
		"complexity": &c.Limits.MaxComplexity, "socketsPerAddress": &c.Limits.MaxSocketsPerAddress,
		"anonymousPerAddress": &c.Limits.MaxAnonymousPerAddress,
		"socketsPerSession":   &c.Limits.MaxSocketsPerSession,
		"operationsPerSocket": &c.Limits.MaxOperationsPerSocket,
		"uploadsPerAddress":   &c.Limits.MaxUploadsPerAddress,
		"uploadsPerSession":   &c.Limits.MaxUploadsPerSession,
		"uploads":             &c.Limits.MaxUploads,
		"uploadsPerTenant":    &c.Limits.MaxUploadsPerTenant,
	}
	for _, pair := range strings.Split(c.limitsRaw, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		name, val, _ := strings.Cut(pair, "=")
		n, err := strconv.Atoi(strings.TrimSpace(val))
		name = strings.TrimSpace(name)
		if err != nil || n <= 0 {
			return fmt.Errorf("FINGRAPH_LIMITS: %q is not name=positive number", pair)
		}
		if err := checkLimitMax(name, n); err != nil {
			return err
		}
		switch name {
		case "bodyBytes":
			// A JSON body is read whole before it is parsed: its bound is
			// memory per request.
			if n > maxBodyBytes {
				return fmt.Errorf("FINGRAPH_LIMITS: bodyBytes=%d is more than %d (16 MiB)", n, maxBodyBytes)
			}
			c.Limits.MaxBodyBytes = int64(n)
			continue
		case "uploadSpoolBytes":
			c.Limits.MaxUploadSpoolBytes = int64(n)
			continue
		}
		dst, ok := fields[name]
		if !ok {
			return fmt.Errorf("FINGRAPH_LIMITS: %q is not a limit (tokens, fields, depth, introspectionDepth, aliases, rootFields, sameName, directives, complexity, bodyBytes, socketsPerAddress, anonymousPerAddress, socketsPerSession, operationsPerSocket, uploadsPerAddress, uploadsPerSession, uploadsPerTenant, uploads, uploadSpoolBytes)", name)
		}
		*dst = n
	}
	return nil
}
