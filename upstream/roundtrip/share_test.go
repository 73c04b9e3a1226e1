package roundtrip

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heldUpstream answers each call with its number ({"n":1} for the first)
// once the test releases it, and says when a call has arrived and when one
// was cancelled by the client.
type heldUpstream struct {
	*upstream
	arrived   chan struct{}
	release   chan struct{}
	cancelled atomic.Int32
	// status answers call n (1 for the first); 200 when nil.
	status func(n int32) int
}

func newHeldUpstream(t *testing.T) *heldUpstream {
	t.Helper()
	h := &heldUpstream{arrived: make(chan struct{}, 16), release: make(chan struct{})}
	var n atomic.Int32
	h.upstream = newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		call := n.Add(1)
		h.arrived <- struct{}{}
		select {
		case <-h.release:
		case <-r.Context().Done():
			h.cancelled.Add(1)
			return
		case <-time.After(10 * time.Second):
		}
		status := http.StatusOK
		if h.status != nil {
			status = h.status(call)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"n":` + strconv.Itoa(int(call)) + `}`))
	})
	return h
}

// sharedSender is a Sender of an upstream whose requests decide their
// answers (Upstream.Shared).
func sharedSender(t *testing.T) *Sender {
	t.Helper()
	s, err := New(Upstream{Name: "test", Check: check, Shared: true}, nil, WithRetries(0))
	require.NoError(t, err)
	return s
}

type answer struct {
	n   int
	err error
}

// get sends a GET of url with the given Authorization in the background
// and delivers its answer's number.
func get(s *Sender, ctx context.Context, method, url, auth string) <-chan answer {
	out := make(chan answer, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, method, url, nil)
		if err != nil {
			out <- answer{err: err}
			return
		}
		req.Header.Set("Authorization", auth)
		var v struct{ N int }
		err = s.Do(req, &v)
		out <- answer{v.N, err}
	}()
	return out
}

func arrive(t *testing.T, h *heldUpstream) {
	t.Helper()
	select {
	case <-h.arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("no call reached the upstream")
	}
}

func TestConcurrentReadsShareOneCall(t *testing.T) {
	h := newHeldUpstream(t)
	s := sharedSender(t)
	ctx := ShareFrom(context.Background(), time.Now())
	first := get(s, ctx, http.MethodGet, h.srv.URL+"/list?a=1", "Bearer k")
	arrive(t, h)
	var others []<-chan answer
	for range 3 {
		others = append(others, get(s, ctx, http.MethodGet, h.srv.URL+"/list?a=1", "Bearer k"))
	}
	require.Eventually(t, func() bool { return s.SharedAnswers() == 3 }, 5*time.Second, time.Millisecond)
	close(h.release)
	for _, c := range append(others, first) {
		a := <-c
		require.NoError(t, a.err)
		assert.Equal(t, 1, a.n, "every caller decodes the one call's answer")
	}
	assert.EqualValues(t, 1, h.calls.Load())
}

func TestASharedRefusalIsEveryCallersError(t *testing.T) {
	h := newHeldUpstream(t)
	h.status = func(int32) int { return http.StatusNotFound }
	s := sharedSender(t)
	ctx := ShareFrom(context.Background(), time.Now())
	first := get(s, ctx, http.MethodGet, h.srv.URL+"/x", "Bearer k")
	arrive(t, h)
	second := get(s, ctx, http.MethodGet, h.srv.URL+"/x", "Bearer k")
	require.Eventually(t, func() bool { return s.SharedAnswers() == 1 }, 5*time.Second, time.Millisecond)
	close(h.release)
	for _, c := range []<-chan answer{first, second} {
		var se *statusError
		require.ErrorAs(t, (<-c).err, &se)
		assert.Equal(t, http.StatusNotFound, se.status)
	}
	assert.EqualValues(t, 1, h.calls.Load())
}

// A shared call whose first answer is lost (a 503) is retried once for all
// its readers, and every reader gets the retry's answer: no reader sends a
// call of its own, none gets the failure.
func TestASharedCallIsRetriedForEveryReader(t *testing.T) {
	h := newHeldUpstream(t)
	h.status = func(n int32) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}
	s, err := New(Upstream{Name: "test", Check: check, Shared: true}, nil, WithRetries(1), WithBackoff(time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	ctx := ShareFrom(context.Background(), time.Now())
	first := get(s, ctx, http.MethodGet, h.srv.URL+"/list", "Bearer k")
	arrive(t, h)
	second := get(s, ctx, http.MethodGet, h.srv.URL+"/list", "Bearer k")
	require.Eventually(t, func() bool { return s.SharedAnswers() == 1 }, 5*time.Second, time.Millisecond)
	close(h.release)
	arrive(t, h) // the retry
	a, b := <-first, <-second
	require.NoError(t, errors.Join(a.err, b.err))
	assert.Equal(t, []int{2, 2}, []int{a.n, b.n})
	assert.EqualValues(t, 2, h.calls.Load())
}

// A reader shares no call begun before the moment its context names: a
// query that starts after a write must read it, and a call begun before
// may have been answered before the write.
func TestACallBegunBeforeTheReaderStartedIsNotShared(t *testing.T) {
	h := newHeldUpstream(t)
	s := sharedSender(t)
	early := time.Now()
	first := get(s, ShareFrom(context.Background(), early), http.MethodGet, h.srv.URL+"/list", "Bearer k")
	arrive(t, h)
	later := get(s, ShareFrom(context.Background(), time.Now()), http.MethodGet, h.srv.URL+"/list", "Bearer k")
	arrive(t, h)
	// A reader that started before both calls began shares the newer.
	third := get(s, ShareFrom(context.Background(), early), http.MethodGet, h.srv.URL+"/list", "Bearer k")
	require.Eventually(t, func() bool { return s.SharedAnswers() == 1 }, 5*time.Second, time.Millisecond)
	close(h.release)
	a, b, c := <-first, <-later, <-third
	require.NoError(t, errors.Join(a.err, b.err, c.err))
	assert.Equal(t, []int{1, 2, 2}, []int{a.n, b.n, c.n})
	assert.EqualValues(t, 2, h.calls.Load())
}

// Only a call that would have sent the same bytes is shared: another URL,
// another credential, another method, a context that allows no sharing, an
// upstream whose hooks add the caller's own credential, or one whose client
// turned sharing off each get a call.
func TestOnlyTheSameReadIsShared(t *testing.T) {
	h := newHeldUpstream(t)
	s := sharedSender(t)
	from := time.Now()
	ctx := ShareFrom(context.Background(), from)
	first := get(s, ctx, http.MethodGet, h.srv.URL+"/list", "Bearer k")
	arrive(t, h)
	unshared, err := New(Upstream{Name: "test", Check: check}, nil, WithRetries(0))
	require.NoError(t, err)
	turnedOff, err := New(Upstream{Name: "test", Check: check, Shared: true}, nil, WithRetries(0), WithoutSharing())
	require.NoError(t, err)
	rest := []<-chan answer{
		get(s, ctx, http.MethodGet, h.srv.URL+"/list?page=2", "Bearer k"),
		get(s, ctx, http.MethodGet, h.srv.URL+"/list", "Bearer other"),
		get(s, ctx, http.MethodDelete, h.srv.URL+"/list", "Bearer k"),
		get(s, context.Background(), http.MethodGet, h.srv.URL+"/list", "Bearer k"),
		get(unshared, ctx, http.MethodGet, h.srv.URL+"/list", "Bearer k"),
		get(turnedOff, ctx, http.MethodGet, h.srv.URL+"/list", "Bearer k"),
	}
	for range rest {
		arrive(t, h)
	}
	close(h.release)
	for _, c := range append(rest, first) {
		require.NoError(t, (<-c).err)
	}
	assert.EqualValues(t, 7, h.calls.Load())
	assert.Zero(t, s.SharedAnswers())
}

// The caller that began a shared call may give up; the call goes on for
// the others. Once nobody waits, it is cancelled.
func TestASharedCallLastsWhileSomeoneWaits(t *testing.T) {
	h := newHeldUpstream(t)
	s := sharedSender(t)
	from := time.Now()
	leaderCtx, leaderGone := context.WithCancel(ShareFrom(context.Background(), from))
	first := get(s, leaderCtx, http.MethodGet, h.srv.URL+"/list", "Bearer k")
	arrive(t, h)
	otherCtx, otherGone := context.WithCancel(ShareFrom(context.Background(), from))
	defer otherGone()
	second := get(s, otherCtx, http.MethodGet, h.srv.URL+"/list", "Bearer k")
	require.Eventually(t, func() bool { return s.SharedAnswers() == 1 }, 5*time.Second, time.Millisecond)

	leaderGone()
	// The call is not cancelled while the second caller waits...
	time.Sleep(50 * time.Millisecond)
	assert.Zero(t, h.cancelled.Load(), "the call was cancelled with a caller still waiting")
	close(h.release)
	b := <-second
	require.NoError(t, b.err)
	assert.Equal(t, 1, b.n)
	a := <-first
	assert.True(t, errors.Is(a.err, context.Canceled), "the caller that gave up: %v", a.err)

	// ...and is once every caller has given up.
	h2 := newHeldUpstream(t)
	ctx1, gone1 := context.WithCancel(ShareFrom(context.Background(), time.Now()))
	ctx2, gone2 := context.WithCancel(ShareFrom(context.Background(), from))
	c1 := get(s, ctx1, http.MethodGet, h2.srv.URL+"/list", "Bearer k")
	arrive(t, h2)
	c2 := get(s, ctx2, http.MethodGet, h2.srv.URL+"/list", "Bearer k")
	require.Eventually(t, func() bool { return s.SharedAnswers() == 2 }, 5*time.Second, time.Millisecond)
	gone2()
	gone1()
	for _, c := range []<-chan answer{c1, c2} {
		assert.True(t, errors.Is((<-c).err, context.Canceled))
	}
	require.Eventually(t, func() bool { return h2.cancelled.Load() == 1 }, 5*time.Second, time.Millisecond,
		"the call nobody waits for was not cancelled")
}

func TestCallKeysTellRequestsApart(t *testing.T) {
	req := func(method, url string, hdr ...string) *http.Request {
		r, err := http.NewRequest(method, url, nil)
		require.NoError(t, err)
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Add(hdr[i], hdr[i+1])
		}
		return r
	}
	base := callKey(req("GET", "http://u/x/y?a=1", "Authorization", "k", "Accept", "application/json"))
	assert.Equal(t, base, callKey(req("GET", "http://u/x/y?a=1", "Accept", "application/json", "Authorization", "k")),
		"header order does not matter")
	// Names and values cannot run into each other.
	a, b := req("GET", "http://u/x"), req("GET", "http://u/x")
	a.Header["A"] = []string{"x", "B"}
	b.Header["A"], b.Header["B"] = []string{"x"}, nil
	assert.NotEqual(t, callKey(a), callKey(b))
	for _, other := range []*http.Request{
		req("GET", "http://u/x/y?a=2", "Authorization", "k", "Accept", "application/json"),
		req("GET", "http://v/x/y?a=1", "Authorization", "k", "Accept", "application/json"),
		req("GET", "http://user:pw@u/x/y?a=1", "Authorization", "k", "Accept", "application/json"),
		req("GET", "http://u/x%2Fy?a=1", "Authorization", "k", "Accept", "application/json"),
		req("HEAD", "http://u/x/y?a=1", "Authorization", "k", "Accept", "application/json"),
		req("GET", "http://u/x/y?a=1", "Authorization", "k2", "Accept", "application/json"),
		req("GET", "http://u/x/y?a=1", "Authorization", "k", "Accept", "application/json", "Accept", "text/plain"),
		req("GET", "http://u/x/y?a=1", "Authorization", "k", "Accept", "application/json", "B", ""),
	} {
		assert.NotEqual(t, base, callKey(other), "%s %s %v", other.Method, other.URL, other.Header)
	}
}

// A read in demand (a call of it is in flight that a new reader may not
// share, its last reader came less than a window ago) waits the share
// window before it is sent, and any reader that comes meanwhile shares it,
// whenever it started: the call is sent after it came. A read nobody else
// is sending, or one asked for less often than the window, does not wait.
func TestAReadInDemandWaitsForMoreReaders(t *testing.T) {
	h := newHeldUpstream(t)
	s := sharedSender(t)
	s.cfg.shareWindow = time.Minute // every reader of this test comes within it
	windows, endWindow := make(chan time.Duration, 1), make(chan struct{})
	s.wait = func(ctx context.Context, d time.Duration) error {
		windows <- d
		<-endWindow
		return nil
	}
	first := get(s, ShareFrom(context.Background(), time.Now()), http.MethodGet, h.srv.URL+"/list", "Bearer k")
	arrive(t, h)
	assert.Empty(t, windows, "a read nobody else sends waited")

	second := get(s, ShareFrom(context.Background(), time.Now()), http.MethodGet, h.srv.URL+"/list", "Bearer k")
	select {
	case d := <-windows:
		assert.Equal(t, time.Minute, d)
	case <-time.After(5 * time.Second):
		t.Fatal("the read in demand did not wait")
	}
	third := get(s, ShareFrom(context.Background(), time.Now()), http.MethodGet, h.srv.URL+"/list", "Bearer k")
	require.Eventually(t, func() bool { return s.SharedAnswers() == 1 }, 5*time.Second, time.Millisecond)
	close(endWindow)
	arrive(t, h)
	close(h.release)
	a, b, c := <-first, <-second, <-third
	require.NoError(t, errors.Join(a.err, b.err, c.err))
	assert.Equal(t, []int{1, 2, 2}, []int{a.n, b.n, c.n})
	assert.EqualValues(t, 2, h.calls.Load())
}

func TestAReadAskedLessOftenThanTheWindowGoesAtOnce(t *testing.T) {
	h := newHeldUpstream(t)
	s := sharedSender(t)
	s.cfg.shareWindow = time.Nanosecond // shorter than any gap between two readers
	s.wait = func(context.Context, time.Duration) error {
		t.Error("a read asked for less often than the window waited")
		return nil
	}
	first := get(s, ShareFrom(context.Background(), time.Now()), http.MethodGet, h.srv.URL+"/list", "Bearer k")
	arrive(t, h)
	second := get(s, ShareFrom(context.Background(), time.Now()), http.MethodGet, h.srv.URL+"/list", "Bearer k")
	arrive(t, h)
	close(h.release)
	require.NoError(t, errors.Join((<-first).err, (<-second).err))
	assert.EqualValues(t, 2, h.calls.Load())
}
