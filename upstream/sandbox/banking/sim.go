// Package banking emulates the banking upstream interface
// (shared/spec/001_6c54d25638069068.txt) for the sandbox, under /banking.
package banking

import (
	"log/slog"

	"github.com/go-chi/chi/v5"
)

// Options configures a Sim.
type Options struct {
	Logger *slog.Logger
}

// Sim is the stateful banking emulator.
type Sim struct {
	opts Options
}

// New returns an empty emulator.
func New(opts Options) *Sim { return &Sim{opts: opts} }

// Routes registers the banking routes; the caller mounts them at /banking.
func (s *Sim) Routes(r chi.Router) {}

// Control registers the banking part of the control API under /_sandbox.
func (s *Sim) Control(r chi.Router) {}

// Seed loads the demo corporation and its people.
func (s *Sim) Seed() {}

// Close stops background work.
func (s *Sim) Close() {}
