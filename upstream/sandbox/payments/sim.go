// Package payments emulates the payments upstream interface
// (shared/spec/000_de95282c99b521fa.txt) for the sandbox: customers, stored
// card methods, orders and their events, webhooks with the spec's retry
// schedule, events, individual onboarding and pending actions.
package payments

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
)

// Options configures a Sim.
type Options struct {
	Logger     *slog.Logger
	RetryUnit  time.Duration
	HTTPClient *http.Client
}

// Sim is the stateful payments emulator.
type Sim struct {
	opts Options
}

// New returns an empty emulator.
func New(opts Options) *Sim { return &Sim{opts: opts} }

// Routes registers the payments routes; the caller mounts them at /payments.
func (s *Sim) Routes(r chi.Router) {}

// Control registers the payments part of the control API under /_sandbox.
func (s *Sim) Control(r chi.Router) {}

// Seed loads the demo merchant's customers, methods and orders.
func (s *Sim) Seed() {}

// Close stops webhook delivery.
func (s *Sim) Close() {}
