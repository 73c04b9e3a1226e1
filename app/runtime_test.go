package app

import (
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTuneRuntimeSetsTheCollectorUnlessTheEnvironmentDoes(t *testing.T) {
	prevPercent, prevLimit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(prevPercent); debug.SetMemoryLimit(prevLimit) })
	quiet := slog.New(slog.DiscardHandler)

	unsetEnv(t, "GOMEMLIMIT")
	debug.SetGCPercent(100)
	percent, _ := tuneRuntime(func(string) string { return "" }, quiet, true)
	assert.Equal(t, gcPercent, percent)
	assert.Equal(t, gcPercent, debug.SetGCPercent(gcPercent), "in force")

	// An operator's GOGC (already applied by the Go runtime) stays.
	debug.SetGCPercent(150)
	env := map[string]string{"GOGC": "150"}
	percent, _ = tuneRuntime(func(k string) string { return env[k] }, quiet, true)
	assert.Equal(t, 150, percent)
	assert.Equal(t, 150, debug.SetGCPercent(150), "in force")
}

func TestTuneRuntimeSetsAMemoryLimitFromTheMachine(t *testing.T) {
	prevPercent, prevLimit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(prevPercent); debug.SetMemoryLimit(prevLimit) })
	debug.SetMemoryLimit(math.MaxInt64)
	// GOMEMLIMIT unset (LookupEnv must not find it): the limit comes from
	// the cgroup, or else from the machine's memory.
	unsetEnv(t, "GOMEMLIMIT")
	unsetEnv(t, "AUTOMEMLIMIT")
	_, limit := tuneRuntime(func(string) string { return "" }, slog.New(slog.DiscardHandler), true)
	assert.Greater(t, limit, int64(0))
	assert.Less(t, limit, int64(math.MaxInt64), "a finite limit")
	assert.Equal(t, limit, debug.SetMemoryLimit(-1), "in force")
}

// Allocations are sampled for heap profiles only when profiles are served.
func TestTuneRuntimeSamplesAllocationsOnlyForProfiles(t *testing.T) {
	prevPercent, prevLimit, prevRate := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1), runtime.MemProfileRate
	t.Cleanup(func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
		runtime.MemProfileRate = prevRate
	})
	runtime.MemProfileRate = 512 << 10
	tuneRuntime(func(string) string { return "" }, slog.New(slog.DiscardHandler), true)
	assert.Equal(t, 512<<10, runtime.MemProfileRate, "profiles served: sampling stays")
	tuneRuntime(func(string) string { return "" }, slog.New(slog.DiscardHandler), false)
	assert.Equal(t, 0, runtime.MemProfileRate, "no profiles: no sampling")
}

// unsetEnv removes key from the environment for the test (t.Setenv can only
// set it, and automemlimit asks whether it is present at all).
func unsetEnv(t *testing.T, key string) {
	t.Helper()
	t.Setenv(key, "") // registers the restore, and forbids t.Parallel
	_ = os.Unsetenv(key)
}
