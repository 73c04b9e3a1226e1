package downloads

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
)

type fakeOpener struct{ got string }

func (f *fakeOpener) OpenReport(_ context.Context, u string) (*http.Response, error) {
	f.got = u
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/pdf"}},
		Body: io.NopCloser(strings.NewReader("%PDF-1.3 body")), ContentLength: 13}, nil
}

// serve requests path as the session sess ("" for none).
func serve(s *Signer, o Opener, path string, sess ...string) *httptest.ResponseRecorder {
	if len(sess) == 0 {
		sess = []string{"sess-1"}
	}
	r := chi.NewRouter()
	r.Get(RoutePattern, Handler(s, o, func(*http.Request) string { return sess[0] }, slog.New(slog.DiscardHandler)))
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

func TestSignedLinkRoundTrip(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := NewSigner([]byte("configured secret"), time.Minute)
	s.Now = func() time.Time { return now }
	const upstream = "http://127.0.0.1:9/banking/v2/reports/files/rpt_abc?name=x.pdf"
	path, exp, err := s.Sign(upstream, "statement.pdf", "sess-1")
	if err != nil {
		t.Fatal(err)
	}
	if !exp.Equal(now.Add(time.Minute)) || strings.Contains(path, "127.0.0.1") || strings.Contains(path, "rpt_abc") {
		t.Fatalf("link %s (exp %s) reveals the upstream or has the wrong expiry", path, exp)
	}
	o := &fakeOpener{}
	rec := serve(s, o, path)
	if rec.Code != 200 || o.got != upstream || rec.Body.String() != "%PDF-1.3 body" ||
		rec.Header().Get("Cache-Control") != "no-store" || !strings.Contains(rec.Header().Get("Content-Disposition"), "statement.pdf") {
		t.Fatalf("download: %d %v %q (opened %q)", rec.Code, rec.Header(), rec.Body.String(), o.got)
	}

	// Only the session the link was made for downloads.
	if rec := serve(s, &fakeOpener{}, path, ""); rec.Code != http.StatusUnauthorized {
		t.Errorf("no session: %d", rec.Code)
	}
	if rec := serve(s, &fakeOpener{}, path, "sess-2"); rec.Code != http.StatusForbidden {
		t.Errorf("another session: %d", rec.Code)
	}
	if _, _, err := s.Sign(upstream, "statement.pdf", ""); err == nil {
		t.Error("signed a link for no session")
	}

	// Another replica with the same configured secret accepts the link.
	other := NewSigner([]byte("configured secret"), time.Minute)
	other.Now = s.Now
	if rec := serve(other, &fakeOpener{}, path); rec.Code != 200 {
		t.Errorf("same secret, other replica: %d", rec.Code)
	}
	// A different secret, a changed expiry or id, and an expired link do not.
	if rec := serve(NewSigner(nil, 0), &fakeOpener{}, path); rec.Code != http.StatusForbidden {
		t.Errorf("per-process key accepted a foreign link: %d", rec.Code)
	}
	u, _ := url.Parse(path)
	q := u.Query()
	q.Set("exp", "99999999999")
	if rec := serve(s, &fakeOpener{}, u.Path+"?"+q.Encode()); rec.Code != http.StatusForbidden {
		t.Errorf("extended expiry: %d", rec.Code)
	}
	if rec := serve(s, &fakeOpener{}, strings.Replace(path, "/reports/", "/reports/A", 1)); rec.Code != http.StatusForbidden {
		t.Errorf("changed id: %d", rec.Code)
	}
	now = now.Add(2 * time.Minute)
	if rec := serve(s, &fakeOpener{}, path); rec.Code != http.StatusGone {
		t.Errorf("expired link: %d", rec.Code)
	}
}
