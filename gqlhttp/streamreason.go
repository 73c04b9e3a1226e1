package gqlhttp

import (
	"context"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fingraph/fingraph/gqlerr"
)

// streamInfo marks a request served as a stream (server-sent events, a
// multipart subscription) and tells who ended it: the client (its
// request's context, client, ended) or the server (the stream's context,
// stream, ended while the client is still there), and then why.
type streamInfo struct {
	client, stream context.Context
	// down is set when the gateway shuts down (Handler.Shutdown).
	down *atomic.Bool
}

// sayWhy wraps the response handler of a subscription or live query served
// on a stream: when the server ends the stream (its session ended, the
// gateway shuts down), one errors-only response says why before the end,
// as a websocket's close code does: multipart sends it as the part that
// ends the stream, server-sent events as a last next event.
func (s *streamInfo) sayWhy(h graphql.ResponseHandler) graphql.ResponseHandler {
	said := false
	return func(ctx context.Context) *graphql.Response {
		r := h(ctx)
		if r != nil || said {
			return r
		}
		said = true
		if s.stream.Err() == nil || s.client.Err() != nil {
			return nil // it ended on its own, or its client left
		}
		// Nothing but the session's end (TrackStream) and the shutdown
		// end a stream from the server's side.
		e := gqlerr.New(gqlerr.Unauthenticated, "the session has ended; sign in again")
		if s.down.Load() {
			e = gqlerr.New(gqlerr.UpstreamUnavailable, "the gateway is shutting down; connect again")
		}
		return &graphql.Response{Errors: gqlerror.List{{Message: e.Message, Extensions: map[string]any{"code": string(e.Code)}}}}
	}
}
