package gqlhttp

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fingraph/fingraph/gqlerr"
)

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
