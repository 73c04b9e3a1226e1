package gqlhttp

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/trace"

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
	// ShareQueries runs identical queries of one view (ViewScope) that
	// arrive together once (opshare.go); a query in demand waits
	// ShareWindow for the others to join it.
	ShareQueries bool
	ShareWindow  time.Duration
	// MultipartHeartbeat is the interval of the empty parts that keep a
	// multipart subscription open (default 5 s, as Apollo's router).
	MultipartHeartbeat time.Duration
}
