package app

import (
	"log/slog"
	"runtime"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// gcPercent is the gateway's GOGC unless the environment sets one. The
// gateway's live heap is small (sessions, the query cache, JetStream's
// buffers) and every request leaves short-lived garbage, so at Go's default
// of 100 the collector runs many times a second; between requests (every
// loader window is one) its idle mark workers take the otherwise idle cores
// for it. At 400 it runs a quarter as often; what that saves, and when it
// does not: docs/performance.md, "Settings chosen by measurement".
const gcPercent = 400

// memoryLimitRatio is the share of the container's memory (or, outside a
// container, the machine's) that GOMEMLIMIT is set to unless the environment
// sets it: the soft limit at which the collector works harder whatever
// gcPercent says, so the higher percent cannot take a replica into its
// container's out-of-memory kill.
const memoryLimitRatio = 0.9

// tuneRuntime sets the collector for a gateway process: gcPercent and a
// memory limit from the cgroup (automemlimit), each only where the operator
// has not set GOGC or GOMEMLIMIT. It returns what is in force.
//
// Unless profiles are served (FINGRAPH_PPROF_ADDR), it also turns off the
// runtime's sampling of allocations for heap profiles, which nothing would
// read: at Go's default rate it unwinds a stack for every 512 KB allocated,
// 1.6% of the gateway's CPU under load (docs/performance.md, "Settings
// chosen by measurement").
func tuneRuntime(getenv func(string) string, logger *slog.Logger, profiles bool) (percent int, limit int64) {
	if !profiles {
		runtime.MemProfileRate = 0
	}
	percent = debug.SetGCPercent(-1)
	if getenv("GOGC") == "" {
		percent = gcPercent
	}
	debug.SetGCPercent(percent)
	limit, err := memlimit.Set(
		memlimit.WithRatio(memoryLimitRatio),
		memlimit.WithProvider(memlimit.ApplyFallback(memlimit.FromCgroup, memlimit.FromSystem)),
	)
	if err != nil {
		logger.Warn("runtime: no memory limit set", "error", err)
	}
	logger.Debug("runtime: collector", "gogc", percent, "gomemlimit", limit)
	return percent, limit
}
