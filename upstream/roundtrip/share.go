package roundtrip

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Sharing an answer: when several callers send the same read at once (a
// dashboard's listing, asked by every open tab of a tenant), one call goes
// upstream and every caller gets its answer, each decoding its own copy.
// These rules keep that invisible to the callers:
//
//   - Only a call whose request, as built, decides its answer is shared:
//     a GET without a body, of an upstream that says so (Upstream.Shared:
//     no Prepare, Begin or Refused hook adds anything of the caller's), with
//     the same URL and the same header values (so the same credential).
//     Two callers that would have sent different bytes never share.
//   - A caller shares only a call not sent yet, or sent at or after the
//     moment its context names (ShareFrom): a GraphQL query's reads start
//     when the query does, so an answer shared with it was asked for after
//     every write its client had finished; it reads its own writes. A
//     context that names no moment (a mutation's reads, the pollers,
//     webhook enrichment) never shares.
//   - A read in demand (a call of it is in flight that a new reader may not
//     share, and its last reader came less than a share window ago) waits
//     the share window (WithShareWindow) before it is sent, so that the
//     readers arriving meanwhile share it. Any other read goes at once.
//   - A caller that gives up stops waiting, and the call is cancelled once
//     no caller waits for it; the call runs under its own deadline
//     (WithTimeout), not the first caller's cancellation.
//
// The key of a call is a SHA-256 digest of its method, URL and headers: the
// table of calls in flight holds no credential.

// shareKey carries the moment from which a context's reads may share calls.
type shareKey struct{}

// ShareFrom lets the reads of ctx share an upstream call of another caller
// that is not sent yet or was sent at or after from (see Upstream.Shared). Give it the moment the
// work that reads began, such as the start of a GraphQL query: everything
// its client wrote before is then in what it reads.
func ShareFrom(ctx context.Context, from time.Time) context.Context {
	return context.WithValue(ctx, shareKey{}, from)
}

// SharesFrom is the moment ShareFrom gave ctx, if any: from it on, the
// reads of ctx may share calls.
func SharesFrom(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(shareKey{}).(time.Time)
	return t, ok
}

// flight is a shared call in flight and, once done is closed, its outcome.
type flight struct {
	key [sha256.Size]byte
	// begun is when the call was sent; zero while it waits to be.
	begun time.Time
	// arrived is when its last reader came; guarded by flights.mu.
	arrived time.Time
	done    chan struct{}
	cancel  context.CancelFunc
	// waiters counts the callers still waiting; guarded by flights.mu.
	waiters int
	resp    *http.Response
	err     error
}

// flights are an upstream's shared calls in flight. Not
// golang.org/x/sync/singleflight: a reader here joins a call only under a
// condition on when it was sent, a newer call replaces an older one for
// new readers while the older serves its own, and a call is cancelled when
// its last reader leaves.
type flights struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]*flight
}

// shareable reports whether req may share a call (see the rules above).
func (s *Sender) shareable(req *http.Request, body []byte) (time.Time, bool) {
	if !s.up.Shared || s.cfg.noSharing || req.Method != http.MethodGet || body != nil {
		return time.Time{}, false
	}
	return SharesFrom(req.Context())
}

// callKey is the digest of what req sends: method, URL, host and every
// header's values, names in order, each part prefixed by its length so
// that no two requests write the same bytes.
func callKey(req *http.Request) [sha256.Size]byte {
	var buf [1024]byte
	b := buf[:0]
	str := func(v string) {
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	str(req.Method)
	str(req.URL.Scheme)
	str(req.URL.Opaque)
	if u := req.URL.User; u != nil {
		str("@" + u.String()) // sent as a header: the call's credential
	} else {
		str("")
	}
	str(req.URL.Host)
	str(req.URL.EscapedPath())
	str(req.URL.RawQuery)
	str(req.Host)
	var few [8]string
	names := few[:0]
	for name := range req.Header {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		str(name)
		b = binary.AppendUvarint(b, uint64(len(req.Header[name])))
		for _, v := range req.Header[name] {
			str(v)
		}
	}
	return sha256.Sum256(b)
}

// share answers req with a call in flight that it may share, or with a
// call it begins and others may share. The answer is req's own copy: its
// body reads from the start.
func (s *Sender) share(req *http.Request, from time.Time) (*http.Response, error) {
	ctx := req.Context()
	key := callKey(req)
	s.flights.mu.Lock()
	if s.flights.m == nil {
		s.flights.m = map[[sha256.Size]byte]*flight{}
	}
	now := time.Now()
	prev := s.flights.m[key]
	if f := prev; f != nil && (f.begun.IsZero() || !f.begun.Before(from)) {
		f.waiters++
		f.arrived = now
		s.flights.mu.Unlock()
		s.sharedAnswers.Add(1)
		select {
		case <-f.done:
			return f.answer()
		case <-ctx.Done():
			s.leave(f)
			return nil, ctx.Err()
		}
	}
	// Begin a call: one begun before from, still in flight, goes on for
	// the callers it has and is no longer joined. Other readers join this
	// one until it is sent. When the read is in demand (its last reader
	// came less than a share window ago), it waits the window for more
	// first; a read asked for less often goes at once, as waiting would
	// add latency and gather nobody.
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.timeout)
	f := &flight{key: key, arrived: now, done: make(chan struct{}), cancel: cancel, waiters: 1}
	inDemand := prev != nil && now.Sub(prev.arrived) < s.cfg.shareWindow
	s.flights.m[key] = f
	s.flights.mu.Unlock()

	stop := context.AfterFunc(ctx, func() { s.leave(f) })
	if inDemand && s.cfg.shareWindow > 0 {
		_ = s.wait(callCtx, s.cfg.shareWindow)
	}
	s.flights.mu.Lock()
	f.begun = time.Now()
	s.flights.mu.Unlock()
	f.resp, f.err = s.exchange(callCtx, req, nil)
	stop()
	s.flights.mu.Lock()
	if s.flights.m[key] == f {
		delete(s.flights.m, key)
	}
	s.flights.mu.Unlock()
	close(f.done)
	cancel()
	if err := ctx.Err(); err != nil {
		return nil, err // this caller gave up while the call served others
	}
	return f.answer()
}

// leave stops a caller's wait for f; the last to leave cancels the call.
func (s *Sender) leave(f *flight) {
	s.flights.mu.Lock()
	defer s.flights.mu.Unlock()
	f.waiters--
	if f.waiters > 0 {
		return
	}
	if s.flights.m[f.key] == f {
		delete(s.flights.m, f.key)
	}
	f.cancel()
}

// answer is a copy of f's outcome for one caller: the answer's header is
// shared (callers only read it), its body is a reader of its own over the
// same bytes.
func (f *flight) answer() (*http.Response, error) {
	if f.err != nil {
		return nil, f.err
	}
	r := *f.resp
	if b, ok := f.resp.Body.(*readBody); ok {
		r.Body = &readBody{Reader: bytes.NewReader(b.raw), raw: b.raw}
	}
	return &r, nil
}

// SharedAnswers counts the calls answered by sharing another caller's call
// instead of going upstream.
func (s *Sender) SharedAnswers() uint64 { return s.sharedAnswers.Load() }
