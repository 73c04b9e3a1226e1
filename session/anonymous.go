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
// the session has expired or was signed out. The common path reads the
// store without holding the lock, so concurrent requests do not queue.
func (a *Anonymous) session(ctx context.Context) (string, *Session, error) {
	a.mu.Lock()
	tok := a.token
	a.mu.Unlock()
	if tok != "" {
		s, err := a.Store.Get(ctx, tok)
		if err == nil {
			return tok, s, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return "", nil, err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token != tok {
		// Another request signed in again meanwhile.
		s, err := a.Store.Get(ctx, a.token)
		if err == nil {
			return a.token, s, nil
		}
	}
	s, err := a.SignIn(ctx)
	if err != nil {
		return "", nil, err
	}
	if a.token, err = a.Store.Create(ctx, s); err != nil {
		return "", nil, err
	}
	return a.token, s, nil
}

// Shared reports whether the request acts on the shared anonymous session
// (see Anonymous): every client without a session of its own shares it, so
// nothing kept under its principal is any one client's (an idempotency key,
// for instance).
func Shared(ctx context.Context) bool {
	st := stateFrom(ctx)
	if st == nil {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.anonymous
}
