package session

import (
	"context"
	"errors"
	"sync"
)

// Anonymous gives requests that carry no session a shared session: the
// sandbox's demo API client, so that `go run .` answers a first query in
// the playground before anyone signs in. It exists for sandbox mode only;
// with real upstreams every request must sign in.
type Anonymous struct {
	Store Store
	// SignIn signs the demo principal in upstream and returns its session
	// (not yet stored).
	SignIn func(ctx context.Context) (*Session, error)

	mu    sync.Mutex
	token string
}

// session returns the shared session and its token, signing in again when
// the session has expired or was signed out.
func (a *Anonymous) session(ctx context.Context) (string, *Session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token != "" {
		s, err := a.Store.Get(ctx, a.token)
		if err == nil {
			return a.token, s, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return "", nil, err
		}
	}
	s, err := a.SignIn(ctx)
	if err != nil {
		return "", nil, err
	}
	tok, err := a.Store.Create(ctx, s)
	if err != nil {
		return "", nil, err
	}
	a.token = tok
	return tok, s, nil
}
