package paymentsim

import (
	"context"
	"net/http"
	"strings"
)

// Key kinds, as the spec's Key column names them.
type keyKind int

const (
	kindPublic keyKind = 1 << iota
	kindPrivate
	kindCustomer
	kindAccess
)

func (k keyKind) String() string {
	var parts []string
	for _, p := range []struct {
		k keyKind
		n string
	}{{kindPublic, "public"}, {kindPrivate, "private"}, {kindCustomer, "customer"}, {kindAccess, "access token"}} {
		if k&p.k != 0 {
			parts = append(parts, p.n)
		}
	}
	return strings.Join(parts, " or ")
}

// principal is who a request acts as.
type principal struct {
	kind       keyKind
	customerID string // for kindCustomer
}

type ctxKey struct{}

func principalOf(r *http.Request) principal {
	p, _ := r.Context().Value(ctxKey{}).(principal)
	return p
}

// bearer reads the key from Authorization, or from the Authentication
// spelling of the spec's order examples.
func bearer(r *http.Request) string {
	for _, h := range []string{"Authorization", "Authentication"} {
		v := strings.TrimSpace(r.Header.Get(h))
		if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
			return strings.TrimSpace(v[7:])
		}
	}
	return ""
}

func (s *Sim) lookupKey(key string) (principal, bool) {
	switch key {
	case "":
		return principal{}, false
	case PublicKey:
		return principal{kind: kindPublic}, true
	case PrivateKey:
		return principal{kind: kindPrivate}, true
	case AccessToken:
		return principal{kind: kindAccess}, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.custKeys[key]; ok {
		return principal{kind: kindCustomer, customerID: id}, true
	}
	return principal{}, false
}

// authorize answers 401 for a missing or unknown key and 403 for a known key
// of a kind the route does not take.
func (s *Sim) authorize(allowed keyKind) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := s.lookupKey(bearer(r))
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="payments"`)
				writeErr(w, errCode(http.StatusUnauthorized, "unauthorized", "", "missing or unknown key"))
				return
			}
			if p.kind&allowed == 0 {
				writeErr(w, errCode(http.StatusForbidden, "forbidden_key", "", "this route takes a %s key", allowed))
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, p)))
		})
	}
}
