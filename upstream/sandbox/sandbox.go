// Package sandbox is a faithful, stateful emulator of the two upstream
// interfaces fingraph fronts: the payments interface under /payments and the
// banking interface under /banking, on one listener, plus a control API under
// /_sandbox that tests and demos use to read outboxes, fire events, count calls
// and inject faults.
//
// The sandbox is written from the specifications alone and shares no code with
// the upstream clients, so a misreading on either side shows up as a failing
// test rather than passing on both.
package sandbox

import (
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// Config tunes a Sandbox. The zero value is usable.
type Config struct {
	// Logger receives the sandbox's own log lines; nil discards them.
	Logger *slog.Logger
	// RetryUnit scales the webhook retry schedule (1, 2, 4, 8, 16 units).
	// The spec's unit is one second; tests shrink it.
	RetryUnit time.Duration
	// HTTPClient sends webhooks; nil uses a client with a short timeout.
	HTTPClient *http.Client
	// TokenGrace is how long the banking emulator keeps accepting a
	// superseded access token; its default (10 s) when zero. Tests shrink
	// it to prove that refreshed tokens are written back.
	TokenGrace time.Duration
	// Strict serves only what the specs show (-sandbox-strict): no event
	// or individuals listing, no order-token JWKS, no meta[offset] paging,
	// no route aliases. Integration tests run against it to prove they need
	// nothing the real upstreams may lack.
	Strict bool
}

// Sandbox emulates both upstream interfaces. It is an http.Handler.
type Sandbox struct {
	mux      *chi.Mux
	Payments *paymentsim.Sim
	Banking  *bankingsim.Sim

	mu     sync.Mutex
	calls  map[string]int
	faults map[string]Fault
}

// Fault makes matching requests slower or fail. Route is "METHOD /pattern"
// (the chi pattern, as /_sandbox/stats reports it, or a literal path) or "*".
type Fault struct {
	Route string `json:"route"`
	// LatencyMS delays every matching call; with LatencyMaxMS the delay is
	// drawn uniformly from [LatencyMS, LatencyMaxMS] per call.
	LatencyMS    int `json:"latency_ms"`
	LatencyMaxMS int `json:"latency_max_ms,omitempty"`
	// ErrorRate is the share of calls answered with Status (503 when zero)
	// in the upstream's error shape instead of reaching the route.
	ErrorRate float64 `json:"error_rate"`
	Status    int     `json:"status,omitempty"`
	// DropRate is the share of calls whose connection is closed without an
	// answer, as a crashed upstream or a cut network would.
	DropRate float64 `json:"drop_rate,omitempty"`
}

// idle reports whether f injects nothing (posting it removes the fault).
func (f Fault) idle() bool {
	return f.LatencyMS == 0 && f.LatencyMaxMS == 0 && f.ErrorRate == 0 && f.DropRate == 0
}

// check explains what is wrong with f, or "".
func (f Fault) check() string {
	switch {
	case f.Route == "":
		return `route is required ("METHOD /path" or "*")`
	case f.ErrorRate < 0 || f.ErrorRate > 1, f.DropRate < 0 || f.DropRate > 1:
		return "error_rate and drop_rate are shares in [0,1]"
	case f.LatencyMS < 0 || (f.LatencyMaxMS != 0 && f.LatencyMaxMS < f.LatencyMS):
		return "latency_ms >= 0, and latency_max_ms (random latency) >= latency_ms"
	case f.Status != 0 && (f.Status < 400 || f.Status > 599):
		return "status is an error status, 400 to 599"
	}
	return ""
}

// Validate says what is wrong with f, as SetFault would refuse it, so that
// faults given as settings are checked before a sandbox exists.
func (f Fault) Validate() error {
	f.Route = strings.TrimSpace(f.Route)
	if msg := f.check(); msg != "" {
		return errors.New(msg)
	}
	return nil
}

// SetFault installs f (or removes the fault of its route when f is idle);
// the control API and the -sandbox-faults setting both use it.
func (s *Sandbox) SetFault(f Fault) error {
	f.Route = strings.TrimSpace(f.Route)
	if msg := f.check(); msg != "" {
		return errors.New(msg)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.idle() {
		delete(s.faults, f.Route)
	} else {
		s.faults[f.Route] = f
	}
	return nil
}

// New returns a sandbox with empty state; call Seed for the demo data.
func New(cfg Config) *Sandbox {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RetryUnit == 0 {
		cfg.RetryUnit = time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 5 * time.Second}
	}
	s := &Sandbox{
		mux:    chi.NewMux(),
		calls:  map[string]int{},
		faults: map[string]Fault{},
		Payments: paymentsim.New(paymentsim.Options{
			Logger:     cfg.Logger.With("sandbox", "payments"),
			RetryUnit:  cfg.RetryUnit,
			HTTPClient: cfg.HTTPClient,
			Strict:     cfg.Strict,
		}),
		Banking: bankingsim.New(bankingsim.Options{
			Logger:     cfg.Logger.With("sandbox", "banking"),
			TokenGrace: cfg.TokenGrace,
			Strict:     cfg.Strict,
		}),
	}
	s.routes()
	return s
}

func (s *Sandbox) routes() {
	s.mux.Group(func(r chi.Router) {
		r.Use(s.countAndFault)
		r.Route("/payments", s.Payments.Routes)
		r.Route("/banking", s.Banking.Routes)
	})

	s.mux.Route("/_sandbox", func(r chi.Router) {
		r.Get("/stats", s.getStats)
		r.Post("/stats/reset", s.resetStats)
		r.Get("/faults", s.getFaults)
		r.Post("/faults", s.postFault)
		r.Delete("/faults", s.clearFaults)
		r.Post("/webhooks/pause", s.pauseWebhooks)
		r.Post("/webhooks/resume", s.resumeWebhooks)
		s.Payments.Control(r)
		s.Banking.Control(r)
	})
}

// Seed loads the demo data, the same on every start.
func (s *Sandbox) Seed() {
	s.Payments.Seed()
	s.Banking.Seed()
}

// Close stops background work (webhook delivery).
func (s *Sandbox) Close() {
	s.Payments.Close()
	s.Banking.Close()
}

// ServeHTTP implements http.Handler.
func (s *Sandbox) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Calls returns a copy of the per-route call counters.
func (s *Sandbox) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.calls))
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

// countAndFault counts each upstream call under its route pattern and applies
// any fault configured for it, before the route's handler runs.
func (s *Sandbox) countAndFault(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pattern := s.mux.Find(chi.NewRouteContext(), r.Method, r.URL.Path)
		if pattern == "" {
			pattern = r.URL.Path
		}
		key := r.Method + " " + pattern
		s.mu.Lock()
		s.calls[key]++
		f, ok := s.faults[key]
		if !ok {
			f, ok = s.faults[r.Method+" "+r.URL.Path]
		}
		if !ok {
			f, ok = s.faults["*"]
		}
		s.mu.Unlock()
		if ok {
			if d := f.latency(); d > 0 {
				select {
				case <-time.After(d):
				case <-r.Context().Done():
					return
				}
			}
			if f.DropRate > 0 && rand.Float64() < f.DropRate {
				drop(w)
				return
			}
			if f.ErrorRate > 0 && rand.Float64() < f.ErrorRate {
				status := f.Status
				if status == 0 {
					status = http.StatusServiceUnavailable
				}
				writeInjected(w, r, status)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// latency is this call's delay: fixed, or uniform in [min, max].
func (f Fault) latency() time.Duration {
	ms := f.LatencyMS
	if f.LatencyMaxMS > f.LatencyMS {
		ms += rand.IntN(f.LatencyMaxMS - f.LatencyMS + 1)
	}
	return time.Duration(ms) * time.Millisecond
}

// drop closes the connection without an answer.
func drop(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	// Not hijackable (HTTP/2, a recorder): abort the handler, which the
	// server turns into a reset stream or a closed connection.
	panic(http.ErrAbortHandler)
}

// writeInjected answers an injected failure in the error shape of the
// upstream the request went to, so a client (and the contract validator)
// sees what that upstream's errors look like.
func writeInjected(w http.ResponseWriter, r *http.Request, status int) {
	const msg = "fault injected by the sandbox control API"
	if strings.HasPrefix(r.URL.Path, "/banking/") {
		writeJSON(w, status, map[string]any{"errors": []any{map[string]any{"field": "", "message": msg}}})
		return
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": "injected_fault", "message": msg}})
}

func (s *Sandbox) getStats(w http.ResponseWriter, _ *http.Request) {
	calls := s.Calls()
	total := 0
	for _, n := range calls {
		total += n
	}
	writeJSON(w, http.StatusOK, map[string]any{"routes": calls, "total": total})
}

func (s *Sandbox) resetStats(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	s.calls = map[string]int{}
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Sandbox) getFaults(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	list := make([]Fault, 0, len(s.faults))
	for _, f := range s.faults {
		list = append(list, f)
	}
	s.mu.Unlock()
	sort.Slice(list, func(i, j int) bool { return list[i].Route < list[j].Route })
	writeJSON(w, http.StatusOK, list)
}

// postFault sets the fault of one route; a fault with no latency and no error
// rate removes it.
func (s *Sandbox) postFault(w http.ResponseWriter, r *http.Request) {
	var f Fault
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": "invalid_json", "message": err.Error()}})
		return
	}
	if err := s.SetFault(f); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": "invalid_fault", "message": err.Error()}})
		return
	}
	f.Route = strings.TrimSpace(f.Route)
	writeJSON(w, http.StatusOK, f)
}

// pauseWebhooks holds every payments webhook delivery until resume.
func (s *Sandbox) pauseWebhooks(w http.ResponseWriter, _ *http.Request) {
	s.Payments.PauseWebhooks()
	writeJSON(w, http.StatusOK, map[string]any{"paused": true})
}

func (s *Sandbox) resumeWebhooks(w http.ResponseWriter, _ *http.Request) {
	s.Payments.ResumeWebhooks()
	writeJSON(w, http.StatusOK, map[string]any{"paused": false})
}

func (s *Sandbox) clearFaults(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	s.faults = map[string]Fault{}
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
