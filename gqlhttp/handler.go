// Package gqlhttp is fingraph's GraphQL edge over HTTP: the assembly of the
// handler around gqlgen's generated schema (package graph) with its
// transports, query limits, the error presenter, tracing and the gorilla
// websocket adapter. It is written by hand; graph/ is generated.
//
// graphql-transport-ws has a transport of its own here (TransportWS):
// gqlgen's holds three goroutines per socket and subscription (its read
// loop, a goroutine waiting for the connection's end, and an operation loop
// blocked until the next value), whose stacks were most of what an idle
// subscription cost; TransportWS holds one per socket, and subscription
// producers signal it (ClaimStream) instead of a goroutine waiting on them.
// gqlgen's transport still serves the legacy graphql-ws subprotocol.
package gqlhttp

import (
	"cmp"
	"context"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"go.opentelemetry.io/otel/trace"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/livequery"
	"github.com/fingraph/fingraph/ratelimit"
)

// Limits bound what one request may ask for. Every one is checked before the
// cost it guards is paid: the body before it is read, the document before it
// is validated, the operation's time while it runs.
type Limits struct {
	// MaxTokens bounds the lexer before any parsing work is done.
	MaxTokens int
	// MaxFields bounds the fields of an operation once every fragment
	// spread is expanded: the size of the work validation and execution do.
	MaxFields int
	// MaxDepth bounds selection nesting (fragments followed), outside
	// introspection.
	MaxDepth int
	// MaxIntrospectionDepth bounds nesting inside __schema and __type.
	MaxIntrospectionDepth int
	// MaxAliases bounds aliased fields, the usual amplification trick.
	MaxAliases int
	// MaxRootFields bounds the top-level fields of one operation.
	MaxRootFields int
	// MaxSameName bounds how often one response name occurs in a merged
	// selection set (the quadratic part of validation).
	MaxSameName int
	// MaxDirectives bounds the directives of an operation, fragments
	// expanded.
	MaxDirectives int
	// MaxComplexity bounds gqlgen's complexity (1 per field by default).
	MaxComplexity int
	// MaxBodyBytes bounds a POST body.
	MaxBodyBytes int64
	// WebsocketReadLimit bounds one websocket message.
	WebsocketReadLimit int64
	// OperationTimeout bounds one query or mutation (not a subscription).
	OperationTimeout time.Duration
	// ReadTimeout bounds reading a request, body included, so that a
	// client trickling bytes cannot hold a connection.
	ReadTimeout time.Duration
	// MaxSocketsPerAddress caps the long-lived connections (websockets,
	// event streams, multipart subscriptions) of signed-in sessions from
	// one client address on this replica; more are refused with 429 before
	// the upgrade.
	MaxSocketsPerAddress int
	// MaxAnonymousPerAddress caps the long-lived connections without a
	// signed-in session from one client address, a budget of their own
	// (see admission.go): they never take a signed-in place.
	MaxAnonymousPerAddress int
	// MaxSocketsPerSession caps one session's websockets on this replica
	// (enforced by the session layer, which knows the session).
	MaxSocketsPerSession int
	// MaxOperationsPerSocket caps the operations in flight on one
	// websocket, subscriptions included.
	MaxOperationsPerSocket int
	// MaxUploadsPerAddress, MaxUploadsPerSession and MaxUploads cap the
	// file uploads in flight on this replica: per client address, per
	// session and in all; more are refused with 429 before a file is read.
	MaxUploadsPerAddress, MaxUploadsPerSession, MaxUploads int
	// MaxUploadsPerTenant caps the uploads in flight of one corporation's
	// sessions on this replica, however many sessions and addresses send
	// them, so that another corporation always finds places.
	MaxUploadsPerTenant int
	// MaxUploadSpoolBytes bounds the temporary files of all uploads in
	// flight together.
	MaxUploadSpoolBytes int64
}

// DefaultLimits are sized from real screens and tight for abuse. The
// largest screen query in the tests selects about 60 fields in 7 levels;
// the standard introspection query has about 250 tokens, 120 fields once
// expanded and nests 13 levels inside __schema.
var DefaultLimits = Limits{
	MaxTokens:             5000,
	MaxFields:             1000,
	MaxDepth:              10,
	MaxIntrospectionDepth: 16,
	MaxAliases:            30,
	MaxRootFields:         20,
	MaxSameName:           30,
	MaxDirectives:         50,
	MaxComplexity:         2000,
	MaxBodyBytes:          1 << 20,
	WebsocketReadLimit:    64 << 10,
	OperationTimeout:      30 * time.Second,
	ReadTimeout:           30 * time.Second,
	// A dashboard opens one socket per tab and a handful of subscriptions
	// on it; an office behind one NAT address opens many sockets.
	MaxSocketsPerAddress: 200,
	// A playground tab or two per person; signed-in sockets do not count.
	MaxAnonymousPerAddress: 50,
	// A dashboard keeps one socket per open tab.
	MaxSocketsPerSession:   20,
	MaxOperationsPerSocket: 50,
	// Uploads are KYC documents, a few per corporation: a person sends
	// one at a time, an office a handful at once.
	MaxUploadsPerAddress: 4,
	MaxUploadsPerSession: 2,
	MaxUploads:           16,
	// A quarter of the replica's places for one corporation.
	MaxUploadsPerTenant: 4,
	// Sixteen uploads of MaxUploadBytes, less what they keep in memory.
	MaxUploadSpoolBytes: 160 << 20,
}

// HandlerConfig configures NewHandler.
type HandlerConfig struct {
	Logger *slog.Logger
	Limits Limits
	// Introspection turns on __schema and __type, and the validator's "did
	// you mean" suggestions, which also reveal the schema. On in sandbox
	// mode; off by default in front of real upstreams.
	Introspection bool
	// CheckOrigin vets websocket upgrades; nil allows same-origin only.
	CheckOrigin func(*http.Request) bool
	// WebsocketInit authenticates connection_init; nil accepts all.
	WebsocketInit transport.WebsocketInitFunc
	// TrackStream, when set, ties a server-sent-event stream to the
	// request's session as a websocket is tied at connection_init: it
	// counts against the same per-session cap (an error refuses the stream
	// with 429) and end runs when the session ends.
	TrackStream func(ctx context.Context, end func(error)) (untrack func(), err error)
	// RecheckSession, when set, runs before every operation started on a
	// websocket: an error (the session ended) refuses the operation as
	// UNAUTHENTICATED and closes the connection with 4401.
	RecheckSession func(context.Context) error
	// Tracer, when set, traces operations and root fields.
	Tracer trace.Tracer
	// Trusted, when set, admits only its registered documents.
	Trusted *TrustedDocuments
	// SignedIn tells whether the session of ctx is signed in, for the
	// per-address budgets of long-lived connections (see admission.go);
	// nil counts every connection as signed in.
	SignedIn func(context.Context) bool
	// ClientAddr names the client of a request, for the per-address
	// websocket cap (the session layer's address, proxies considered);
	// nil uses the TCP peer.
	ClientAddr func(*http.Request) string
	// Extensions are installed after the gateway's own (per-operation
	// dataloaders): what needs a fresh context per operation, which an
	// HTTP middleware cannot give the operations of one websocket.
	Extensions []graphql.HandlerExtension
	// WebsocketKeepAlive is the websocket keep-alive interval (default
	// 15 s); WebsocketPeerTimeout how long a silent peer is kept (default
	// twice the interval and 10 s). See GorillaWebsocket.
	WebsocketKeepAlive, WebsocketPeerTimeout time.Duration
	// UploadDir is where uploads beyond MaxUploadMemory are spooled, a
	// directory of this process alone; "" is the system's temporary
	// directory.
	UploadDir string
	// AuthorizeUpload, when set, checks an upload's operation against the
	// request's session before any file is read (see UploadGate).
	AuthorizeUpload func(context.Context, *ast.OperationDefinition) error
	// SessionID names a request's session ("" without one), for the
	// per-session upload cap.
	SessionID func(*http.Request) string
	// ShareQueries runs identical queries of one view (ViewScope) that
	// arrive together once (opshare.go); a query in demand waits
	// ShareWindow for the others to join it.
	ShareQueries bool
	ShareWindow  time.Duration
	// UploadTenant names the corporation a request's session acts for
	// ("" for none), for the per-tenant upload cap.
	UploadTenant func(*http.Request) string
	// UploadCaps, when set, makes the limiters that count uploads in
	// flight per address and per session across replicas, from the caps
	// (see UploadGate.ByAddress).
	UploadCaps func(perAddress, perSession int) (byAddress, bySession ratelimit.Limiter)
	// Scalars are the gateway's readings of its scalars, by name, with
	// which variables are checked before anything uses them (see
	// VariableCheck).
	Scalars map[string]func(context.Context, any) error
	// Live, when set, keeps @live queries live over the streaming
	// transports; without it they answer once.
	Live *livequery.Engine
	// LiveSession names the session of a request, for the per-session
	// cap of live queries.
	LiveSession func(context.Context) string
	// ViewScope names the view of a request's principal (its session and
	// what it may see), for sharing the runs of identical live queries
	// (livequery.Caller.Share) and of identical queries (ShareQueries):
	// queries share only within one scope. nil or "" shares nothing.
	ViewScope func(context.Context) string
	// MultipartHeartbeat is the interval of the empty parts that keep a
	// multipart subscription open (default 5 s, as Apollo's router).
	MultipartHeartbeat time.Duration
}

// Close codes of the graphql-transport-ws protocol that the gateway sends.
const (
	// CloseUnauthorized ends a connection whose session ended.
	CloseUnauthorized = 4401
	// CloseForbidden refuses a connection_init with an unknown session.
	CloseForbidden = 4403
	// CloseTooMany refuses a connection over a cap (graphql-ws does not
	// retry it).
	CloseTooMany = 4429
)

// Handler is the GraphQL endpoint. Besides serving, it knows its
// long-lived connections, so that a shutdown can end them with a code that
// makes clients reconnect (to another replica) rather than wait.
type Handler struct {
	srv         *handler.Server
	readTimeout time.Duration
	clientAddr  func(*http.Request) string
	trackStream func(context.Context, func(error)) (func(), error)
	signedIn    func(context.Context) bool
	places      *places
	share       *operationShare

	mu      sync.Mutex
	sockets map[*socketSlot]struct{}
	streams map[*context.CancelFunc]struct{}
}

// CloseUpgrading is the close code of a shutdown: 1012 Service Restart,
// after which graphql-ws clients reconnect.
const CloseUpgrading = 1012

// Shutdown closes every websocket with 1012 and ends every SSE stream, so
// that http.Server.Shutdown, which waits for requests in flight but not
// for hijacked connections, neither waits for streams nor leaves sockets
// to die without a code. Queries and mutations in flight are left to
// finish.
func (h *Handler) Shutdown() {
	h.mu.Lock()
	sockets := make([]*socketSlot, 0, len(h.sockets))
	for s := range h.sockets {
		sockets = append(sockets, s)
	}
	streams := make([]context.CancelFunc, 0, len(h.streams))
	for c := range h.streams {
		streams = append(streams, *c)
	}
	h.mu.Unlock()
	for _, s := range sockets {
		if c := s.get(); c != nil {
			_ = c.WriteClose(CloseUpgrading, "service restart")
			_ = c.Close()
		}
	}
	for _, cancel := range streams {
		cancel()
	}
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Header.Get("Upgrade") != "":
		// gorilla clears the read deadline on upgrade.
		addr := h.clientAddr(r)
		slot := &socketSlot{}
		ctx := context.WithValue(context.WithValue(r.Context(), slotKey{}, slot), addrKey{}, addr)
		r = r.WithContext(ctx)
		if !h.admitSocket(w, r, slot, addr) {
			return
		}
		h.mu.Lock()
		h.sockets[slot] = struct{}{}
		h.mu.Unlock()
		h.serveSocket(w, r, slot, func() {
			h.mu.Lock()
			delete(h.sockets, slot)
			h.mu.Unlock()
			h.leaveSocket(slot)
		})
		return
	case strings.Contains(r.Header.Get("Accept"), "text/event-stream") || multipartSubscription(r):
		// A stream (server-sent events, a multipart subscription) is a
		// long-lived connection like a websocket, under the same caps: per
		// client address and per session.
		addr := h.clientAddr(r)
		class, ok := h.admitStream(w, r, addr)
		if !ok {
			return
		}
		defer h.places.give(addr, class)
		ctx, cancelCause := context.WithCancelCause(r.Context())
		cancel := context.CancelFunc(func() { cancelCause(nil) })
		defer cancel()
		if h.trackStream != nil {
			// The stream's session (or its authority) ending cancels the
			// stream with the reason, which its last part says
			// (streamEnd).
			untrack, err := h.trackStream(ctx, cancelCause)
			if err != nil {
				refuse(w, r, http.StatusTooManyRequests, gqlerr.RateLimited, "too many connections for this session")
				return
			}
			defer untrack()
		}
		r = r.WithContext(context.WithValue(context.WithValue(ctx, streamKey{}, true), addrKey{}, addr))
		key := &cancel
		h.mu.Lock()
		h.streams[key] = struct{}{}
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			delete(h.streams, key)
			h.mu.Unlock()
		}()
		fallthrough
	default:
		if h.readTimeout > 0 {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.readTimeout))
		}
	}
	h.srv.ServeHTTP(w, r)
}

// serveSocket runs a websocket request on a goroutine of its own and
// returns once the connection is upgraded (or the upgrade failed), so that
// net/http's goroutine for the connection ends and its per-connection state
// (a 4 KB write buffer, a 4 KB read buffer, the connection and response
// structures) is freed: an idle socket otherwise held all of it for its
// whole life. The goroutine replaces net/http's, so the count is the same.
// It serves a copy of the request that keeps its context's values but not
// its cancellation (net/http cancels it when the handler returns) and has
// no body (an upgrade has none; net/http's body reader would hold the
// connection), with a ResponseWriter that lets go of the real one once the
// upgrade is done (gqlgen's recover keeps the writer in scope). done runs
// when the connection ends: when the request's handler returns, or, when
// the transport hands the connection to a goroutine of its own (see
// TransportWS.Do), when that goroutine ends.
func (h *Handler) serveSocket(w http.ResponseWriter, r *http.Request, slot *socketSlot, done func()) {
	dw := &detachedWriter{w: w}
	slot.upgraded = make(chan struct{})
	slot.done = done
	r = r.WithContext(context.WithoutCancel(r.Context()))
	r.Body = http.NoBody
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer func() {
			if done := slot.takeDone(); done != nil {
				done()
			}
		}()
		h.srv.ServeHTTP(dw, r)
	}()
	select {
	case <-slot.upgraded:
	case <-ended:
	}
}

// NewHandler assembles the GraphQL HTTP handler over es.
func NewHandler(es graphql.ExecutableSchema, cfg HandlerConfig) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits
	}
	l := cfg.Limits
	srv := handler.New(es)
	h := &Handler{srv: srv, readTimeout: l.ReadTimeout, trackStream: cfg.TrackStream, signedIn: cfg.SignedIn,
		places:  newPlaces(l.MaxSocketsPerAddress, anonymousBudget(l)),
		sockets: map[*socketSlot]struct{}{}, streams: map[*context.CancelFunc]struct{}{}}
	// Every connection_init takes its socket's place (see admission.go).
	wsInit := h.admitInit(cfg.WebsocketInit)
	// Idle subscriptions are the common case. A read buffer of its own,
	// and a small one (client messages are small; larger ones are read
	// through it in pieces): the HTTP server's reader would keep the whole
	// HTTP connection, its 4 KB writer included, alive after the upgrade
	// (see Handler.serveSocket). A write buffer is borrowed only while
	// writing. docs/performance.md.
	socket := GorillaWebsocket{Upgrader: websocket.Upgrader{
		ReadBufferSize:  512,
		WriteBufferSize: 4096,
		WriteBufferPool: &sync.Pool{},
		CheckOrigin:     cfg.CheckOrigin,
		Error:           refuseUpgrade,
	},
		// Keep-alive and dead-peer detection on a timer in the adapter,
		// not in a ping loop (a goroutine per socket): see
		// GorillaWebsocket.
		KeepAlive:   cmp.Or(cfg.WebsocketKeepAlive, 15*time.Second),
		PeerTimeout: cfg.WebsocketPeerTimeout,
	}
	// graphql-transport-ws on the gateway's own transport (one goroutine
	// per socket, see TransportWS); the legacy graphql-ws subprotocol on
	// gqlgen's, after it.
	srv.AddTransport(TransportWS{
		Socket:        socket,
		InitFunc:      wsInit,
		CloseFunc:     runSocketCleanup,
		InitTimeout:   3 * time.Second,
		ReadLimit:     l.WebsocketReadLimit,
		MaxOperations: l.MaxOperationsPerSocket,
	})
	srv.AddTransport(transport.Websocket{
		Implementation:   socket,
		InitFunc:         wsInit,
		CloseFunc:        runSocketCleanup,
		InitTimeout:      3 * time.Second,
		PayloadReadLimit: &l.WebsocketReadLimit,
	})
	srv.AddTransport(transport.Options{})
	// SSE before POST: both accept a JSON POST, and the first transport that
	// supports a request serves it; SSE asks for Accept: text/event-stream.
	srv.AddTransport(SSE{MaxBodyBytes: l.MaxBodyBytes, MaxTokens: l.MaxTokens})
	// Apollo's multipart subscriptions, before the incremental-delivery
	// transport, which serves the other multipart/mixed requests.
	srv.AddTransport(MultipartSubscription{MaxBodyBytes: l.MaxBodyBytes, Heartbeat: cfg.MultipartHeartbeat})
	// Incremental delivery (@defer) for clients that accept multipart/mixed,
	// before POST for the same reason.
	srv.AddTransport(MultipartMixed{MaxBodyBytes: l.MaxBodyBytes})
	var share *operationShare
	if cfg.ShareQueries && cfg.ViewScope != nil {
		share = newOperationShare(cfg.ShareWindow, cfg.ViewScope)
	}
	h.share = share
	srv.AddTransport(GET{share: share})
	srv.AddTransport(POST{MaxBodyBytes: l.MaxBodyBytes, share: share})
	// File uploads (the GraphQL multipart request spec): bounded as a whole
	// and in files and paths before any file is read; files beyond
	// MaxUploadMemory go to temporary files removed when the request ends,
	// so an upload is never held whole in memory. Resolvers bound each file
	// again (KYC: MaxKYCFileBytes).
	clientAddr := cfg.ClientAddr
	if clientAddr == nil {
		clientAddr = func(r *http.Request) string {
			host, _, err := net.SplitHostPort(r.RemoteAddr)
			if err != nil {
				return r.RemoteAddr
			}
			return host
		}
	}
	// The session, the operation's policy and the caps on uploads in
	// flight are checked before any file part is read.
	gate := &UploadGate{Dir: cfg.UploadDir, Authorize: cfg.AuthorizeUpload, ClientAddr: clientAddr, SessionID: cfg.SessionID,
		Tenant: cfg.UploadTenant, PerTenant: l.MaxUploadsPerTenant,
		PerAddress: l.MaxUploadsPerAddress, PerSession: l.MaxUploadsPerSession, Total: l.MaxUploads, SpoolBytes: l.MaxUploadSpoolBytes}
	if cfg.UploadCaps != nil {
		gate.ByAddress, gate.BySession = cfg.UploadCaps(l.MaxUploadsPerAddress, l.MaxUploadsPerSession)
	}
	srv.AddTransport(Multipart{Schema: es.Schema(), MaxBytes: MaxUploadBytes, MaxOperationsBytes: l.MaxBodyBytes,
		MaxMemory: MaxUploadMemory, MaxFiles: MaxUploadFiles, MaxPaths: MaxUploadPaths, Gate: gate})
	srv.AddTransport(Unsupported{})

	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.SetParserTokenLimit(l.MaxTokens)
	srv.SetDisableSuggestion(!cfg.Introspection)
	if cfg.Introspection {
		srv.Use(extension.Introspection{})
	}
	// Trusted documents and the persisted-query extension fill in the
	// document, so they run before the document is measured; the extension
	// is vetted before either reads it.
	srv.Use(persistedQueryCheck{})
	if cfg.Trusted != nil {
		srv.Use(cfg.Trusted)
	}
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](1000)})
	srv.Use(&DocumentLimit{
		MaxTokens: l.MaxTokens, MaxFields: l.MaxFields, MaxDepth: l.MaxDepth,
		MaxIntrospectionDepth: l.MaxIntrospectionDepth, MaxAliases: l.MaxAliases, MaxRootFields: l.MaxRootFields,
		MaxSameName: l.MaxSameName, MaxDirectives: l.MaxDirectives, Introspection: cfg.Introspection,
	})
	// Variables are read by the gateway's scalar rules before the
	// complexity limit reads the arguments it multiplies.
	srv.Use(VariableCheck{Schema: es.Schema(), Scalars: cfg.Scalars})
	srv.Use(extension.FixedComplexityLimit(l.MaxComplexity))
	srv.AroundOperations(operationGuard(cfg))

	if cfg.Tracer != nil {
		srv.Use(Tracing{Tracer: cfg.Tracer})
	}
	for _, e := range cfg.Extensions {
		srv.Use(e)
	}
	// Last of the operation context mutators: an operation it admits is
	// created, and dispatched.
	srv.Use(socketOperations{max: int32(l.MaxOperationsPerSocket)})
	srv.SetErrorPresenter(ErrorPresenter(cfg.Logger))
	srv.SetRecoverFunc(func(ctx context.Context, v any) error {
		cfg.Logger.ErrorContext(ctx, "resolver panic", "panic", v)
		return errInternal
	})
	h.clientAddr = clientAddr
	return h
}

// refuseUpgrade answers a websocket upgrade gorilla refuses (an origin not
// allowed, a malformed handshake) as every refusal outside GraphQL is
// answered: one error with a code. gqlgen writes its own body without a
// code after a failed upgrade; the writer is let go of so that only this
// answer reaches the client.
func refuseUpgrade(w http.ResponseWriter, _ *http.Request, status int, _ error) {
	if dw, ok := w.(*detachedWriter); ok {
		defer dw.detach()
	}
	w.Header().Set("Sec-Websocket-Version", "13")
	switch {
	case status == http.StatusForbidden:
		gqlerr.WriteHTTP(w, status, gqlerr.Forbidden, "this origin may not open a websocket here")
	case status >= 500:
		gqlerr.WriteHTTP(w, status, gqlerr.Internal, gqlerr.InternalMessage)
	default:
		gqlerr.WriteHTTP(w, status, gqlerr.BadUserInput, "not a websocket handshake this server accepts (graphql-transport-ws or graphql-ws over websocket version 13)")
	}
}

// operationGuard bounds each query and mutation by the operation timeout
// (subscriptions live as long as their connection), re-checks the session
// of a websocket before each operation on it, and caps the operations in
// flight on one websocket.
func operationGuard(cfg HandlerConfig) graphql.OperationMiddleware {
	timeout := cfg.Limits.OperationTimeout
	maxOps := int32(cfg.Limits.MaxOperationsPerSocket)
	refuse := func(code gqlerr.Code, msg string) graphql.ResponseHandler {
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{{
			Message: msg, Extensions: map[string]any{"code": string(code)}}}})
	}
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		slot, onSocket := ctx.Value(slotKey{}).(*socketSlot)
		if onSocket && cfg.RecheckSession != nil {
			if err := cfg.RecheckSession(ctx); err != nil {
				CloseSocket(ctx, CloseUnauthorized, "session ended")
				return refuse(gqlerr.Unauthenticated, "the session has ended; sign in again")
			}
		}
		oc := graphql.GetOperationContext(ctx)
		var release func()
		if onSocket && maxOps > 0 && !slot.ownCap.Load() {
			// A legacy socket's operation took its place as it was
			// created (socketOperations); TransportWS counts its own.
			if admitted, _ := oc.Stats.GetExtension(admittedKey).(bool); !admitted && slot.ops.Add(1) > maxOps {
				slot.ops.Add(-1)
				return refuse(gqlerr.RateLimited, tooManyOperations)
			}
			var once sync.Once
			release = func() { once.Do(func() { slot.ops.Add(-1) }) }
		}
		cancel := context.CancelFunc(func() {})
		subscription := oc.Operation != nil && oc.Operation.Operation == ast.Subscription
		var h graphql.ResponseHandler
		if liveOperation(ctx, cfg, oc) {
			// Lives as long as its stream, as a subscription does; each
			// run is bounded by the timeout (startLive).
			subscription = true
			h = startLive(ctx, cfg, oc, next)
		} else if subscription {
			// A subscription the server ends (a slow subscriber dropped)
			// says why before it completes.
			h = endWithReason(ctx, next)
		} else {
			if timeout > 0 && oc.Operation != nil {
				ctx, cancel = context.WithTimeout(ctx, timeout)
			}
			h = next(ctx)
		}
		// The operation ends when its response handler runs dry (a query
		// after its last response, its deferred parts included, a
		// subscription when it completes).
		opCtx := ctx
		pending := false // a deferred part is still to come
		return func(ctx context.Context) *graphql.Response {
			var r *graphql.Response
			if pending && !subscription {
				r = nextPart(opCtx, ctx, h)
			} else {
				r = h(ctx)
			}
			pending = hasNext(r)
			if !subscription && !pending {
				cancel()
			}
			if r == nil && release != nil {
				release()
			}
			return r
		}
	}
}

// nextPart reads a deferred part. gqlgen waits for it without watching the
// operation's context, while the deferred work, once the context ends, may
// give up delivering it: the wait would then never end. It ends with the
// operation's context instead (a cancelled request or the operation
// timeout), which ends the response.
func nextPart(opCtx, ctx context.Context, h graphql.ResponseHandler) *graphql.Response {
	ch := make(chan *graphql.Response, 1)
	go func() { ch <- h(ctx) }()
	select {
	case r := <-ch:
		return r
	case <-opCtx.Done():
		return nil
	}
}

// endWithReason lets a subscription resolver end its stream with an error
// (gqlerr.EndStream): gqlgen reads a closed channel as a normal completion,
// so the reason is sent as one last errors-only response before it.
func endWithReason(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	ctx, end := gqlerr.WithStreamEnd(ctx)
	h := next(ctx)
	said := false // the reason is said once
	return func(ctx context.Context) *graphql.Response {
		resp := h(ctx)
		if resp != nil {
			return resp
		}
		err := end.Take()
		if err == nil && !said {
			err = endedBy(ctx)
		}
		if err == nil {
			return nil
		}
		said = true
		e, ok := gqlerr.As(err)
		if !ok {
			e = gqlerr.InternalError(err)
		}
		return &graphql.Response{Errors: gqlerror.List{{
			Message: e.Message, Extensions: map[string]any{"code": string(e.Code)},
		}}}
	}
}

// endedBy returns why the server ended a stream, when it did: the error its
// context was cancelled with (its session or that session's authority
// ended, see HandlerConfig.TrackStream), as a *gqlerr.Error. A stream the
// client ended, or one still running, has none.
func endedBy(ctx context.Context) error {
	if e, ok := gqlerr.As(context.Cause(ctx)); ok {
		return e
	}
	return nil
}

// Upload bounds of the multipart transport.
const (
	// MaxUploadBytes bounds a whole multipart request: a 10 MiB file and
	// its operations.
	MaxUploadBytes = 11 << 20
	// MaxUploadMemory is how much of a multipart request's files, all
	// together, is kept in memory; the rest goes to temporary files.
	MaxUploadMemory = 1 << 20
	// MaxUploadFiles bounds the files of one request, and MaxUploadPaths
	// the places they go: the schema takes one file per operation.
	MaxUploadFiles = 10
	MaxUploadPaths = 10
)

// LimitBody caps request bodies before gqlgen reads them; multipart uploads
// get MaxUploadBytes instead.
func LimitBody(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			limit := max
			if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && mt == "multipart/form-data" {
				limit = MaxUploadBytes
				if r.ContentLength > limit {
					// Refused before a byte is read, with a client code
					// (gqlgen's own refusal carries none).
					gqlerr.WriteHTTP(w, http.StatusRequestEntityTooLarge, gqlerr.BadUserInput, "the upload is too large")
					return
				}
			}
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		next.ServeHTTP(w, r)
	})
}
