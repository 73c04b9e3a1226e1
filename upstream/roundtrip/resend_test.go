package roundtrip

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// credentialKey carries the test's per-call state from Begin to the other
// hooks.
type credentialKey struct{}

// holder offers the credentials of one call, in order; the upstream accepts
// only "good".
type holder struct {
	creds []string
	ended int
}

// resendSender is a Sender whose calls carry the holder's credentials: a 401
// refuses one, and the call is resent while the holder has another.
func resendSender(t *testing.T, h *holder, opts ...Option) (*Sender, *upstream) {
	t.Helper()
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if body, _ := io.ReadAll(r.Body); string(body) != `{"a":1}` && string(body) != `{}` {
			w.WriteHeader(http.StatusBadRequest) // a resend lost the body
			return
		}
		if r.Header.Get("X-Cred") != "good" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, "refused "+r.Header.Get("X-Cred"))
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	s, err := New(Upstream{Name: "test", Check: check,
		Begin: func(ctx context.Context) (context.Context, func()) {
			next := new(int)
			return context.WithValue(ctx, credentialKey{}, next), func() { h.ended++ }
		},
		Prepare: func(r *http.Request) error {
			next := r.Context().Value(credentialKey{}).(*int)
			r.Header.Set("X-Cred", h.creds[*next])
			return nil
		},
		Refused: func(r *http.Request, resp *http.Response) (bool, bool) {
			if resp.StatusCode != http.StatusUnauthorized {
				return false, false
			}
			next := r.Context().Value(credentialKey{}).(*int)
			*next++
			return true, *next < len(h.creds)
		},
	}, nil, opts...)
	require.NoError(t, err)
	return s, u
}

// doBody sends a POST through s and returns the 2xx body.
func doBody(t *testing.T, s *Sender, url string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{"a":1}`))
	require.NoError(t, err)
	err = s.Do(req, &out)
	return out.String(), err
}

// A refused credential is resent with the holder's next one, whatever the
// method and with no retries allowed, with the same body; the call begins
// and ends once.
func TestARefusedCredentialIsResentWithTheNext(t *testing.T) {
	h := &holder{creds: []string{"old", "older", "good"}}
	s, u := resendSender(t, h, WithRetries(0))
	out, err := doBody(t, s, u.srv.URL)
	require.NoError(t, err)
	assert.Equal(t, "ok", out)
	assert.EqualValues(t, 3, u.calls.Load())
	assert.Equal(t, 1, h.ended)
}

// When no credential is accepted, the call's outcome is its first refusal,
// and the resends still do not count as retries.
func TestNoAcceptedCredentialAnswersTheFirstRefusal(t *testing.T) {
	h := &holder{creds: []string{"a", "b", "c"}}
	var answered []string
	s, u := resendSender(t, h, WithRetries(0))
	s.up.Answered = func(r *http.Request, resp *http.Response) {
		answered = append(answered, r.Header.Get("X-Cred")+"="+strconv.Itoa(resp.StatusCode))
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, u.srv.URL, strings.NewReader(`{}`))
	require.NoError(t, err)
	var first *http.Response
	s.up.Check = func(r *http.Response) error {
		first = r
		return check(r)
	}
	err = s.Do(req, nil)
	var se *statusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusUnauthorized, se.status)
	body, _ := io.ReadAll(first.Body)
	assert.Equal(t, "refused a", string(body), "the first refusal, unchanged")
	assert.Equal(t, []string{"a=401", "b=401", "c=401"}, answered)
	assert.EqualValues(t, 3, u.calls.Load())
	assert.Equal(t, 1, h.ended)
}

// Without Refused, a 401 is an answer like any other: sent once.
func TestWithoutRefusedA401IsNotResent(t *testing.T) {
	var n atomic.Int32
	u := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
	})
	s, err := New(Upstream{Name: "test", Check: check}, nil)
	require.NoError(t, err)
	require.Error(t, send(t, s, t.Context(), http.MethodGet, u.srv.URL))
	assert.EqualValues(t, 1, n.Load())
}
