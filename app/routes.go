package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/cors"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fingraph/fingraph/bankpoll"
	"github.com/fingraph/fingraph/downloads"
	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/gqlhttp"
	"github.com/fingraph/fingraph/graph"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/idempotency"
	"github.com/fingraph/fingraph/livequery"
	"github.com/fingraph/fingraph/paymentsfeed"
	"github.com/fingraph/fingraph/ratelimit"
	"github.com/fingraph/fingraph/resolvers"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
	"github.com/fingraph/fingraph/web"
)

// routeDeps is what the routes need.
type routeDeps struct {
	cfg      Config
	logger   *slog.Logger
	engine   *engine.Engine
	payments *payments.Client
	banking  *banking.Client
	sessions session.Store
	// limits is the JetStream bucket of the shared rate limits.
	limits  jetstream.KeyValue
	sockets *session.Sockets
	// authority keeps the ends of authority (session.Authority); bgCtx
	// is the replica's lifetime, for following them.
	authority *session.Authority
	bgCtx     context.Context
	trusted   *gqlhttp.TrustedDocuments
	unknown   *paymentsfeed.Unknown
	attempts  *idempotency.Store
	// sandbox is the in-process sandbox, nil with real upstreams.
	sandbox http.Handler
	// sandboxURL is the in-process sandbox's address, "" with real
	// upstreams.
	sandboxURL string
	// spoolDir is the directory this process spools uploads to.
	spoolDir string
	// draining is set while the gateway drains before it stops.
	draining *atomic.Bool

	metrics    *metrics
	tracing    *tracing
	bus        *events.Bus
	webhooks   *paymentsfeed.Queue
	bankPoll   *bankpoll.Poller
	enricher   *paymentsfeed.Enricher
	reconciler *paymentsfeed.Reconciler
	workers    *loaders.Workers
}

// uploadCaps keeps the per-address and per-session caps on uploads in
// flight in the shared limits bucket: a bucket that never refills, whose
// tokens are only claimed while an upload runs, is a cap on uploads at
// once across every replica.
func uploadCaps(kv jetstream.KeyValue) func(int, int) (ratelimit.Limiter, ratelimit.Limiter) {
	if kv == nil {
		return nil
	}
	return func(perAddress, perSession int) (ratelimit.Limiter, ratelimit.Limiter) {
		var byAddress, bySession ratelimit.Limiter
		if perAddress > 0 {
			byAddress = ratelimit.NewShared(kv, "uploads-address", 0, perAddress)
		}
		if perSession > 0 {
			bySession = ratelimit.NewShared(kv, "uploads-session", 0, perSession)
		}
		return byAddress, bySession
	}
}

// newRouter maps every route of the gateway, in one place. It also returns
// the GraphQL handler, whose long-lived connections shutdown ends.
func newRouter(d routeDeps) (http.Handler, *gqlhttp.Handler) {
	sessions := session.NewHandler(d.sessions, d.logger)
	sessions.Sockets = d.sockets
	d.sockets.MaxPerSession = d.cfg.Limits.MaxSocketsPerSession
	sessions.TrustedProxies = d.cfg.TrustedProxies
	if d.authority != nil {
		sessions.Authority, sessions.Prove = d.authority, proveToBanking(d.banking)
		sessions.FollowAuthority(d.bgCtx)
	}
	if d.cfg.SandboxAnonymous {
		sessions.Anonymous = &session.Anonymous{Store: d.sessions, SignIn: demoAPIClient(d.banking)}
	}
	policy := resolvers.NewPolicy(d.cfg.PaymentsOperators, d.cfg.PaymentsCorporations, d.cfg.PublicRateLimit)
	if d.limits != nil {
		policy.ShareLimits(d.limits)
	}
	reportLinks := downloads.NewSigner([]byte(d.cfg.DownloadKey), downloads.DefaultTTL)
	res := &resolvers.Resolver{
		Payments:  resolverPayments(d.payments),
		Banking:   resolverBanking(d.banking),
		Policy:    policy,
		Attempts:  d.attempts,
		Authority: d.authority,
		Events:    d.bus,
		BankPoll:  d.bankPoll,
		Logger:    d.logger,
		Downloads: reportLinks,
		// Zero is resolvers.DefaultOutcomeSettle.
		OutcomeSettle: d.cfg.OutcomeSettle,
	}
	readPayments, readBanking := loaderSources(d.payments, d.banking)
	es := graph.NewExecutableSchema(graph.Config{
		Resolvers:  res,
		Directives: policy.Directives(),
		Complexity: resolvers.Complexity(),
	})
	limits := d.cfg.Limits
	limits.ReadTimeout, limits.OperationTimeout = d.cfg.ReadTimeout, d.cfg.OperationTimeout
	liveQueries := livequery.New(livequery.Config{Changes: resolvers.LiveChanges{Resolver: res}})
	d.metrics.watchLiveQueries(liveQueries)
	gql := gqlhttp.NewHandler(es, gqlhttp.HandlerConfig{
		Logger:          d.logger,
		Limits:          limits,
		Introspection:   d.cfg.Introspection,
		Trusted:         d.trusted,
		CheckOrigin:     originChecker(d.cfg.AllowedOrigins, sessions.ForwardedProto),
		WebsocketInit:   websocketInit(sessions),
		RecheckSession:  sessions.Recheck,
		TrackStream:     trackStream(sessions),
		ClientAddr:      func(r *http.Request) string { return session.ClientAddr(r.Context()) },
		SignedIn:        session.SignedIn,
		Tracer:          d.tracing.tracer(),
		UploadDir:       d.spoolDir,
		AuthorizeUpload: policy.AllowsOperation,
		SessionID:       session.IDOf,
		ShareQueries:    d.cfg.ShareQueries && !d.cfg.NoSharing,
		ShareWindow:     d.cfg.ShareWindow,
		UploadTenant: func(r *http.Request) string {
			if s := session.From(r.Context()); s != nil {
				return s.CorporationID
			}
			return ""
		},
		UploadCaps: uploadCaps(d.limits),
		Scalars: map[string]func(context.Context, any) error{
			"Int":        func(ctx context.Context, v any) error { _, err := model.UnmarshalInt(ctx, v); return err },
			"MinorUnits": func(ctx context.Context, v any) error { _, err := model.UnmarshalMinorUnits(ctx, v); return err },
		},
		Live: liveQueries,
		LiveSession: func(ctx context.Context) string {
			if s := session.From(ctx); s != nil {
				return s.ID
			}
			return ""
		},
		// Live queries and queries share runs within one session's view: the same
		// credential, principal and corporation.
		ViewScope: func(ctx context.Context) string {
			if s := session.From(ctx); s != nil {
				return strings.Join([]string{s.ID, string(s.Kind), s.PrincipalID, s.PersonID, s.CorporationID}, "\x00")
			}
			return ""
		},
		Extensions: []graphql.HandlerExtension{loaders.PerOperation{Payments: readPayments, Banking: readBanking,
			Options: []loaders.Option{loaders.WithWait(d.cfg.LoaderWait), loaders.WithWorkers(d.workers)}}},
	})

	d.metrics.watchSharedQueries(gql.SharedQueries)

	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	r.Use(gqlhttp.CloseAfterChunked)
	r.Use(accessLog(d.logger, d.metrics.requests))
	// Web frontends on their own origins (a dev server, the app's domain)
	// call /graphql with the session cookie: CORS with credentials, for
	// the allowlisted origins only, and the headers the gateway reads.
	// With no allowlist there is no CORS at all: the gateway's own origin
	// (the playground) needs none, and go-chi/cors reads an empty list as
	// "every origin".
	if len(d.cfg.AllowedOrigins) > 0 {
		r.Use(cors.Handler(cors.Options{
			AllowedOrigins:   d.cfg.AllowedOrigins,
			AllowedMethods:   []string{http.MethodGet, http.MethodPost, http.MethodOptions},
			AllowedHeaders:   []string{"Content-Type", "Authorization", session.CSRFHeader, "Traceparent", "Tracestate"},
			AllowCredentials: true,
			MaxAge:           600,
		}))
	}

	// The read cache is made per operation inside gql (loaders.PerOperation),
	// under the session: it holds one principal's view.
	// Tracing wraps everything, so upstream spans join the request's trace.
	r.Handle("/graphql", d.tracing.handler("/graphql",
		gqlhttp.LimitBody(limits.MaxBodyBytes, gqlhttp.NoStore(sessions.Middleware(gql)))))
	// The schema file follows introspection, which trusted documents rule
	// out whatever the setting: only the manifest's operations run.
	pages := web.Handler(es, web.Options{PublishSchema: d.cfg.Introspection && d.trusted == nil, SandboxURL: d.sandboxURL})
	for _, p := range web.Paths {
		r.Get(p, pages.ServeHTTP)
	}
	if d.sandbox != nil {
		r.Post("/sandbox/trigger", gqlhttp.LimitBody(4<<10, sessions.Middleware(http.HandlerFunc(sandboxTrigger(d.sandbox)))).ServeHTTP)
		r.Post("/sandbox/credit", gqlhttp.LimitBody(4<<10, sessions.Middleware(sandboxCredit(d.sandbox, d.banking))).ServeHTTP)
	}
	// Behind the session middleware: a link downloads only for the session
	// that requested it.
	r.Get(downloads.RoutePattern, sessions.Middleware(downloads.Handler(reportLinks, d.banking, session.IDOf,
		d.logger.With("component", "downloads"))).ServeHTTP)
	r.Post("/webhooks/payments", (&paymentsfeed.Intake{Queue: d.webhooks, Unknown: d.unknown, Logger: d.logger.With("component", "webhooks"),
		PerSecond: d.cfg.WebhookRateLimit, Burst: int(2 * d.cfg.WebhookRateLimit), ClientAddr: sessions.ClientAddress}).ServeHTTP)
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Get("/readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		// The answer names states only: error texts can carry internal
		// host names and addresses, which go to the log instead.
		checks := map[string]string{"jetstream": "ok"}
		status := http.StatusOK
		if d.draining != nil && d.draining.Load() {
			checks["shutdown"] = "draining"
			status = http.StatusServiceUnavailable
		}
		if err := d.engine.Ready(ctx); err != nil {
			d.logger.WarnContext(ctx, "not ready: JetStream", "err", err)
			checks["jetstream"] = "unavailable"
			status = http.StatusServiceUnavailable
		}
		// The upstreams, event enrichment and polling are reported, but a
		// replica that can serve stays ready: every replica shares the same
		// upstreams, and taking them all out of rotation helps nobody.
		checks["payments_upstream"] = breakerHealth(d.payments.BreakerState())
		checks["banking_upstream"] = breakerHealth(d.banking.BreakerState())
		checks["event_enricher"] = healthString(d.enricher.Health())
		if d.reconciler != nil {
			checks["event_reconciler"] = healthString(d.reconciler.Health())
		}
		writeJSON(w, status, map[string]any{"ready": status == http.StatusOK, "checks": checks})
	})
	if d.cfg.MetricsAddr == "" {
		r.Handle("/metrics", loopbackOnly(d.metrics.handler()))
	}
	return r, gql
}

func healthString(err error) string {
	if err != nil {
		return "failing"
	}
	return "ok"
}

// breakerHealth names an upstream's state from its circuit breaker.
func breakerHealth(state string) string {
	switch state {
	case "closed":
		return "ok"
	case "half-open":
		return "recovering"
	}
	return "unavailable"
}

// demoAPIClient signs the sandbox's demo API client in, for the anonymous
// session of sandbox mode.
func demoAPIClient(bank *banking.Client) func(context.Context) (*session.Session, error) {
	return func(ctx context.Context) (*session.Session, error) {
		tokens := banking.NewTokenStore("")
		ctx = banking.WithTokenSource(ctx, tokens)
		if _, err := bank.Auth.SignInAPIKey(ctx, banking.Secret(bankingsim.DemoAPIKey)); err != nil {
			return nil, err
		}
		corp, err := bank.Corporations.Current(ctx)
		if err != nil {
			return nil, err
		}
		tok, _ := tokens.Token(ctx)
		return &session.Session{Kind: session.APIClient, CorporationID: corp.ID,
			BankingToken: session.Secret(tok), BankingTokenAt: time.Now().UTC()}, nil
	}
}

// proveToBanking proves a session to the banking upstream with one read
// under its own token (the session's write-back keeps the refreshed one,
// and ends the session when the upstream refuses it).
func proveToBanking(bank *banking.Client) session.Prover {
	return func(ctx context.Context, s *session.Session) error {
		if s.Kind == session.Person {
			_, err := bank.Persons.Me(ctx)
			return err
		}
		_, err := bank.Corporations.Current(ctx)
		return err
	}
}

// websocketInit authenticates connection_init through the session layer.
// An unknown or ended session is refused with 4403 Forbidden, the close code
// the graphql-transport-ws protocol gives a refused connection_init (a close
// with 1000 made graphql-ws clients reconnect in a tight loop). The
// acknowledgement carries no payload: echoing connection_init would send the
// session token back. An accepted connection is tracked, so that its session
// ending on any replica closes it with 4401.
func websocketInit(sessions *session.Handler) transport.WebsocketInitFunc {
	return func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		authed, err := sessions.WebsocketInit(ctx, p)
		if err != nil {
			reason := "forbidden: unknown or ended session"
			if e, ok := session.EndingOf(err); ok {
				reason = "forbidden: " + e.Error()
			}
			return gqlhttp.RefuseInit(ctx, gqlhttp.CloseForbidden, reason), nil, err
		}
		connCtx := authed
		untrack, err := sessions.TrackSocket(authed, func(why error) {
			code, reason := gqlhttp.CloseUnauthorized, "session ended"
			if e, ok := session.EndingOf(why); ok && e.Forbidden() {
				code, reason = gqlhttp.CloseForbidden, "forbidden: "+e.Error()
			} else if ok && e.Reason != session.ReasonSignedOut {
				reason = e.Error()
			}
			gqlhttp.CloseSocket(connCtx, code, reason)
		})
		if err != nil {
			return gqlhttp.RefuseInit(ctx, gqlhttp.CloseTooMany, "too many connections for this session"), nil, err
		}
		return gqlhttp.WithSocketCleanup(authed, untrack), nil, nil
	}
}

// trackStream ties an event stream (server-sent events, a multipart
// subscription) to its session, so that the session or its authority
// ending ends the stream with an error part saying why: UNAUTHENTICATED,
// or FORBIDDEN for a principal who may not come back (a block).
func trackStream(sessions *session.Handler) func(context.Context, func(error)) (func(), error) {
	return func(ctx context.Context, end func(error)) (func(), error) {
		return sessions.TrackSocket(ctx, func(why error) {
			code := gqlerr.Unauthenticated
			e, _ := session.EndingOf(why)
			if e == nil {
				e = &session.Ending{Reason: session.ReasonSignedOut}
			}
			if e.Forbidden() {
				code = gqlerr.Forbidden
			}
			end(gqlerr.New(code, e.Error()))
		})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// accessLog counts every request by route and status class and, at debug
// level, logs one line: method, route, status, duration and a request id
// of the gateway's own. Never the query string, a header or the body,
// which can carry card tokens (so a client's X-Request-Id is not logged
// either). With debug off it builds no log record and no request id, and
// leaves the request's context alone.
func accessLog(logger *slog.Logger, requests *prometheus.CounterVec) func(http.Handler) http.Handler {
	var seq atomic.Uint64
	prefix := requestIDPrefix()
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			debug := logger.Enabled(r.Context(), slog.LevelDebug)
			var t0 time.Time
			if debug {
				t0 = time.Now()
			}
			next.ServeHTTP(ww, r)
			route := chi.RouteContext(r.Context()).RoutePattern()
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK
			}
			requests.WithLabelValues(route, statusClass(status)).Inc()
			if debug {
				logger.Debug("request", "method", r.Method, "route", route, "status", status,
					"duration_ms", time.Since(t0).Milliseconds(), "request_id", prefix+strconv.FormatUint(seq.Add(1), 10))
			}
		})
	}
}

// statusClass names a status's class ("2xx") without formatting.
func statusClass(status int) string {
	switch status / 100 {
	case 1:
		return "1xx"
	case 2:
		return "2xx"
	case 3:
		return "3xx"
	case 4:
		return "4xx"
	}
	return strconv.Itoa(status/100) + "xx"
}

// requestIDPrefix tells this process's request ids from another replica's.
func requestIDPrefix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b) + "-"
}

// loopbackOnly serves a request from this host that came through no proxy,
// and answers anyone else 404: the metrics name routes, upstreams and
// failure rates, which are nobody else's business. FINGRAPH_METRICS_ADDR
// serves them on a listener of their own for a scraper elsewhere.
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		ip, err := netip.ParseAddr(host)
		proxied := r.Header.Get("Forwarded") != "" || r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("X-Real-Ip") != ""
		if err != nil || !ip.Unmap().IsLoopback() || proxied {
			http.NotFound(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// originChecker allows websocket upgrades from the gateway's own origin and
// the configured allowlist, comparing scheme, host and port: the same host
// over another scheme is another origin. A browser always sends Origin, so
// a request without one is not a cross-site browser request. The gateway's
// own scheme is the connection's, or behind a trusted proxy what the proxy
// says (forwardedProto).
func originChecker(allowed []string, forwardedProto func(*http.Request) string) func(*http.Request) bool {
	allow := map[string]bool{}
	for _, o := range allowed {
		if k, ok := originKey(o); ok {
			allow[k] = true
		}
	}
	return func(r *http.Request) bool {
		origin := r.Header.Get("Origin")
		if origin == "" {
			return true
		}
		k, ok := originKey(origin)
		if !ok {
			return false
		}
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		if p := forwardedProto(r); p == "http" || p == "https" {
			scheme = p
		}
		if self, ok := originKey(scheme + "://" + r.Host); ok && self == k {
			return true
		}
		return allow[k]
	}
}

// originKey is an origin as scheme://host:port, lower case, with the
// scheme's default port written out; only http and https origins are.
func originKey(origin string) (string, bool) {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return "", false
	}
	port := u.Port()
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", false
	case port == "" && u.Scheme == "http":
		port = "80"
	case port == "":
		port = "443"
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port), true
}
