package bankingsim

import (
	"context"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

// TokenHeader carries the access token both ways.
const TokenHeader = "x-access-token"

// Principal kinds.
const (
	kindStaff      = "staff"
	kindPerson     = "person"
	kindIntroducer = "introducer"
	kindAPI        = "api"
)

// principal is who a token speaks for. corpID is set for persons and API
// clients, who act within their own corporation.
type principal struct {
	kind   string
	id     string // staff, person, introducer or API key id
	corpID string
}

func (p principal) isStaff() bool { return p.kind == kindStaff }

// tokenState tracks one issued token. Tokens of one sign-in form a chain;
// each authenticated response issues the chain's next token and the previous
// newest one is superseded: it keeps working for the grace period only.
type tokenState struct {
	chain        string
	p            principal
	expires      time.Time
	supersededAt time.Time // zero while newest
}

// pastGrace reports whether the token was superseded more than grace
// before now.
func (st *tokenState) pastGrace(now time.Time, grace time.Duration) bool {
	return !st.supersededAt.IsZero() && now.After(st.supersededAt.Add(grace))
}

type ctxKey int

const (
	ctxPrincipal ctxKey = iota
	ctxVersion
)

func withVersion(v int) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxVersion, v)))
		})
	}
}

func versionOf(r *http.Request) int {
	v, _ := r.Context().Value(ctxVersion).(int)
	return v
}

func principalOf(r *http.Request) principal {
	p, _ := r.Context().Value(ctxPrincipal).(principal)
	return p
}

// issueTokenLocked signs a new token for p in chain (a new chain when empty)
// and supersedes the chain's previous newest token. s.mu must be held.
func (s *Sim) issueTokenLocked(p principal, chain string) string {
	now := s.now()
	if chain == "" {
		chain = uuid.NewString()
	}
	if old, ok := s.chains[chain]; ok {
		if st := s.tokens[old]; st != nil && st.supersededAt.IsZero() {
			st.supersededAt = now
			s.superseded.push(old)
		}
	}
	s.forgetSupersededLocked(now)
	jti := uuid.NewString()
	exp := now.Add(s.opts.TokenTTL)
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"jti": jti,
		"sub": p.id,
		"typ": p.kind,
		"iat": now.Unix(),
		"exp": exp.Unix(),
	})
	signed, err := tok.SignedString(s.jwtKey)
	if err != nil { // HS256 with a byte key cannot fail
		panic(err)
	}
	s.tokens[jti] = &tokenState{chain: chain, p: p, expires: exp}
	s.chains[chain] = jti
	if len(s.tokens) >= s.pruneAt {
		s.pruneTokensLocked(now)
		// The next prune when the live tokens have doubled: each scan is
		// paid for by as many issues as it scanned entries.
		s.pruneAt = max(minPruneAt, 2*len(s.tokens))
	}
	return signed
}

// minPruneAt is the fewest tokens kept before a prune.
const minPruneAt = 1024

// forgetSupersededLocked forgets the superseded tokens whose grace has
// ended, from the front of s.superseded: the grace is one length for all,
// so they end in the order they were superseded. Every token is pushed and
// popped at most once, so each issue pays for what it forgets, and no call
// waits behind a scan of the map under s.mu (a scan under the lock stalls
// every call in flight: BenchmarkTokenMapScan measures it). A token met
// here that is not yet dead stops the walk: a clock set back can only
// delay forgetting, never hasten it.
func (s *Sim) forgetSupersededLocked(now time.Time) {
	for jti, ok := s.superseded.front(); ok; jti, ok = s.superseded.front() {
		if st := s.tokens[jti]; st != nil {
			if !st.pastGrace(now, s.opts.TokenGrace) {
				return
			}
			delete(s.tokens, jti) // superseded, so never its chain's newest
		}
		s.superseded.pop()
	}
}

// jtiQueue is a first-in first-out queue of token ids.
type jtiQueue struct {
	items []string
	head  int
}

func (q *jtiQueue) push(jti string) { q.items = append(q.items, jti) }

func (q *jtiQueue) front() (string, bool) {
	if q.head == len(q.items) {
		return "", false
	}
	return q.items[q.head], true
}

// pop drops the front, and moves the rest to the start of the slice once
// the dropped part is the larger half, so the queue holds about what it
// has queued.
func (q *jtiQueue) pop() {
	q.items[q.head] = ""
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head > 1024 && 2*q.head > len(q.items) {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
}

// pruneTokensLocked forgets tokens nobody can use any more: it scans the
// map, for the tokens forgetSupersededLocked does not meet (the newest of a
// chain nobody calls with, past its lifetime).
func (s *Sim) pruneTokensLocked(now time.Time) {
	s.prunes++
	for jti, st := range s.tokens {
		if now.After(st.expires) || st.pastGrace(now, s.opts.TokenGrace) {
			delete(s.tokens, jti)
			if s.chains[st.chain] == jti {
				delete(s.chains, st.chain)
			}
		}
	}
}

// authenticate checks x-access-token, then answers with the chain's next
// token in the same header before the handler runs, so every response to an
// authenticated request carries it, errors included.
func (s *Sim) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := r.Header.Get(TokenHeader)
		if raw == "" {
			unauthorized(w, "", "access token is required")
			return
		}
		claims := jwt.MapClaims{}
		_, err := jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return s.jwtKey, nil },
			jwt.WithValidMethods([]string{"HS256"}), jwt.WithoutClaimsValidation())
		if err != nil {
			unauthorized(w, "", "access token is invalid")
			return
		}
		jti, _ := claims["jti"].(string)

		s.mu.Lock()
		now := s.now()
		st := s.tokens[jti]
		var msg string
		switch {
		case st == nil:
			msg = "access token is invalid"
		case now.After(st.expires):
			msg = "access token is expired"
		case st.pastGrace(now, s.opts.TokenGrace):
			msg = "access token was superseded"
		case !s.principalActiveLocked(st.p):
			msg = "access token is no longer valid"
		}
		if msg != "" {
			s.mu.Unlock()
			unauthorized(w, "", msg)
			return
		}
		p := st.p
		fresh := s.issueTokenLocked(p, st.chain)
		s.mu.Unlock()

		w.Header().Set(TokenHeader, fresh)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxPrincipal, p)))
	})
}

// principalActiveLocked refuses tokens of blocked persons and deleted keys.
func (s *Sim) principalActiveLocked(p principal) bool {
	switch p.kind {
	case kindStaff:
		return s.staff[p.id] != nil
	case kindIntroducer:
		return s.introducers[p.id] != nil
	case kindPerson:
		pp := s.persons[p.id]
		return pp != nil && pp.DeletedAt == nil
	case kindAPI:
		return s.apiKeys[p.id] != nil
	}
	return false
}
