package gqlhttp

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/ratelimit"
)

// UploadGate admits multipart uploads. A file part is the one part of a
// request that costs disk, so everything that could refuse the request is
// asked before the first byte of a file is read: the session and the
// operation's access policy (Authorize), then the caps on uploads in flight
// per client address, per session and in all. While files are read, the
// bytes they hold on disk, all requests together, are bounded too, and the
// temporary files live in Dir, which belongs to this process alone.
type UploadGate struct {
	// Dir is where files beyond the memory bound are spooled; "" is the
	// system's temporary directory.
	Dir string
	// Authorize, when set, is asked with the request's context (its
	// session) and the operation before any file is read: an error refuses
	// the request (its gqlerr code decides the answer, UNAUTHENTICATED 401
	// and FORBIDDEN 403).
	Authorize func(ctx context.Context, op *ast.OperationDefinition) error
	// ClientAddr and SessionID name who sends a request, for the caps;
	// SessionID returns "" for a request without a session.
	ClientAddr, SessionID func(*http.Request) string
	// Tenant names the corporation (or other tenant) a request's session
	// acts for, "" for none: one tenant's uploads, from however many
	// sessions and addresses, take at most PerTenant places of this
	// replica, so that another tenant's uploads are never starved.
	Tenant func(*http.Request) string
	// PerAddress, PerSession, PerTenant and Total cap the uploads in
	// flight; 0 is no cap.
	PerAddress, PerSession, PerTenant, Total int
	// SpoolBytes bounds the bytes of all requests' temporary files
	// together; 0 is no bound.
	SpoolBytes int64
	// ByAddress and BySession, when set, count the uploads in flight per
	// address and per session in place of this replica's own counts (a
	// claim of their Take is an upload in flight, ended without
	// counting): kept across replicas, so that N replicas admit what one
	// does. Total stays this replica's: it guards this replica's disk.
	ByAddress, BySession ratelimit.Limiter

	mu        sync.Mutex
	perAddr   map[string]int
	perSess   map[string]int
	perTenant map[string]int
	total     int
	spooled   int64
}

// admit counts an upload in flight, or answers the request with 429 and
// returns false when a cap is reached. release uncounts it.
func (g *UploadGate) admit(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	if g == nil {
		return func() {}, true
	}
	addr, sess, tenant := "", "", ""
	if g.ClientAddr != nil {
		addr = g.ClientAddr(r)
	}
	if g.SessionID != nil {
		sess = g.SessionID(r)
	}
	if g.Tenant != nil {
		tenant = g.Tenant(r)
	}
	const (
		tooManyInAll     = "the gateway is taking too many uploads; try again shortly"
		tooManyByAddress = "too many uploads in flight from this address; wait for one to finish"
		tooManyBySession = "too many uploads in flight for this session; wait for one to finish"
		tooManyByTenant  = "too many uploads in flight for this corporation; wait for one to finish"
	)
	localAddr, localSess := g.ByAddress == nil && g.PerAddress > 0, g.BySession == nil && g.PerSession > 0 && sess != ""
	byTenant := g.PerTenant > 0 && tenant != ""
	g.mu.Lock()
	if g.perAddr == nil {
		g.perAddr, g.perSess, g.perTenant = map[string]int{}, map[string]int{}, map[string]int{}
	}
	msg := ""
	switch {
	case g.Total > 0 && g.total >= g.Total:
		msg = tooManyInAll
	case byTenant && g.perTenant[tenant] >= g.PerTenant:
		msg = tooManyByTenant
	case localAddr && g.perAddr[addr] >= g.PerAddress:
		msg = tooManyByAddress
	case localSess && g.perSess[sess] >= g.PerSession:
		msg = tooManyBySession
	}
	if msg == "" {
		g.total++
		if byTenant {
			g.perTenant[tenant]++
		}
		if localAddr {
			g.perAddr[addr]++
		}
		if localSess {
			g.perSess[sess]++
		}
	}
	g.mu.Unlock()
	if msg != "" {
		refuseUpload(w, http.StatusTooManyRequests, gqlerr.RateLimited, msg)
		return nil, false
	}
	var ends []func(bool)
	uncount := func() {
		for _, end := range ends {
			end(false)
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		g.total--
		if byTenant {
			if g.perTenant[tenant]--; g.perTenant[tenant] <= 0 {
				delete(g.perTenant, tenant)
			}
		}
		if localAddr {
			if g.perAddr[addr]--; g.perAddr[addr] <= 0 {
				delete(g.perAddr, addr)
			}
		}
		if localSess {
			if g.perSess[sess]--; g.perSess[sess] <= 0 {
				delete(g.perSess, sess)
			}
		}
	}
	for _, c := range []struct {
		lim ratelimit.Limiter
		key string
		msg string
	}{
		{g.ByAddress, addr, tooManyByAddress},
		{g.BySession, sess, tooManyBySession},
	} {
		if c.lim == nil || c.key == "" {
			continue
		}
		ok, _, end := c.lim.Take(c.key)
		if !ok {
			uncount()
			refuseUpload(w, http.StatusTooManyRequests, gqlerr.RateLimited, c.msg)
			return nil, false
		}
		ends = append(ends, end)
	}
	var once sync.Once
	return func() { once.Do(uncount) }, true
}

// errSpoolFull marks a file refused because the temporary space of all
// uploads together is used up.
var errSpoolFull = errors.New("gqlhttp: the temporary space for uploads is full")

// reserve takes n bytes of the temporary space, or fails with errSpoolFull.
func (g *UploadGate) reserve(n int64) error {
	if g == nil || g.SpoolBytes <= 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.spooled+n > g.SpoolBytes {
		return errSpoolFull
	}
	g.spooled += n
	return nil
}

// unreserve gives back n bytes reserve took.
func (g *UploadGate) unreserve(n int64) {
	if g == nil || g.SpoolBytes <= 0 || n == 0 {
		return
	}
	g.mu.Lock()
	g.spooled -= n
	g.mu.Unlock()
}

// dir is where temporary files go.
func (g *UploadGate) dir() string {
	if g == nil {
		return ""
	}
	return g.Dir
}

// authorize asks Authorize, and answers the request when it refuses.
func (g *UploadGate) authorize(w http.ResponseWriter, r *http.Request, op *ast.OperationDefinition) bool {
	if g == nil || g.Authorize == nil || op == nil {
		return true
	}
	err := g.Authorize(r.Context(), op)
	if err == nil {
		return true
	}
	e, ok := gqlerr.As(err)
	if !ok {
		refuseUpload(w, http.StatusInternalServerError, gqlerr.Internal, gqlerr.InternalMessage)
		return false
	}
	status := http.StatusForbidden
	switch e.Code {
	case gqlerr.Unauthenticated:
		status = http.StatusUnauthorized
	case gqlerr.BadUserInput:
		status = http.StatusBadRequest
	case gqlerr.RateLimited:
		status = http.StatusTooManyRequests
	case gqlerr.UpstreamUnavailable:
		status = http.StatusServiceUnavailable
	}
	refuseUpload(w, status, e.Code, e.Message)
	return false
}

// refuseUpload answers an upload before its files are read and closes the
// connection: the rest of the body is never read, so the connection cannot
// serve another request. (The request's read deadline bounds what net/http
// reads of the rest after the answer.)
func refuseUpload(w http.ResponseWriter, status int, code gqlerr.Code, msg string) {
	w.Header().Set("Connection", "close")
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(5))
	}
	gqlerr.WriteHTTP(w, status, code, msg)
}

// PrepareUploadDir makes dir (with its parents) for the temporary files of
// uploads and removes whatever an earlier process left in it. It must be a
// directory of this process alone (under its locked data directory, or one
// made for it).
func PrepareUploadDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.MkdirAll(dir, 0o700)
}
