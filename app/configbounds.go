package app

import (
	"fmt"
	"time"
)

// Upper bounds of the settings that size what a client can make the
// gateway spend: a value past its bound refuses start-up with one line
// naming the setting. They are generous (the benchmarks' settings pass);
// they catch a typo such as 100000h, not a deliberate choice.

// limitMax bounds each FINGRAPH_LIMITS entry (bodyBytes has its own,
// maxBodyBytes).
var limitMax = map[string]int64{
	"tokens": 100_000, "fields": 100_000, "depth": 100, "introspectionDepth": 100,
	"aliases": 10_000, "rootFields": 1_000, "sameName": 1_000, "directives": 10_000,
	"complexity": 1_000_000, "socketsPerAddress": 100_000, "anonymousPerAddress": 100_000,
	"socketsPerSession": 100_000, "operationsPerSocket": 1_000,
	"uploadsPerAddress": 1_000, "uploadsPerSession": 1_000, "uploadsPerTenant": 1_000, "uploads": 1_000,
	"uploadSpoolBytes": 64 << 30,
}

// checkLimitMax refuses a FINGRAPH_LIMITS entry past its bound.
func checkLimitMax(name string, n int) error {
	if max, ok := limitMax[name]; ok && int64(n) > max {
		return fmt.Errorf("FINGRAPH_LIMITS: %s=%d is more than its upper bound %d", name, n, max)
	}
	return nil
}

// Bounds of the durations and rates that keep a client's hold on the
// gateway short.
const (
	maxSessionTTL       = 30 * 24 * time.Hour
	maxReadTimeout      = 10 * time.Minute
	maxOperationTimeout = 10 * time.Minute
	maxPublicRateLimit  = 1_000_000
	maxWebhookRateLimit = 100_000
	maxSandboxGrace     = time.Hour
)

// checkUpperBounds refuses a setting past its upper bound.
func (c Config) checkUpperBounds() error {
	switch {
	case c.SessionTTL > maxSessionTTL:
		return fmt.Errorf("FINGRAPH_SESSION_TTL: %s is more than its upper bound %s", c.SessionTTL, maxSessionTTL)
	case c.ReadTimeout > maxReadTimeout:
		return fmt.Errorf("FINGRAPH_READ_TIMEOUT: %s is more than its upper bound %s", c.ReadTimeout, maxReadTimeout)
	case c.OperationTimeout > maxOperationTimeout:
		return fmt.Errorf("FINGRAPH_OPERATION_TIMEOUT: %s is more than its upper bound %s", c.OperationTimeout, maxOperationTimeout)
	case c.PublicRateLimit > maxPublicRateLimit:
		return fmt.Errorf("FINGRAPH_PUBLIC_RATE_LIMIT: %d is more than its upper bound %d a minute", c.PublicRateLimit, maxPublicRateLimit)
	case c.WebhookRateLimit > maxWebhookRateLimit:
		return fmt.Errorf("FINGRAPH_WEBHOOK_RATE_LIMIT: %g is more than its upper bound %d a second", c.WebhookRateLimit, maxWebhookRateLimit)
	case c.SandboxTokenGrace > maxSandboxGrace:
		return fmt.Errorf("FINGRAPH_SANDBOX_TOKEN_GRACE: %s is more than its upper bound %s", c.SandboxTokenGrace, maxSandboxGrace)
	}
	return nil
}
