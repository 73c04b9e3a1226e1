package app

import (
	"io"
	"strings"
	"testing"
)

// Each setting that sizes what a client can make the gateway spend has an
// upper bound: an absurd value refuses start-up with one line naming the
// setting, and the largest accepted value starts.
func TestAbsurdSettingsRefuseStartUp(t *testing.T) {
	for _, tc := range []struct{ env, value, names string }{
		{"FINGRAPH_LIMITS", "uploadSpoolBytes=2000000000000", "uploadSpoolBytes"},
		{"FINGRAPH_LIMITS", "uploads=100000", "uploads"},
		{"FINGRAPH_LIMITS", "operationsPerSocket=1000000", "operationsPerSocket"},
		{"FINGRAPH_LIMITS", "complexity=2000000000", "complexity"},
		{"FINGRAPH_SESSION_TTL", "100000h", "FINGRAPH_SESSION_TTL"},
		{"FINGRAPH_READ_TIMEOUT", "100000h", "FINGRAPH_READ_TIMEOUT"},
		{"FINGRAPH_OPERATION_TIMEOUT", "100000h", "FINGRAPH_OPERATION_TIMEOUT"},
		{"FINGRAPH_PUBLIC_RATE_LIMIT", "2000000000", "FINGRAPH_PUBLIC_RATE_LIMIT"},
		{"FINGRAPH_WEBHOOK_RATE_LIMIT", "1e12", "FINGRAPH_WEBHOOK_RATE_LIMIT"},
		{"FINGRAPH_SANDBOX_TOKEN_GRACE", "100000h", "FINGRAPH_SANDBOX_TOKEN_GRACE"},
	} {
		_, err := ParseConfig(nil, env(map[string]string{tc.env: tc.value}), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.names) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s=%s: %v, want one line naming %s", tc.env, tc.value, err, tc.names)
		}
	}
	for _, ok := range []map[string]string{
		{"FINGRAPH_LIMITS": "socketsPerAddress=20000,socketsPerSession=20000,uploadSpoolBytes=68719476736"},
		{"FINGRAPH_PUBLIC_RATE_LIMIT": "1000000", "FINGRAPH_SESSION_TTL": "720h", "FINGRAPH_READ_TIMEOUT": "10m"},
	} {
		if _, err := ParseConfig(nil, env(ok), io.Discard); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
}
