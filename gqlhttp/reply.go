package gqlhttp

import (
	"context"

	"github.com/fingraph/fingraph/reply"
)

var _ reply.Claimer = (*wsOp)(nil)

// ClaimStream makes a graphql-transport-ws operation the reply.Claimer its
// context carries (streamClaimKey is reply.StreamKey): a producer claims it
// through reply.ClaimStream as it would through gqlhttp.ClaimStream, which
// holds the rule of when an operation may be claimed.
func (*wsOp) ClaimStream(ctx context.Context) reply.Signal {
	if s := ClaimStream(ctx); s != nil {
		return s
	}
	return nil // a nil interface, not a nil *StreamSignal: nothing claimed
}
