package gqlhttp

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/livequery"
)

// Live queries (@live, package livequery) ride on the streaming transports:
// a websocket, server-sent events and multipart subscriptions read an
// operation's responses until there are none, so a live query is an
// operation whose response handler gives its first answer, then each new
// one. A transport that reads one response (POST, GET) answers once, as if
// @live were absent: the engine is never started for it.

type (
	// streamKey marks a request served as a stream (server-sent events,
	// multipart subscriptions); a websocket has its socketSlot.
	streamKey struct{}
	// addrKey carries the client address of a long-lived connection, for
	// the per-address cap of live queries.
	addrKey struct{}
)

// streaming reports whether the operation of ctx can send more than one
// response.
func streaming(ctx context.Context) bool {
	if _, ok := ctx.Value(slotKey{}).(*socketSlot); ok {
		return true
	}
	return ctx.Value(streamKey{}) != nil
}

// liveOperation reports whether the operation of oc is a live query that
// this transport can keep live.
func liveOperation(ctx context.Context, cfg HandlerConfig, oc *graphql.OperationContext) bool {
	return cfg.Live != nil && oc != nil && livequery.Live(oc.Operation, oc.Variables) && streaming(ctx)
}

// startLive starts the live query of oc: each run of it goes through next
// (the operation's own middleware: a fresh read cache, tracing) as its
// caller, bounded by the operation timeout, its deferred parts merged in.
func startLive(ctx context.Context, cfg HandlerConfig, oc *graphql.OperationContext, next graphql.OperationHandler) graphql.ResponseHandler {
	oc.ResolverMiddleware = livequery.WatchFields(oc.ResolverMiddleware)
	timeout := cfg.Limits.OperationTimeout
	exec := func(rctx context.Context) *graphql.Response {
		if timeout > 0 {
			var cancel context.CancelFunc
			rctx, cancel = context.WithTimeout(rctx, timeout)
			defer cancel()
		}
		h := next(rctx)
		return collect(rctx, h(rctx), h)
	}
	caller := livequery.Caller{}
	caller.Address, _ = ctx.Value(addrKey{}).(string)
	if cfg.LiveSession != nil {
		caller.Session = cfg.LiveSession(ctx)
	}
	if cfg.ViewScope != nil {
		caller.Share = liveShareKey(cfg.ViewScope(ctx), oc)
	}
	answer, ended, err := cfg.Live.Start(ctx, caller, exec)
	if err != nil {
		return graphql.OneShot(liveError(err))
	}
	said := false // why the stream ended is said once
	return func(rctx context.Context) *graphql.Response {
		if r := answer(rctx); r != nil {
			return r
		}
		if said {
			return nil
		}
		said = true
		// A stream the server ended (its session or authority ended,
		// see endedBy), or one the change feed ended, says why.
		if err := endedBy(rctx); err != nil {
			return liveError(err)
		}
		if err := ended(); err != nil && rctx.Err() == nil {
			return liveError(err)
		}
		return nil
	}
}

// liveShareKey keys the live queries that run as one (livequery.Caller.
// Share): the same scope (one principal's view, as the session layer names
// it), document, operation name and variables; "" when the scope is
// unknown. The key is a digest, so the engine's table holds no session id.
func liveShareKey(scope string, oc *graphql.OperationContext) string {
	if scope == "" {
		return ""
	}
	vars, err := json.Marshal(oc.Variables) // map keys in order
	if err != nil {
		return ""
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(scope), []byte(oc.RawQuery), []byte(oc.OperationName), vars} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return string(h.Sum(nil))
}

// liveError is the errors-only response of a live query refused or ended.
func liveError(err error) *graphql.Response {
	e, ok := gqlerr.As(err)
	switch {
	case errors.Is(err, livequery.ErrTooMany):
		e = gqlerr.New(gqlerr.RateLimited, "too many live queries for this session or address; end some first")
	case !ok:
		e = gqlerr.New(gqlerr.UpstreamUnavailable, "the live query ended: the change feed is unavailable; send it again")
	}
	return &graphql.Response{Errors: gqlerror.List{{
		Message: e.Message, Extensions: map[string]any{"code": string(e.Code)},
	}}}
}
