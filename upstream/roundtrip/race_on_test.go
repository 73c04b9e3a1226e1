//go:build race

package roundtrip

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts that rely on a pool are not asserted under it.
const raceEnabled = true
