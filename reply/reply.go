// Package reply is what a resolver may ask of the transport that carries
// its answer, whichever transport that is: that the answer must not be
// stored by any cache (it carries card data), and, for a subscription, to
// drive the transport itself with a signal per value rather than leave a
// goroutine of the transport waiting on its channel.
//
// A transport puts what it offers into the request's or the operation's
// context; where it offers nothing (another transport, a test), every call
// here does nothing. Both sides import this package, so resolvers need not
// know the transport (gqlhttp) and the transport need not know resolvers.
package reply

import (
	"context"
	"sync/atomic"
)

type noStoreKey struct{}

// WithNoStore returns ctx in which MarkNoStore sets mark. The transport
// reads mark before it writes the response's headers.
func WithNoStore(ctx context.Context, mark *atomic.Bool) context.Context {
	return context.WithValue(ctx, noStoreKey{}, mark)
}

// MarkNoStore says that the answer of ctx's request carries card data and
// must not be stored by any cache. Resolvers call it before they fetch the
// data, so the mark holds however the request ends. Outside WithNoStore it
// does nothing.
func MarkNoStore(ctx context.Context) {
	if mark, ok := ctx.Value(noStoreKey{}).(*atomic.Bool); ok {
		mark.Store(true)
	}
}

// StreamKey is the context key under which a transport puts the Claimer of
// a subscription operation: context.WithValue(ctx, reply.StreamKey{}, c).
type StreamKey struct{}

// Claimer is a transport's side of a subscription operation whose producer
// may drive it.
type Claimer interface {
	// ClaimStream returns the operation's Signal, or nil when the
	// operation cannot be driven so (it is already claimed, or already
	// read by the transport). ctx is the operation's context.
	ClaimStream(ctx context.Context) Signal
}

// Signal is how a producer drives a transport: Sent after each value it
// puts into the subscription's channel, Closed after it closes it, and
// Unclaim if, having claimed, it gives no channel after all (the resolver
// fails), which gives the operation back to the transport's own reading.
type Signal interface {
	Sent()
	Closed()
	Unclaim()
}

// Stream is a producer's claim on its subscription's transport. The zero
// Stream claims nothing, and its methods do nothing: a producer signals the
// same way whether or not its transport takes signals.
type Stream struct{ sig Signal }

// ClaimStream claims the stream of ctx's subscription operation. A
// producer that gets a claimed Stream must signal every value and the close
// (or Unclaim); without a claim the transport reads the channel itself.
func ClaimStream(ctx context.Context) Stream {
	if c, ok := ctx.Value(StreamKey{}).(Claimer); ok {
		return Stream{sig: c.ClaimStream(ctx)}
	}
	return Stream{}
}

// Claimed reports whether the transport takes this producer's signals.
func (s Stream) Claimed() bool { return s.sig != nil }

// Sent tells the transport one more value waits in the channel.
func (s Stream) Sent() {
	if s.sig != nil {
		s.sig.Sent()
	}
}

// Closed tells the transport the channel is closed.
func (s Stream) Closed() {
	if s.sig != nil {
		s.sig.Closed()
	}
}

// Unclaim gives the operation back to the transport's own reading.
func (s Stream) Unclaim() {
	if s.sig != nil {
		s.sig.Unclaim()
	}
}
