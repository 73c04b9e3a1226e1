package session

import "context"

// SignedIn reports whether ctx carries a session someone signed in to:
// neither none nor the sandbox's shared anonymous session. The gateway's
// per-address budgets of long-lived connections keep signed-in places
// apart from anonymous ones by it.
func SignedIn(ctx context.Context) bool {
	st := stateFrom(ctx)
	if st == nil {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.sess != nil && !st.anonymous
}
