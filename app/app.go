// Package app is the gateway's composition root: configuration, wiring of
// every part (upstream clients, sandbox, JetStream, sessions, events, the
// GraphQL handler), the route map, and graceful shutdown. Command fingraph
// (the root package) only calls Run; the end-to-end tests in e2e/ call Start.
package app

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fingraph/fingraph/bankpoll"
	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/gqlhttp"
	"github.com/fingraph/fingraph/idempotency"
	"github.com/fingraph/fingraph/paymentsfeed"
	"github.com/fingraph/fingraph/ratelimit"
	"github.com/fingraph/fingraph/redact"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
	"github.com/fingraph/fingraph/upstream/roundtrip"
	"github.com/nats-io/nats.go/jetstream"
)

// Run starts the gateway and serves until ctx is done, then shuts down
// gracefully. args are the command line, the program's name first; the
// sub-commands (sandbox, trigger) are dispatched before Run, by the command.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := ParseConfig(args[1:], getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	logger := cfg.Logger(stdout)
	tuneRuntime(getenv, logger, cfg.PprofAddr != "")
	a, err := Start(ctx, cfg, logger)
	if err != nil {
		return err
	}
	<-ctx.Done()
	a.Drain()
	return a.Shutdown()
}

// Drain turns readiness off and keeps serving for FINGRAPH_SHUTDOWN_DRAIN,
// so that a load balancer stops sending new requests here before Shutdown
// stops accepting them.
func (a *App) Drain() {
	if a.cfg.ShutdownDrain <= 0 {
		return
	}
	a.draining.Store(true)
	a.logger.Info("draining: /readyz answers 503 while requests are still served", "for", a.cfg.ShutdownDrain)
	time.Sleep(a.cfg.ShutdownDrain)
}

// App is a running gateway and everything it started.
type App struct {
	// cfg are the settings as validated, never changed; rt is what start-up
	// derived from them.
	cfg    Config
	rt     resolved
	logger *slog.Logger
	server *http.Server
	addr   string
	engine *engine.Engine
	// sandbox is the in-process sandbox of sandbox mode, or nil.
	sandbox *SandboxServer
	pprof   *http.Server
	served  chan error
	// metricsSrv serves /metrics on FINGRAPH_METRICS_ADDR, when set.
	metricsSrv  *http.Server
	metricsAddr string

	enricher   *paymentsfeed.Enricher
	bus        *events.Bus
	webhooks   *paymentsfeed.Queue
	reconciler *paymentsfeed.Reconciler
	// bankPoll polls the banking changes of corporations with live
	// subscribers.
	bankPoll *bankpoll.Poller
	tracing  *tracing
	// workers run the upstream reads operations start ahead of their
	// resolvers (loaders.Workers).
	workers *loaders.Workers
	// stop ends the contexts of background work and of open subscriptions:
	// http.Server.Shutdown does not wait for hijacked websocket connections.
	stop context.CancelFunc
	bg   sync.WaitGroup
	// dirLock holds the data directory of the embedded JetStream.
	dirLock *dataDirLock
	// draining is set when the gateway is about to stop (Drain).
	draining *atomic.Bool
	// closedSockets is closed once every websocket has been sent its 1012
	// and every SSE stream ended, on shutdown.
	closedSockets chan struct{}
}

// specOnlyNotice is logged once when the gateway runs against upstreams that
// serve only what the specs show (the strict sandbox).
const specOnlyNotice = "strict sandbox: features that need the sandbox's additions are off or degraded: " +
	"event polling is off (no GET /v1/events; webhooks only); the individuals listing is unavailable (no GET /v3/individuals); " +
	"signed orders are confirmed against the order listing instead of their signature (no JWKS); banking listings read one page of 100 and " +
	"offset paging is refused (no meta[offset]); a conversion whose answer was lost stays OUTCOME_UNKNOWN for its key " +
	"(no transaction listing to look it up in), and Wallet.transactions answers UPSTREAM_UNAVAILABLE (NOT_OFFERED)"

// Start validates cfg, refusing it before anything starts when it does not
// pass (Validate), then wires and starts the gateway; it returns once the
// listener accepts. Its phases run in the order each needs the one before:
// the data directory and the upstreams' addresses (resolve), then
// JetStream, then the upstream clients, then the event pipeline and the
// sessions, and the listener last, so that nothing is served before what
// answers it is ready. A failure in any phase shuts down what the earlier
// ones started.
func Start(ctx context.Context, cfg Config, logger *slog.Logger) (*App, error) {
	return start(ctx, cfg, logger, nil)
}

// start is Start with wrapUpstream, set by benchmarks only, wrapping each
// upstream client's transport (name is "payments" or "banking").
func start(ctx context.Context, cfg Config, logger *slog.Logger, wrapUpstream func(name string, rt http.RoundTripper) http.RoundTripper) (_ *App, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// Every part logs through redaction (package redact), whatever it logs.
	logger = slog.New(redact.NewHandler(logger.Handler()))
	for _, old := range cfg.oldNames {
		logger.Warn("settings: " + old)
	}
	a := &App{cfg: cfg, logger: logger, served: make(chan error, 1), draining: new(atomic.Bool)}
	defer func() {
		if err != nil {
			_ = a.Shutdown()
		}
	}()

	if err := a.resolve(ctx, cfg); err != nil {
		return nil, err
	}
	attemptsKV, cursorKV, err := a.openEngine(ctx, cfg)
	if err != nil {
		return nil, err
	}
	m := newMetrics()
	pay, bank, err := a.openUpstreams(ctx, cfg, m, wrapUpstream)
	if err != nil {
		return nil, err
	}
	sessionsKV, err := a.engine.KeyValue(ctx, session.Bucket, cfg.SessionTTL)
	if err != nil {
		return nil, err
	}
	// Limits that protect accounts are shared by every replica on the
	// stream: N replicas allow what one does.
	limitsKV, err := a.engine.KeyValue(ctx, ratelimit.Bucket, ratelimit.BucketTTL)
	if err != nil {
		return nil, err
	}

	bgCtx, stop := context.WithCancel(context.Background())
	a.stop = stop
	unknown, err := a.startEvents(ctx, bgCtx, cfg, pay, cursorKV, m)
	if err != nil {
		return nil, err
	}
	sessions, sockets, err := startSessions(bgCtx, sessionsKV, cfg, logger)
	if err != nil {
		return nil, err
	}
	authorityKV, err := a.engine.KeyValue(ctx, session.AuthorityBucket, session.AuthorityTTL(cfg.SessionTTL))
	if err != nil {
		return nil, err
	}
	// Every replica follows the ends of authority before it serves: a
	// session is judged against every end made so far.
	authority := session.NewAuthority(authorityKV)
	if err := authority.Run(bgCtx); err != nil {
		return nil, err
	}
	if err := a.openBankPoll(ctx, cfg, bank, m); err != nil {
		return nil, err
	}
	handler, gql, err := a.buildHandler(routeDeps{
		unknown:    unknown,
		cfg:        cfg,
		logger:     logger,
		metrics:    m,
		tracing:    a.tracing,
		engine:     a.engine,
		payments:   pay,
		banking:    bank,
		sessions:   sessions,
		limits:     limitsKV,
		sockets:    sockets,
		authority:  authority,
		bgCtx:      bgCtx,
		attempts:   idempotency.New(attemptsKV, idempotency.WithLogger(logger)),
		bus:        a.bus,
		webhooks:   a.webhooks,
		bankPoll:   a.bankPoll,
		enricher:   a.enricher,
		reconciler: a.reconciler,
		sandbox:    a.sandboxHandler(),
		sandboxURL: a.rt.sandboxURL(),
		spoolDir:   a.rt.uploadSpool,
		draining:   a.draining,
	})
	if err != nil {
		return nil, err
	}
	scheme, err := a.serve(bgCtx, cfg, handler, gql, m)
	if err != nil {
		return nil, err
	}

	a.startWebhookRegistration(bgCtx, pay, scheme)
	return a, nil
}

// openEngine opens JetStream (embedded in dataDir, or the cluster at
// FINGRAPH_NATS_URL) and what the gateway keeps in it before any client
// exists: the idempotency bucket, the event streams (a.bus, a.webhooks)
// and the event cursor. It returns the two buckets for the phases that use
// them.
func (a *App) openEngine(ctx context.Context, cfg Config) (attemptsKV, cursorKV jetstream.KeyValue, err error) {
	logger := a.logger
	a.engine, err = engine.Open(ctx, engine.Config{URL: cfg.NATSURL, DataDir: a.rt.storeDir, Replicas: cfg.NATSReplicas, Logger: logger.With("component", "nats")})
	if err != nil {
		if cfg.NATSURL != "" {
			return nil, nil, fmt.Errorf("FINGRAPH_NATS_URL: cannot use NATS JetStream at %s: %w", redactURL(cfg.NATSURL), err)
		}
		return nil, nil, err
	}
	if a.engine.Embedded() {
		if a.sandbox != nil {
			logger.Info("embedded JetStream started; in sandbox mode its store starts empty with each run, as the sandbox's data does", "data_dir", a.rt.storeDir)
		} else {
			logger.Info("embedded JetStream started", "data_dir", a.rt.storeDir)
		}
	} else {
		logger.Info("connected to NATS JetStream", "url", redactURL(cfg.NATSURL), "replicas", cfg.NATSReplicas)
	}
	attemptsKV, err = a.engine.KeyValue(ctx, idempotency.Bucket, idempotency.TTL)
	if err != nil {
		return nil, nil, err
	}

	var bus *events.Bus
	var webhooks *paymentsfeed.Queue
	if err := a.engine.Create(ctx, "event streams", func(ctx context.Context) error {
		if bus, err = events.NewBus(ctx, a.engine.JetStream(), events.WithReplicas(a.engine.Replicas())); err != nil {
			return err
		}
		webhooks, err = paymentsfeed.NewQueue(ctx, a.engine.JetStream(), paymentsfeed.WithReplicas(a.engine.Replicas()))
		return err
	}, paymentsfeed.WebhooksStream, events.EventsStream); err != nil {
		return nil, nil, a.engine.Placement(err)
	}
	a.bus, a.webhooks = bus, webhooks
	cursorKV, err = a.engine.KeyValue(ctx, "events_cursor", 0)
	if err != nil {
		return nil, nil, err
	}
	return attemptsKV, cursorKV, nil
}

// openUpstreams makes the payments and banking clients, at the resolved
// addresses with the resolved keys, traced (a.tracing) and measured (m)
// over each one's own tuned transport. Against the strict sandbox it turns
// off, once and with one warning, what the specs do not serve
// (the clients' SpecOnly; resolve has turned event polling off).
func (a *App) openUpstreams(ctx context.Context, cfg Config, m *metrics, wrapUpstream func(string, http.RoundTripper) http.RoundTripper) (*payments.Client, *banking.Client, error) {
	logger := a.logger
	var err error
	if a.tracing, err = newTracing(ctx, cfg); err != nil {
		return nil, nil, err
	}
	// Upstream calls are traced and measured over each client's own tuned
	// transport.
	upstream := func(name string, rt http.RoundTripper) http.RoundTripper {
		if wrapUpstream != nil {
			rt = wrapUpstream(name, rt)
		}
		return a.tracing.transport(m.instrument(name, rt))
	}
	payOpts := []roundtrip.Option{roundtrip.WithTimeout(cfg.PaymentsTimeout), roundtrip.WithShareWindow(cfg.ShareWindow),
		roundtrip.WithLogger(logger.With("upstream", "payments")), roundtrip.WithTransport(upstream("payments", roundtrip.NewTransport()))}
	if cfg.NoSharing {
		payOpts = append(payOpts, roundtrip.WithoutSharing())
	}
	pay, err := payments.NewClient(a.rt.paymentsURL, a.rt.paymentsKeys, payOpts...)
	if err != nil {
		return nil, nil, fmt.Errorf("FINGRAPH_PAYMENTS_URL: %w", err)
	}
	m.watchSharedReads("payments", pay.SharedAnswers)

	bank, err := banking.NewClient(a.rt.bankingURL, banking.WithVersion(cfg.BankingVersion), roundtrip.WithTransport(upstream("banking", roundtrip.NewTransport())),
		roundtrip.WithTimeout(cfg.BankingTimeout), roundtrip.WithLogger(logger.With("upstream", "banking")))
	if err != nil {
		return nil, nil, fmt.Errorf("FINGRAPH_BANKING_URL: %w", err)
	}
	if cfg.SandboxStrict {
		// The strict sandbox serves only what the specs show; say once what
		// that turns off rather than failing call by call.
		pay.SpecOnly, bank.SpecOnly = true, true
		logger.Warn(specOnlyNotice)
	}
	return pay, bank, nil
}

// startEvents starts the event pipeline before the gateway serves: the
// enricher, and the reconciler's first round, which marks where the
// event listing ends so that no event a client triggers right after start
// falls before it. The reconciler then runs on bgCtx. It returns the set of
// ids the upstream did not know, which the webhook intake shares.
func (a *App) startEvents(ctx, bgCtx context.Context, cfg Config, pay *payments.Client, cursorKV jetstream.KeyValue, m *metrics) (*paymentsfeed.Unknown, error) {
	logger, bus := a.logger, a.bus
	// Ids the upstream did not know, shared by the intake and the enricher.
	unknown := paymentsfeed.NewUnknown(10000)
	a.enricher = &paymentsfeed.Enricher{Queue: a.webhooks, Bus: bus, Unknown: unknown, Logger: logger.With("component", "events"),
		Events: pay.Events, PendingActions: pay.PendingActions, Breaker: pay,
		Workers: cfg.EnricherWorkers, BusyWorkers: cfg.EnricherBusyWorkers, Lag: func(d time.Duration) { m.enrichmentLag.Observe(d.Seconds()) }}
	if err := a.enricher.Start(ctx); err != nil {
		return nil, err
	}
	if a.rt.reconcileInterval > 0 {
		a.reconciler = &paymentsfeed.Reconciler{Bus: bus, Events: pay.Events, PendingActions: pay.PendingActions, Cursor: cursorKV,
			Interval: a.rt.reconcileInterval, Logger: logger.With("component", "events")}
		// The first round only records where the listing ends: run it
		// before the gateway serves, or an event that a client triggers
		// right after start could fall before that mark and never be
		// reconciled.
		if err := a.reconciler.Poll(ctx); err != nil {
			logger.Warn("event reconciliation could not mark its start; retrying in the background", "err", err)
		}
		a.bg.Add(1)
		go func() { defer a.bg.Done(); a.reconciler.Run(bgCtx) }()
	}
	return unknown, nil
}

// openBankPoll opens the poller of banking changes (its lease and snapshot
// buckets) before any subscription can ask for it; it polls nothing until
// one does.
func (a *App) openBankPoll(ctx context.Context, cfg Config, bank *banking.Client, m *metrics) error {
	leases, err := a.engine.KeyValue(ctx, bankpoll.LeaseBucket, 0)
	if err != nil {
		return err
	}
	snapshots, err := a.engine.KeyValue(ctx, bankpoll.SnapshotBucket, 0)
	if err != nil {
		return err
	}
	a.bankPoll = &bankpoll.Poller{Banking: bankpoll.UpstreamOf(bank), Bus: a.bus, Leases: leases, Snapshots: snapshots,
		Interval: cfg.BankPollInterval, Logger: a.logger.With("component", "bankpoll")}
	m.watchBankPoll(a.bankPoll.Stats())
	m.watchEventReads(a.bus)
	return nil
}

// startSessions starts the session store and the websocket registry, both
// watching the sessions bucket on bgCtx, before any request can carry a
// session.
func startSessions(bgCtx context.Context, sessionsKV jetstream.KeyValue, cfg Config, logger *slog.Logger) (*session.JetStreamStore, *session.Sockets, error) {
	sessions := session.NewJetStreamStore(sessionsKV, cfg.SessionTTL)
	// One watch on the bucket per replica keeps the session cache current
	// (requests read their session from memory) and reports sessions
	// ending anywhere, to close their websocket connections here.
	if err := sessions.Run(bgCtx); err != nil {
		return nil, nil, fmt.Errorf("watching sessions: %w", err)
	}
	sockets := session.NewSockets(logger.With("component", "sessions"))
	if err := sockets.Run(bgCtx, sessions); err != nil {
		return nil, nil, fmt.Errorf("watching sessions: %w", err)
	}
	return sessions, sockets, nil
}

// buildHandler completes d with the trusted documents (when configured)
// and the loaders' workers (a.workers), and builds the route map over
// everything the earlier phases started.
func (a *App) buildHandler(d routeDeps) (http.Handler, *gqlhttp.Handler, error) {
	cfg, logger := d.cfg, a.logger
	var err error
	var trusted *gqlhttp.TrustedDocuments
	if cfg.TrustedDocuments != "" {
		if trusted, err = gqlhttp.LoadTrustedDocuments(cfg.TrustedDocuments); err != nil {
			return nil, nil, fmt.Errorf("FINGRAPH_TRUSTED_DOCUMENTS: %w", err)
		}
		logger.Info("trusted documents: only registered operations run", "documents", trusted.Len())
	}
	if a.workers, err = loaders.NewWorkers(logger.With("component", "loaders")); err != nil {
		return nil, nil, err
	}
	d.workers, d.trusted = a.workers, trusted
	handler, gql := newRouter(d)
	return handler, gql, nil
}

// serve comes last: it loads the TLS certificate, starts the /metrics
// listener and the pprof one when configured, and serves handler on
// FINGRAPH_ADDR, logging where. It returns the scheme served ("http" or
// "https") for the webhook registration.
func (a *App) serve(bgCtx context.Context, cfg Config, handler http.Handler, gql *gqlhttp.Handler, m *metrics) (string, error) {
	logger := a.logger
	var tlsConfig *tls.Config
	if cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return "", fmt.Errorf("FINGRAPH_TLS_CERT: cannot load the certificate and key: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if cfg.MetricsAddr != "" {
		mln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			return "", fmt.Errorf("FINGRAPH_METRICS_ADDR: cannot listen on %s: %w", cfg.MetricsAddr, err)
		}
		a.metricsAddr = mln.Addr().String()
		a.metricsSrv = &http.Server{Handler: m.handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = a.metricsSrv.Serve(mln) }()
		logger.Info("metrics listening", "url", "http://"+withHost(a.metricsAddr, "localhost")+"/metrics")
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return "", fmt.Errorf("FINGRAPH_ADDR: cannot listen on %s: %w", cfg.Addr, err)
	}
	a.addr = ln.Addr().String()
	a.server = &http.Server{
		TLSConfig: tlsConfig,
		Handler:   handler,
		// Headers within 10 s. The whole request's deadline is set per
		// request by the GraphQL handler (gqlhttp.Limits.ReadTimeout), so
		// that it can be lifted once a long-lived stream (SSE) has read its
		// body; gorilla lifts it on websocket upgrades.
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return bgCtx },
	}
	// Shutdown stops accepting first; then websockets are closed with 1012
	// and SSE streams end, so clients reconnect to another replica instead
	// of holding this one up.
	// The hook runs on a goroutine of its own: Shutdown waits for it before
	// it cancels the subscriptions' context, or a socket could be closed
	// under load before its 1012 was written.
	a.closedSockets = make(chan struct{})
	a.server.RegisterOnShutdown(func() { gql.Shutdown(); close(a.closedSockets) })
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
		go func() { a.served <- a.server.ServeTLS(ln, "", "") }()
	} else {
		go func() { a.served <- a.server.Serve(ln) }()
	}
	if err := a.startPprof(); err != nil {
		return "", err
	}
	base := scheme + "://" + withHost(a.addr, "localhost")
	logger.Info("gateway listening", "graphql", base+"/graphql", "playground", base+"/", "dashboard", base+"/dashboard")
	return scheme, nil
}

// startWebhookRegistration makes this gateway the company's webhook
// receiver: in sandbox mode at its own loopback address (the sandbox accepts
// loopback http, as `stripe listen` forwards to localhost), otherwise at
// FINGRAPH_PUBLIC_URL when FINGRAPH_REGISTER_WEBHOOK asks for it. A failure
// never stops the gateway: it says so once, the event poller covers (where
// the upstream has an event listing), and registration is retried in the
// background with back-off until it succeeds or the gateway stops.
func (a *App) startWebhookRegistration(ctx context.Context, pay *payments.Client, scheme string) {
	if !a.cfg.RegisterWebhook {
		return
	}
	target := strings.TrimSuffix(a.cfg.PublicURL, "/") + "/webhooks/payments"
	if a.sandbox != nil {
		target = scheme + "://" + withHost(a.addr, "127.0.0.1") + "/webhooks/payments"
	}
	try := func() error {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return a.registerWebhook(rctx, pay, target)
	}
	err := try()
	if err == nil {
		return
	}
	covered := "live payments events arrive only when the event poller finds them"
	if a.reconciler == nil {
		covered = "live payments events do not arrive until it is registered (event polling is off)"
	}
	a.logger.Warn("the webhook could not be registered; "+covered+"; retrying in the background", "url", target, "err", err)
	a.bg.Add(1)
	go func() {
		defer a.bg.Done()
		delay := time.Second
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
			err := try()
			if err == nil {
				return
			}
			a.logger.Debug("webhook registration failed again", "url", target, "err", err)
			delay = min(2*delay, time.Minute)
		}
	}()
}

// registerWebhook registers target once; another receiver already
// registered for the company is kept and reported, not taken over.
func (a *App) registerWebhook(ctx context.Context, pay *payments.Client, target string) error {
	w, err := pay.Webhooks.Create(ctx, target)
	if payments.IsConflict(err) {
		// One webhook per company: keep it when it is ours, never take over
		// another receiver's.
		list, lerr := pay.Webhooks.List(ctx)
		if lerr == nil && len(list) == 1 && list[0].URL == target {
			a.logger.Info("webhook already registered", "url", target)
			return nil
		}
		a.logger.Warn("another webhook URL is registered for the company; live events arrive only through polling", "url", target)
		return nil
	}
	if err != nil {
		return err
	}
	a.logger.Info("webhook registered", "url", w.URL, "id", w.ID)
	return nil
}

// withHost names a listening address by host when it listens on every
// interface (":8080", "[::]:8080"): "localhost" for people reading logs,
// "127.0.0.1" for the in-process sandbox's webhook, which takes plain http
// from loopback only. A specific host is kept.
func withHost(addr, host string) string {
	h, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(h); h != "" && (ip == nil || !ip.IsUnspecified()) {
		host = h
	}
	return net.JoinHostPort(host, port)
}

// Shutdown stops accepting requests, lets running ones finish, then stops
// the sandbox and the engine. It is safe on a partly started app.
func (a *App) Shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.ShutdownTimeout)
	defer cancel()
	var errs []error
	if a.server != nil {
		a.logger.Info("shutting down")
		errs = append(errs, a.server.Shutdown(ctx))
		if err := <-a.served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
		select {
		case <-a.closedSockets:
		case <-ctx.Done():
		}
	}
	if a.metricsSrv != nil {
		errs = append(errs, a.metricsSrv.Shutdown(ctx))
	}
	if a.pprof != nil {
		errs = append(errs, a.pprof.Shutdown(ctx))
	}
	if a.stop != nil {
		a.stop()
	}
	a.bg.Wait()
	if a.workers != nil {
		// The server has stopped: no operation starts a read any more.
		errs = append(errs, a.workers.Close(ctx))
	}
	if a.bankPoll != nil {
		// After the server: no subscription registers demand any more.
		a.bankPoll.Close()
	}
	if a.bus != nil {
		a.bus.Close()
	}
	if a.enricher != nil {
		a.enricher.Stop()
	}
	if a.sandbox != nil {
		errs = append(errs, a.sandbox.Shutdown(ctx))
	}
	if a.engine != nil {
		a.engine.Close()
	}
	if a.rt.uploadSpool != "" {
		// Requests have ended, and with them their files.
		errs = append(errs, os.RemoveAll(a.rt.uploadSpool))
	}
	errs = append(errs, a.dirLock.Unlock())
	if a.tracing != nil {
		errs = append(errs, a.tracing.shutdown(ctx))
	}
	return errors.Join(errs...)
}

// Addr is the gateway's listening address, such as 127.0.0.1:8080.
func (a *App) Addr() string { return a.addr }

// MetricsAddr is the address of the separate /metrics listener, or "".
func (a *App) MetricsAddr() string { return a.metricsAddr }

// sandboxHandler is the in-process sandbox as a handler, or nil (not a
// typed nil) with real upstreams.
func (a *App) sandboxHandler() http.Handler {
	if a.sandbox == nil {
		return nil
	}
	return a.sandbox.sb
}

// SandboxAddr is the in-process sandbox's listening address, or "" when the
// gateway talks to real upstreams.
func (a *App) SandboxAddr() string { return a.rt.sandboxAddr }

// CloseEngine stops the JetStream engine under a running gateway, so that a
// test can watch readiness and the webhook intake follow its loss.
func (a *App) CloseEngine() { a.engine.Close() }
