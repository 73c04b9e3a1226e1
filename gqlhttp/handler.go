// Package gqlhttp is fingraph's GraphQL edge over HTTP: the assembly of the
// handler around gqlgen's generated schema (package graph) with its
// transports, query limits, the error presenter, tracing and the gorilla
// websocket adapter. It is written by hand; graph/ is generated.
package gqlhttp

import (
	"context"
	"log/slog"
	"mime"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/trace"
)

// Limits bound what one request may ask for.
type Limits struct {
	// MaxTokens bounds the lexer before any parsing work is done.
	MaxTokens int
	// MaxDepth bounds selection nesting (fragments followed).
	MaxDepth int
	// MaxAliases bounds aliased fields, the usual amplification trick.
	MaxAliases int
	// MaxRootFields bounds the top-level fields of one operation.
	MaxRootFields int
	// MaxComplexity bounds gqlgen's complexity (1 per field by default).
	MaxComplexity int
	// MaxBodyBytes bounds a POST body.
	MaxBodyBytes int64
	// WebsocketReadLimit bounds one websocket message.
	WebsocketReadLimit int64
}

// DefaultLimits are generous for a real frontend and tight for abuse.
var DefaultLimits = Limits{
	MaxTokens:          15000,
	MaxDepth:           12,
	MaxAliases:         30,
	MaxRootFields:      20,
	MaxComplexity:      2000,
	MaxBodyBytes:       1 << 20,
	WebsocketReadLimit: 64 << 10,
}

// HandlerConfig configures NewHandler.
type HandlerConfig struct {
	Logger *slog.Logger
	Limits Limits
	// CheckOrigin vets websocket upgrades; nil allows same-origin only.
	CheckOrigin func(*http.Request) bool
	// WebsocketInit authenticates connection_init; nil accepts all.
	WebsocketInit transport.WebsocketInitFunc
	// Tracer, when set, traces operations and root fields.
	Tracer trace.Tracer
}

// NewHandler assembles the GraphQL HTTP handler over es.
func NewHandler(es graphql.ExecutableSchema, cfg HandlerConfig) *handler.Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits
	}
	l := cfg.Limits
	srv := handler.New(es)
	srv.AddTransport(transport.Websocket{
		Implementation: GorillaWebsocket{Upgrader: websocket.Upgrader{
			ReadBufferSize:  4096,
			WriteBufferSize: 4096,
			CheckOrigin:     cfg.CheckOrigin,
		}},
		InitFunc:              cfg.WebsocketInit,
		InitTimeout:           3 * time.Second,
		KeepAlivePingInterval: 15 * time.Second,
		PingPongInterval:      20 * time.Second,
		PayloadReadLimit:      &l.WebsocketReadLimit,
	})
	srv.AddTransport(transport.Options{})
	// SSE before POST: both accept a JSON POST, and the first transport that
	// supports a request serves it; SSE asks for Accept: text/event-stream.
	srv.AddTransport(transport.SSE{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	// File uploads (the GraphQL multipart request spec): bounded as a whole,
	// and files beyond MaxUploadMemory go to temporary files that gqlgen
	// removes when the request ends, so an upload is never held whole in
	// memory. Resolvers bound each file again (KYC: MaxKYCFileBytes).
	srv.AddTransport(transport.MultipartForm{MaxUploadSize: MaxUploadBytes, MaxMemory: MaxUploadMemory})

	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.SetParserTokenLimit(l.MaxTokens)
	srv.Use(extension.Introspection{})
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](1000)})
	srv.Use(extension.FixedComplexityLimit(l.MaxComplexity))
	srv.Use(ShapeLimit{MaxDepth: l.MaxDepth, MaxAliases: l.MaxAliases, MaxRootFields: l.MaxRootFields})

	if cfg.Tracer != nil {
		srv.Use(Tracing{Tracer: cfg.Tracer})
	}
	srv.SetErrorPresenter(ErrorPresenter(cfg.Logger))
	srv.SetRecoverFunc(func(ctx context.Context, v any) error {
		cfg.Logger.ErrorContext(ctx, "resolver panic", "panic", v)
		return errInternal
	})
	return srv
}

// Upload bounds of the multipart transport.
const (
	// MaxUploadBytes bounds a whole multipart request: a 10 MiB file and
	// its operations.
	MaxUploadBytes = 11 << 20
	// MaxUploadMemory is how much of a multipart request is kept in memory;
	// larger requests spool their files to temporary files.
	MaxUploadMemory = 1 << 20
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
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusRequestEntityTooLarge)
					_, _ = w.Write([]byte(`{"errors":[{"message":"the upload is too large","extensions":{"code":"BAD_USER_INPUT"}}]}`))
					return
				}
			}
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		next.ServeHTTP(w, r)
	})
}
