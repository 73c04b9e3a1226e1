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
	Route     string  `json:"route"`
	LatencyMS int     `json:"latency_ms"`
	ErrorRate float64 `json:"error_rate"`
	// Status is the status of an injected failure; 503 when zero.
	Status int `json:"status,omitempty"`
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
			if f.LatencyMS > 0 {
				select {
				case <-time.After(time.Duration(f.LatencyMS) * time.Millisecond):
				case <-r.Context().Done():
					return
				}
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
	f.Route = strings.TrimSpace(f.Route)
	if f.Route == "" || f.ErrorRate < 0 || f.ErrorRate > 1 || f.LatencyMS < 0 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
			"code": "invalid_fault", "message": `route is required ("METHOD /path" or "*"), error_rate in [0,1], latency_ms >= 0`,
		}})
		return
	}
	s.mu.Lock()
	if f.LatencyMS == 0 && f.ErrorRate == 0 {
		delete(s.faults, f.Route)
	} else {
		s.faults[f.Route] = f
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, f)
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
