package session

import (
	"context"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
)

// CookieName is the web session cookie.
const CookieName = "fingraph_session"

// CSRFHeader carries the session's CSRF token on cookie-authenticated
// requests that are not GET or HEAD.
const CSRFHeader = "X-CSRF-Token"

// state is what one request (or one websocket connection) knows about its
// session. Resolvers of one request run in parallel, so it is guarded.
type state struct {
	store  Store
	logger *slog.Logger
	w      http.ResponseWriter // nil on websocket connections
	client string              // client address, for rate limits

	bursts *bursts
	// held are the request's token arrivals waiting for its end (see
	// hold); its holdFor is zero on websocket connections, which write at
	// once.
	held held

	mu    sync.Mutex
	token string
	sess  *Session
	// anonymous marks the shared sandbox session (see Anonymous): signing
	// in or out replaces it for this request but never deletes it.
	anonymous bool
	// auth stamps the grants of a session begun here (nil: none kept).
	auth *Authority
	// lost is told the session token of a banking call that ended without
	// an answer (see call.End); nil tells nobody.
	lost func(token string)
	// conn is the long-lived connection this state serves, when tracked
	// (TrackSocket): a sign-in over it moves it to the new session.
	conn *conn
}

type ctxKey struct{}

func stateFrom(ctx context.Context) *state {
	st, _ := ctx.Value(ctxKey{}).(*state)
	return st
}

// From returns the request's session, or nil when signed out.
func From(ctx context.Context) *Session {
	st := stateFrom(ctx)
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.sess == nil {
		return nil
	}
	c := *st.sess
	return &c
}

// IDOf returns the id of r's session, or "" when it has none: for handlers
// behind Middleware that only need to know whose request it is.
func IDOf(r *http.Request) string {
	st := stateFrom(r.Context())
	if st == nil {
		return ""
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.sess == nil {
		return ""
	}
	return st.sess.ID
}

// ClientAddr returns the address of the client that sent the request: the
// TCP peer, or behind trusted proxies the address they forwarded.
func ClientAddr(ctx context.Context) string {
	if st := stateFrom(ctx); st != nil {
		return st.client
	}
	return ""
}

// Handler attaches sessions to requests and websocket connections.
type Handler struct {
	store  Store
	logger *slog.Logger
	bursts *bursts
	// holdFor bounds how long a request holds its token arrivals before
	// writing them (flushAfter; tests change it).
	holdFor time.Duration
	// Anonymous, when set, is the session of requests that carry none.
	Anonymous *Anonymous
	// Sockets, when set, tracks websocket connections so that a session
	// that ends closes them (see TrackSocket).
	Sockets *Sockets
	// TrustedProxies are the proxies whose X-Forwarded-For or Forwarded
	// header names the client (see ClientAddr); empty trusts none.
	TrustedProxies []netip.Prefix
	// Authority, when set, keeps the ends of authority: every session is
	// judged against it when a request or an operation presents it, and
	// new sessions are stamped with their grants (see standing).
	Authority *Authority
	// Prove proves a session to its upstream when an end of authority asks
	// for it (an API key deleted); without it such sessions end.
	Prove Prover

	proving singleflight.Group
}

// NewHandler returns a Handler over store. Use one per process: it tracks
// the overlapping banking calls of each session that token write-back tells
// apart (see FollowCall).
func NewHandler(store Store, logger *slog.Logger) *Handler {
	return &Handler{store: store, logger: logger, bursts: newBursts(), holdFor: flushAfter}
}

// Middleware loads the session of every request into its context: from
// "Authorization: Bearer <token>" (mobile) or the session cookie (web).
// Cookie-authenticated requests other than GET and HEAD must carry
// X-CSRF-Token equal to the session's CSRF token (double submit), or get 403.
// CUSTOMER sessions act on the payments upstream with their customer key.
func (h *Handler) Middleware(next http.Handler) http.Handler {
	store, logger := h.store, h.logger
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := &state{store: store, logger: logger, bursts: h.bursts, w: w, client: h.ClientAddress(r), auth: h.Authority, lost: h.answerLost}
		if r.Header.Get("Upgrade") != "" {
			// A websocket sets no cookie, and its connection outlives the
			// request: holding the ResponseWriter would keep net/http's
			// state for the connection alive as long.
			st.w = nil
		} else {
			st.held.holdFor = h.holdFor
			// Before the response is complete, so the client's next
			// request finds the tokens this one received.
			defer st.release(r.Context(), true)
		}
		token, fromCookie := requestToken(r)
		if token != "" {
			sess, err := store.Get(r.Context(), token)
			if err == nil {
				sess, err = h.standing(r.Context(), token, sess)
			}
			switch {
			case errors.Is(err, ErrNotFound) || errors.Is(err, ErrEnded):
				if fromCookie {
					clearCookie(w)
				}
			case err != nil:
				logger.ErrorContext(r.Context(), "session lookup failed", "err", err)
				gqlerr.WriteHTTP(w, http.StatusServiceUnavailable, gqlerr.UpstreamUnavailable, "sessions are unavailable; try again shortly")
				return
			default:
				if fromCookie && r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions {
					got := r.Header.Get(CSRFHeader)
					if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(sess.CSRFToken)) != 1 {
						gqlerr.WriteHTTP(w, http.StatusForbidden, gqlerr.Forbidden, "cookie-authenticated requests need the "+CSRFHeader+" header of the session")
						return
					}
				}
				st.token, st.sess = token, sess
			}
		}
		if token == "" && h.Anonymous != nil {
			tok, sess, err := h.Anonymous.session(r.Context())
			if err != nil {
				logger.ErrorContext(r.Context(), "the sandbox's anonymous demo session failed", "err", err)
				gqlerr.WriteHTTP(w, http.StatusServiceUnavailable, gqlerr.UpstreamUnavailable, "the demo session is unavailable; sign in, or try again shortly")
				return
			}
			st.token, st.sess, st.anonymous = tok, sess, true
		}
		next.ServeHTTP(w, r.WithContext(st.attach(r.Context())))
	})
}

// WebsocketInit authenticates a websocket connection whose connection_init
// payload carries "sessionToken". Without one the connection keeps what the
// upgrade request's cookie gave it. An unknown token refuses the connection.
func (h *Handler) WebsocketInit(ctx context.Context, payload map[string]any) (context.Context, error) {
	tok, _ := payload["sessionToken"].(string)
	if tok == "" {
		return ctx, nil
	}
	sess, err := h.store.Get(ctx, tok)
	if err == nil {
		sess, err = h.standing(ctx, tok, sess)
	}
	if err != nil {
		if e, ok := EndingOf(err); ok && e.Forbidden() {
			return ctx, e
		}
		return ctx, errors.New("unknown or expired session")
	}
	st := &state{store: h.store, logger: h.logger, bursts: h.bursts, token: tok, sess: sess, client: ClientAddr(ctx), auth: h.Authority, lost: h.answerLost}
	return st.attach(ctx), nil
}

// attach returns ctx carrying st, the session as the banking token source
// (it reads the session at each call, so a sign-in later in the request
// takes effect), and the payments customer key of a CUSTOMER session. Both
// clients tell the session when the upstream refuses its credential.
func (st *state) attach(ctx context.Context) context.Context {
	ctx = context.WithValue(ctx, ctxKey{}, st)
	ctx = banking.WithTokenSource(ctx, (*tokenSource)(st))
	if st.sess != nil && st.sess.Kind == Customer {
		ctx = payments.WithOwnedCustomerKey(ctx, st.sess.CustomerKey.Reveal(), (*keyOwner)(st))
	}
	return ctx
}

func requestToken(r *http.Request) (token string, fromCookie bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		if t, ok := strings.CutPrefix(h, "Bearer "); ok {
			return strings.TrimSpace(t), false
		}
	}
	if c, err := r.Cookie(CookieName); err == nil && c.Value != "" {
		return c.Value, true
	}
	return "", false
}

func clientIP(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return remote
	}
	return host
}

// Begin stores a new session for the request, sets the cookie (web
// clients) and makes it the request's session, so that fields resolved
// after sign-in see the new principal. It returns the session token.
func Begin(ctx context.Context, sess *Session) (string, error) {
	st := stateFrom(ctx)
	if st == nil {
		return "", errors.New("session: no session middleware")
	}
	if st.auth != nil {
		grants, err := st.auth.stamp(ctx, grantsOf(sess))
		if err != nil {
			return "", err
		}
		sess.Grants = grants
	}
	token, err := st.store.Create(ctx, sess)
	if err != nil {
		return "", err
	}
	st.mu.Lock()
	old, shared, c := st.token, st.anonymous, st.conn
	st.token, st.sess, st.anonymous = token, sess, false
	st.mu.Unlock()
	if c != nil {
		// A connection that signs in over itself belongs to the new
		// session from now on: its end ends the connection.
		if err := c.follow(token, sess); err != nil {
			st.logger.WarnContext(ctx, "could not track a connection under its new session", "err", err)
		}
	}
	if old != "" && !shared {
		// Signing in again replaces the previous session of this client.
		if err := st.store.Delete(ctx, old); err != nil {
			st.logger.WarnContext(ctx, "could not delete the replaced session", "err", err)
		}
	}
	if st.w != nil {
		http.SetCookie(st.w, &http.Cookie{
			Name: CookieName, Value: token, Path: "/", MaxAge: int(st.store.TTL() / time.Second),
			HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode,
		})
	}
	st.logger.InfoContext(ctx, "session started", "session", sess)
	return token, nil
}

// End deletes the request's session and clears the cookie. It reports
// whether there was a session.
func End(ctx context.Context) (bool, error) {
	st := stateFrom(ctx)
	if st == nil {
		return false, nil
	}
	return st.end(ctx)
}

func (st *state) end(ctx context.Context) (bool, error) {
	st.mu.Lock()
	token, sess, shared := st.token, st.sess, st.anonymous
	st.token, st.sess, st.anonymous = "", nil, false
	st.mu.Unlock()
	if st.w != nil {
		clearCookie(st.w)
	}
	if token == "" || shared {
		return false, nil
	}
	if err := st.store.Delete(ctx, token); err != nil {
		return true, err
	}
	st.logger.InfoContext(ctx, "session ended", "session", sess)
	return true, nil
}

func clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
}
