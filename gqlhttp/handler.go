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
//
// Files by concern: handler.go assembles the handler, config.go is what
// configures it, operations.go what wraps every operation, admission.go
// the caps on long-lived connections. The HTTP transports are transport.go
// (POST, GET), sse.go (with sseresume.go), incremental.go, multipartsub.go
// and multipart.go (uploads, with uploads.go and spool.go); streams are
// written by streamwrite.go. graphql-transport-ws is wsproto.go (reading
// and dispatch), wsinit.go, wsops.go and wsclose.go, over websocket.go's
// gorilla adapter. Documents and variables are checked by limits.go,
// variables.go, persisted.go and trusted.go; errors.go presents errors,
// tracing.go traces, live.go serves @live queries, nostore.go marks
// answers no-store.
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

	"github.com/fingraph/fingraph/gqlerr"
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
