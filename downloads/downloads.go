// Package downloads hands report files to frontends without the upstream
// token: the gateway answers a short-lived signed link to itself, and the
// handler behind it streams the file from the upstream.
//
// A link is /downloads/reports/{id}?exp={unix seconds}&sig={mac}. The id is
// the upstream's report URL, the file name and the id of the session that
// asked, sealed with AES-GCM, so the link neither reveals the upstream's
// address nor can point anywhere else; sig is an HMAC-SHA256 over id and
// expiry. Both keys derive from one secret: per process by default (links
// then work on the replica that made them until it restarts), or
// configured, so that every replica accepts them.
//
// A link is a pointer, not a credential: it downloads only for a request
// of the session sealed in it (its bearer token or cookie), so a link that
// leaks (a shared screen, a proxy log, a browser history) gives nothing,
// and signing out ends every link of the session. Within its lifetime it
// works any number of times, because browsers and download managers retry
// and resume; single use would break those and add nothing once the link
// needs the session anyway.
package downloads

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/fingraph/fingraph/gqlerr"
)

// DefaultTTL is how long a link works.
const DefaultTTL = 10 * time.Minute

// RoutePattern is where Handler is mounted.
const RoutePattern = "/downloads/reports/{id}"

// Signer makes and checks links.
type Signer struct {
	aead   cipher.AEAD
	macKey []byte
	ttl    time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// NewSigner derives the sealing and signing keys from secret; an empty
// secret draws a random one for this process. ttl <= 0 is DefaultTTL.
func NewSigner(secret []byte, ttl time.Duration) *Signer {
	if len(secret) == 0 {
		secret = make([]byte, 32)
		_, _ = rand.Read(secret) // crypto/rand.Read never fails (Go 1.24)
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(label))
		return m.Sum(nil)
	}
	// A 32-byte key always makes an AES-256 block, and GCM over AES
	// always builds: neither error can happen.
	block, _ := aes.NewCipher(derive("fingraph downloads seal"))
	aead, _ := cipher.NewGCM(block)
	return &Signer{aead: aead, macKey: derive("fingraph downloads sign"), ttl: ttl}
}

func (s *Signer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

type sealed struct {
	URL     string `json:"u"`
	Name    string `json:"n"`
	Session string `json:"s"`
}

func (s *Signer) mac(id string, exp int64) string {
	m := hmac.New(sha256.New, s.macKey)
	m.Write([]byte(id + "." + strconv.FormatInt(exp, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Sign returns the gateway path (to be joined to the gateway's origin) that
// downloads the upstream file at reportURL as fileName for the session
// sessionID only, and its expiry.
func (s *Signer) Sign(reportURL, fileName, sessionID string) (string, time.Time, error) {
	if sessionID == "" {
		return "", time.Time{}, errors.New("downloads: a link needs the session that asks for it")
	}
	plain, err := json.Marshal(sealed{URL: reportURL, Name: fileName, Session: sessionID})
	if err != nil {
		return "", time.Time{}, err
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", time.Time{}, err
	}
	id := base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, nil))
	exp := s.now().Add(s.ttl).Truncate(time.Second)
	q := url.Values{"exp": {strconv.FormatInt(exp.Unix(), 10)}, "sig": {s.mac(id, exp.Unix())}}
	return "/downloads/reports/" + id + "?" + q.Encode(), exp, nil
}

// Errors of Open and of the handler.
var (
	ErrBadLink = errors.New("downloads: link is not valid")
	ErrExpired = errors.New("downloads: link has expired")
)

// Target is what a link leads to.
type Target struct {
	// URL is the upstream's report URL; Name the file name to offer.
	URL, Name string
	// Session is the id of the session the link was made for.
	Session string
}

// Open checks a link's signature and expiry and unseals its target.
func (s *Signer) Open(id, exp, sig string) (Target, error) {
	e, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || !hmac.Equal([]byte(sig), []byte(s.mac(id, e))) {
		return Target{}, ErrBadLink
	}
	if s.now().Unix() > e {
		return Target{}, ErrExpired
	}
	raw, err := base64.RawURLEncoding.DecodeString(id)
	n := s.aead.NonceSize()
	if err != nil || len(raw) < n {
		return Target{}, ErrBadLink
	}
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], nil)
	if err != nil {
		return Target{}, ErrBadLink
	}
	var v sealed
	if err := json.Unmarshal(plain, &v); err != nil || v.Session == "" {
		return Target{}, ErrBadLink
	}
	return Target(v), nil
}

// Opener fetches an upstream report file; *banking.Client is one.
type Opener interface {
	OpenReport(ctx context.Context, reportURL string) (*http.Response, error)
}

// Handler serves signed links: it streams the upstream file with its
// content type, as an attachment, never cached, to the session the link was
// made for; sessionOf names the request's session ("" when it has none),
// which runs behind the session middleware. A link refused is answered with
// a code, as every route answers outside GraphQL (gqlerr.WriteHTTP).
// Nothing of the link or the upstream address is logged.
func Handler(s *Signer, upstream Opener, sessionOf func(*http.Request) string, logger *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, err := s.Open(chi.URLParam(r, "id"), r.URL.Query().Get("exp"), r.URL.Query().Get("sig"))
		switch {
		case errors.Is(err, ErrExpired):
			gqlerr.WriteHTTP(w, http.StatusGone, gqlerr.BadUserInput, "this download link has expired; request the report again")
			return
		case err != nil:
			gqlerr.WriteHTTP(w, http.StatusForbidden, gqlerr.Forbidden, "this download link is not valid")
			return
		}
		switch cur := sessionOf(r); {
		case cur == "":
			// Signed out (which ends the session's links) or never in.
			gqlerr.WriteHTTP(w, http.StatusUnauthorized, gqlerr.Unauthenticated, "sign in: a download link works only in the session that requested it")
			return
		case subtle.ConstantTimeCompare([]byte(cur), []byte(t.Session)) != 1:
			gqlerr.WriteHTTP(w, http.StatusForbidden, gqlerr.Forbidden, "this download link belongs to another session")
			return
		}
		u, name := t.URL, t.Name
		resp, err := upstream.OpenReport(r.Context(), u)
		if err != nil {
			logger.WarnContext(r.Context(), "report download failed", "err_kind", fmt.Sprintf("%T", err))
			gqlerr.WriteHTTP(w, http.StatusBadGateway, gqlerr.UpstreamUnavailable, "the report is not available")
			return
		}
		defer resp.Body.Close()
		ct := resp.Header.Get("Content-Type")
		if ct == "" {
			ct = "application/octet-stream"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if resp.ContentLength <= MaxRangeBytes {
			// A link is reusable so that an interrupted download can
			// resume: a file not known to be larger than the bound is
			// served in ranges.
			w.Header().Set("Accept-Ranges", "bytes")
			if r.Header.Get("Range") != "" {
				serveRange(w, r, resp, logger)
				return
			}
		}
		if resp.ContentLength >= 0 {
			w.Header().Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
		}
		_, _ = io.Copy(w, resp.Body)
	}
}

// MaxRangeBytes bounds the files served in ranges: a range is cut from the
// whole file, read into memory, since the upstream serves whole files only.
// A larger file is served whole whatever the Range header asks (which
// HTTP allows).
const MaxRangeBytes = 16 << 20

// serveRange answers a Range request from the whole upstream file, with
// http.ServeContent (206 with the ranges asked, 416 for ranges outside the
// file, If-Range against the upstream's Last-Modified).
func serveRange(w http.ResponseWriter, r *http.Request, resp *http.Response, logger *slog.Logger) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxRangeBytes+1))
	if err != nil || (resp.ContentLength >= 0 && int64(len(body)) != resp.ContentLength) {
		logger.WarnContext(r.Context(), "report download cut short", "err_kind", fmt.Sprintf("%T", err))
		w.Header().Del("Accept-Ranges")
		gqlerr.WriteHTTP(w, http.StatusBadGateway, gqlerr.UpstreamUnavailable, "the report is not available")
		return
	}
	if len(body) > MaxRangeBytes {
		w.Header().Del("Accept-Ranges")
		_, _ = io.Copy(w, io.MultiReader(bytes.NewReader(body), resp.Body))
		return
	}
	modified, _ := http.ParseTime(resp.Header.Get("Last-Modified"))
	http.ServeContent(w, r, "", modified, bytes.NewReader(body))
}
