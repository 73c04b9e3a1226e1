package gqlerr

import (
	"context"
	"sync"
)

// StreamEnd carries why a subscription ended, from the resolver that ends
// it to the transport edge that tells the client: a subscription resolver
// can only close its channel, which reads as a normal completion.
type StreamEnd struct {
	mu  sync.Mutex
	err error
}

type streamEndKey struct{}

// WithStreamEnd gives a subscription's context a place for EndStream.
func WithStreamEnd(ctx context.Context) (context.Context, *StreamEnd) {
	s := &StreamEnd{}
	return context.WithValue(ctx, streamEndKey{}, s), s
}

// StreamEndFrom returns the subscription's StreamEnd, or nil.
func StreamEndFrom(ctx context.Context) *StreamEnd {
	s, _ := ctx.Value(streamEndKey{}).(*StreamEnd)
	return s
}

// EndStream records err (a client-safe *Error) as why the subscription of
// ctx ends; the resolver then closes its channel. Without a StreamEnd in
// ctx it does nothing, and the subscription just completes.
func EndStream(ctx context.Context, err error) {
	if s := StreamEndFrom(ctx); s != nil {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
	}
}

// Take returns the recorded error once, then nil.
func (s *StreamEnd) Take() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.err
	s.err = nil
	return err
}

// New returns an error with code and a client-safe message.
func New(code Code, msg string) *Error { return &Error{Code: code, Message: msg} }
