package app

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/gqlhttp"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// realUpstreams is the smallest valid configuration with real upstreams.
func realUpstreams() map[string]string {
	return map[string]string{
		"FINGRAPH_PAYMENTS_URL":          "https://payments.example/",
		"FINGRAPH_BANKING_URL":           "https://banking.example/",
		"FINGRAPH_PAYMENTS_PRIVATE_KEY":  "sk_live",
		"FINGRAPH_PAYMENTS_PUBLIC_KEY":   "pk_live",
		"FINGRAPH_PAYMENTS_ACCESS_TOKEN": "at_live",
	}
}

func TestParseConfigDefaults(t *testing.T) {
	c, err := ParseConfig(nil, env(nil), io.Discard)
	require.NoError(t, err)
	assert.Equal(t, ModeSandbox, c.Mode, "no upstream URL runs the sandbox")
	assert.Equal(t, ":8080", c.Addr)
	assert.Equal(t, "text", c.LogFormat)
	assert.Equal(t, slog.LevelInfo, c.LogLevel)
	assert.Equal(t, "v2", c.BankingVersion)
	assert.Equal(t, 12*time.Hour, c.SessionTTL)
	assert.Equal(t, []string{"STAFF", "API_CLIENT"}, c.PaymentsOperators)
	assert.Equal(t, []string{"c0000000-0000-4000-8000-000000000001"}, c.PaymentsCorporations, "the sandbox's merchant is its demo corporation")
	assert.Equal(t, 60, c.PublicRateLimit)
	assert.Equal(t, 10*time.Second, c.SandboxTokenGrace)
	assert.Equal(t, 30*time.Second, c.ReconcileInterval)
	assert.Equal(t, 10*time.Second, c.ShutdownTimeout)
	assert.Equal(t, 10*time.Second, c.UpstreamTimeout)
	assert.Equal(t, time.Millisecond, c.ShareWindow)
	assert.False(t, c.NoSharing, "queries share concurrent reads unless told not to")
	assert.True(t, c.ShareQueries, "identical queries share an execution unless told not to")
	assert.True(t, c.RegisterWebhook, "sandbox mode registers its own webhook")
	assert.True(t, c.SandboxAnonymous, "sandbox mode answers a first query without sign-in")
	assert.Empty(t, c.AllowedOrigins)

	real, err := ParseConfig(nil, env(realUpstreams()), io.Discard)
	require.NoError(t, err)
	assert.Equal(t, ModeUpstreams, real.Mode)
	assert.False(t, real.RegisterWebhook, "with real upstreams registration is asked for, never assumed")
	assert.Empty(t, real.PaymentsCorporations, "with real upstreams the merchant's corporation is named, never assumed")
	assert.False(t, real.SandboxAnonymous, "with real upstreams every request signs in")

	// A standalone sandbox as the upstream: its merchant key names its
	// merchant, the demo corporation, as in sandbox mode.
	standalone := realUpstreams()
	standalone["FINGRAPH_PAYMENTS_PRIVATE_KEY"] = "sk_sandbox_demo"
	sb, err := ParseConfig(nil, env(standalone), io.Discard)
	require.NoError(t, err)
	assert.Equal(t, []string{"c0000000-0000-4000-8000-000000000001"}, sb.PaymentsCorporations, "the sandbox's key operates the sandbox's merchant")
}

// TestParseConfigReadsEveryVariable sets every FINGRAPH_* variable to a
// value other than its default and checks where each one lands.
func TestParseConfigReadsEveryVariable(t *testing.T) {
	e := everyVariable()
	c, err := ParseConfig(nil, env(e), io.Discard)
	require.NoError(t, err)
	checks := map[string]struct{ got, want any }{
		"FINGRAPH_ADDR":                  {c.Addr, "127.0.0.1:9000"},
		"FINGRAPH_PAYMENTS_URL":          {c.PaymentsURL, "https://payments.example/"},
		"FINGRAPH_BANKING_URL":           {c.BankingURL, "https://banking.example/"},
		"FINGRAPH_PAYMENTS_PRIVATE_KEY":  {c.PaymentsPrivate, "sk_live"},
		"FINGRAPH_PAYMENTS_PUBLIC_KEY":   {c.PaymentsPublic, "pk_live"},
		"FINGRAPH_PAYMENTS_ACCESS_TOKEN": {c.PaymentsAccess, "at_live"},
		"FINGRAPH_NATS_URL":              {c.NATSURL, "nats://nats.internal:4222"},
		"FINGRAPH_NATS_REPLICAS":         {c.NATSReplicas, 3},
		"FINGRAPH_SHUTDOWN_DRAIN":        {c.ShutdownDrain, 2 * time.Second},
		"FINGRAPH_DATA_DIR":              {c.DataDir, "/var/lib/fingraph"},
		"FINGRAPH_PUBLIC_URL":            {c.PublicURL, "https://gateway.example"},
		"FINGRAPH_SANDBOX_ADDR":          {c.SandboxAddr, "127.0.0.1:9191"},
		"FINGRAPH_LOG_FORMAT":            {c.LogFormat, "json"},
		"FINGRAPH_LOG_LEVEL":             {c.LogLevel, slog.LevelDebug},
		"FINGRAPH_OTLP_ENDPOINT":         {c.OTLPEndpoint, "http://collector:4318"},
		"FINGRAPH_BANKING_VERSION":       {c.BankingVersion, "v3"},
		"FINGRAPH_SESSION_TTL":           {c.SessionTTL, 45 * time.Minute},
		"FINGRAPH_PAYMENTS_OPERATORS":    {c.PaymentsOperators, []string{"STAFF", "PERSON", "INTRODUCER"}},
		"FINGRAPH_PAYMENTS_CORPORATIONS": {c.PaymentsCorporations, []string{"corp-a", "corp-b"}},
		"FINGRAPH_PUBLIC_RATE_LIMIT":     {c.PublicRateLimit, 7},
		"FINGRAPH_WEBHOOK_RATE_LIMIT":    {c.WebhookRateLimit, 20000.0},
		"FINGRAPH_ENRICHER_WORKERS":      {c.EnricherWorkers, 3},
		"FINGRAPH_ENRICHER_BUSY_WORKERS": {c.EnricherBusyWorkers, 2},
		"FINGRAPH_SANDBOX_TOKEN_GRACE":   {c.SandboxTokenGrace, 250 * time.Millisecond},
		"FINGRAPH_REGISTER_WEBHOOK":      {c.RegisterWebhook, true},
		"FINGRAPH_SANDBOX_ANONYMOUS":     {c.SandboxAnonymous, false},
		"FINGRAPH_SANDBOX_STRICT":        {c.SandboxStrict, false},
		"FINGRAPH_SANDBOX_FAULTS":        {c.SandboxFaults, SandboxFaults{{Route: "*", LatencyMS: 5, LatencyMaxMS: 9, DropRate: 0.5}}},
		"FINGRAPH_RECONCILE_INTERVAL":    {c.ReconcileInterval, time.Duration(0)},
		"FINGRAPH_ALLOWED_ORIGINS":       {c.AllowedOrigins, []string{"https://app.example", "http://localhost:3000"}},
		"FINGRAPH_INTROSPECTION":         {c.Introspection, true},
		"FINGRAPH_READ_TIMEOUT":          {c.ReadTimeout, 5 * time.Second},
		"FINGRAPH_OPERATION_TIMEOUT":     {c.OperationTimeout, 12 * time.Second},
		"FINGRAPH_UPSTREAM_TIMEOUT":      {c.UpstreamTimeout, 7 * time.Second},
		"FINGRAPH_LOADER_WAIT":           {c.LoaderWait, 250 * time.Microsecond},
		"FINGRAPH_SHARE_WINDOW":          {c.ShareWindow, 3 * time.Millisecond},
		"FINGRAPH_SHARE_QUERIES":         {c.ShareQueries, false},
		"FINGRAPH_PAYMENTS_TIMEOUT":      {c.PaymentsTimeout, 8 * time.Second},
		"FINGRAPH_DOWNLOAD_KEY":          {c.DownloadKey, "download-secret"},
		"FINGRAPH_METRICS_ADDR":          {c.MetricsAddr, "127.0.0.1:9100"},
		"FINGRAPH_TRUSTED_DOCUMENTS":     {c.TrustedDocuments, "/etc/fingraph/manifest.json"},
		"FINGRAPH_LIMITS":                {[]any{c.Limits.MaxDepth, c.Limits.MaxFields, c.Limits.MaxBodyBytes, c.Limits.MaxAliases, c.Limits.MaxSocketsPerSession}, []any{8, 600, int64(65536), gqlhttp.DefaultLimits.MaxAliases, 40}},
		"FINGRAPH_TLS_CERT":              {c.TLSCert, "/etc/fingraph/cert.pem"},
		"FINGRAPH_TLS_KEY":               {c.TLSKey, "/etc/fingraph/key.pem"},
		"FINGRAPH_TRUSTED_PROXIES":       {c.TrustedProxies, TrustedProxies{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32")}},
		"FINGRAPH_PPROF_ADDR":            {c.PprofAddr, "127.0.0.1:6060"},
		"FINGRAPH_BANKING_TIMEOUT":       {c.BankingTimeout, 9 * time.Second},
		"FINGRAPH_BANK_POLL_INTERVAL":    {c.BankPollInterval, 3 * time.Second},
		"FINGRAPH_MODE":                  {c.Mode, ModeUpstreams},
		"FINGRAPH_UPLOAD_DIR":            {c.UploadDir, "/srv/uploads"},
	}
	for name, ch := range checks {
		assert.Equal(t, ch.want, ch.got, name)
	}
	assert.ElementsMatch(t, keys(e), keys(checks), "every variable set is checked")
	var current []string
	for _, v := range documentedVariables(t) {
		if !slices.Contains(oldVariables(), v) {
			current = append(current, v)
		}
	}
	assert.ElementsMatch(t, current, keys(checks), "every variable the usage names is checked, old names apart (TestBankPollInterval)")
}

// oldVariables are the old names of settings, still read.
func oldVariables() []string {
	var c Config
	var old []string
	for _, s := range c.settings() {
		if s.renamed != "" {
			old = append(old, s.env)
		}
	}
	return old
}

// everyVariable sets every FINGRAPH_* variable to a valid value other than
// its default.
func everyVariable() map[string]string {
	e := realUpstreams()
	for k, v := range map[string]string{
		"FINGRAPH_ADDR":                  "127.0.0.1:9000",
		"FINGRAPH_NATS_URL":              "nats://nats.internal:4222",
		"FINGRAPH_NATS_REPLICAS":         "3",
		"FINGRAPH_SHUTDOWN_DRAIN":        "2s",
		"FINGRAPH_DATA_DIR":              "/var/lib/fingraph",
		"FINGRAPH_PUBLIC_URL":            "https://gateway.example",
		"FINGRAPH_SANDBOX_ADDR":          "127.0.0.1:9191",
		"FINGRAPH_LOG_FORMAT":            "json",
		"FINGRAPH_LOG_LEVEL":             "debug",
		"FINGRAPH_OTLP_ENDPOINT":         "http://collector:4318",
		"FINGRAPH_BANKING_VERSION":       "v3",
		"FINGRAPH_SESSION_TTL":           "45m",
		"FINGRAPH_PAYMENTS_OPERATORS":    " staff, person ,introducer",
		"FINGRAPH_PAYMENTS_CORPORATIONS": " corp-a ,corp-b",
		"FINGRAPH_PUBLIC_RATE_LIMIT":     "7",
		"FINGRAPH_WEBHOOK_RATE_LIMIT":    "20000",
		"FINGRAPH_ENRICHER_WORKERS":      "3",
		"FINGRAPH_ENRICHER_BUSY_WORKERS": "2",
		"FINGRAPH_SANDBOX_TOKEN_GRACE":   "250ms",
		"FINGRAPH_REGISTER_WEBHOOK":      "true",
		"FINGRAPH_SANDBOX_ANONYMOUS":     "false",
		"FINGRAPH_SANDBOX_STRICT":        "false",
		"FINGRAPH_SANDBOX_FAULTS":        `[{"route": "*", "latency_ms": 5, "latency_max_ms": 9, "drop_rate": 0.5}]`,
		"FINGRAPH_RECONCILE_INTERVAL":    "0",
		"FINGRAPH_ALLOWED_ORIGINS":       "https://app.example, http://localhost:3000",
		"FINGRAPH_INTROSPECTION":         "true",
		"FINGRAPH_READ_TIMEOUT":          "5s",
		"FINGRAPH_OPERATION_TIMEOUT":     "12s",
		"FINGRAPH_UPSTREAM_TIMEOUT":      "7s",
		"FINGRAPH_LOADER_WAIT":           "250us",
		"FINGRAPH_SHARE_WINDOW":          "3ms",
		"FINGRAPH_SHARE_QUERIES":         "false",
		"FINGRAPH_BANKING_TIMEOUT":       "9s",
		"FINGRAPH_PAYMENTS_TIMEOUT":      "8s",
		"FINGRAPH_DOWNLOAD_KEY":          "download-secret",
		"FINGRAPH_TRUSTED_PROXIES":       "10.0.0.0/8, 192.0.2.7",
		"FINGRAPH_METRICS_ADDR":          "127.0.0.1:9100",
		"FINGRAPH_TRUSTED_DOCUMENTS":     "/etc/fingraph/manifest.json",
		"FINGRAPH_LIMITS":                "depth=8, fields=600,bodyBytes=65536,socketsPerSession=40",
		"FINGRAPH_TLS_CERT":              "/etc/fingraph/cert.pem",
		"FINGRAPH_TLS_KEY":               "/etc/fingraph/key.pem",
		"FINGRAPH_PPROF_ADDR":            "127.0.0.1:6060",
		"FINGRAPH_BANK_POLL_INTERVAL":    "3s",
		"FINGRAPH_MODE":                  "upstreams",
		"FINGRAPH_UPLOAD_DIR":            "/srv/uploads",
	} {
		e[k] = v
	}
	return e
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// documentedVariables are the variables ParseConfig's usage names.
func documentedVariables(t *testing.T) []string {
	t.Helper()
	var usage bytes.Buffer
	_, err := ParseConfig([]string{"-h"}, env(nil), &usage)
	require.ErrorIs(t, err, flag.ErrHelp)
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`\$(FINGRAPH_[A-Z_]+)`).FindAllStringSubmatch(usage.String(), -1) {
		seen[m[1]] = true
	}
	return keys(seen)
}

func TestEveryVariableIsInTheReadme(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	for _, v := range documentedVariables(t) {
		assert.Contains(t, string(readme), "| `"+v+"` |", "the README's settings table lacks %s", v)
	}
}

func TestFlagWinsOverVariable(t *testing.T) {
	c, err := ParseConfig([]string{"-log-level", "warn", "-session-ttl", "2h", "-reconcile-interval", "1m", "-allowed-origins", "https://b.example"},
		env(map[string]string{"FINGRAPH_LOG_LEVEL": "debug", "FINGRAPH_SESSION_TTL": "1h", "FINGRAPH_RECONCILE_INTERVAL": "5s",
			"FINGRAPH_ALLOWED_ORIGINS": "https://a.example"}), io.Discard)
	require.NoError(t, err)
	assert.Equal(t, slog.LevelWarn, c.LogLevel)
	assert.Equal(t, 2*time.Hour, c.SessionTTL)
	assert.Equal(t, time.Minute, c.ReconcileInterval)
	assert.Equal(t, []string{"https://b.example"}, c.AllowedOrigins)
}

// The sandbox's own settings are read, not only derived: in sandbox mode
// each is set against the value the mode would give it. (Every variable's
// test runs in upstreams mode, where they equal what the mode derives.)
func TestSandboxSettingsAreReadInSandboxMode(t *testing.T) {
	c, err := ParseConfig(nil, env(map[string]string{"FINGRAPH_SANDBOX_ANONYMOUS": "false",
		"FINGRAPH_SANDBOX_STRICT": "true", "FINGRAPH_REGISTER_WEBHOOK": "false"}), io.Discard)
	require.NoError(t, err)
	assert.Equal(t, ModeSandbox, c.Mode)
	assert.False(t, c.SandboxAnonymous)
	assert.True(t, c.SandboxStrict)
	assert.False(t, c.RegisterWebhook)
}

func TestSharingTurnsOff(t *testing.T) {
	c, err := ParseConfig([]string{"-share-window", "off"}, env(nil), io.Discard)
	require.NoError(t, err)
	assert.True(t, c.NoSharing)

	c, err = ParseConfig([]string{"-share-queries=false"}, env(nil), io.Discard)
	require.NoError(t, err)
	assert.False(t, c.ShareQueries, "queries run on their own")
	assert.False(t, c.NoSharing, "while reads still share")
	assert.Equal(t, time.Millisecond, c.ShareWindow)
}

func TestInvalidValuesAreRefusedNamingTheSetting(t *testing.T) {
	real := func(extra map[string]string) map[string]string {
		e := realUpstreams()
		for k, v := range extra {
			e[k] = v
		}
		return e
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"address without port", map[string]string{"FINGRAPH_ADDR": "8080"}, nil, "FINGRAPH_ADDR"},
		{"sandbox address", map[string]string{"FINGRAPH_SANDBOX_ADDR": "localhost"}, nil, "FINGRAPH_SANDBOX_ADDR"},
		{"payments URL alone", map[string]string{"FINGRAPH_PAYMENTS_URL": "http://pay.example"}, nil, "FINGRAPH_BANKING_URL"},
		{"banking URL alone", map[string]string{"FINGRAPH_BANKING_URL": "http://bank.example"}, nil, "FINGRAPH_PAYMENTS_URL"},
		{"payments URL scheme", real(map[string]string{"FINGRAPH_PAYMENTS_URL": "ftp://pay.example"}), nil, "FINGRAPH_PAYMENTS_URL"},
		{"banking URL without host", real(map[string]string{"FINGRAPH_BANKING_URL": "https://"}), nil, "FINGRAPH_BANKING_URL"},
		{"no private key", real(map[string]string{"FINGRAPH_PAYMENTS_PRIVATE_KEY": ""}), nil, "FINGRAPH_PAYMENTS_PRIVATE_KEY"},
		{"no public key", real(map[string]string{"FINGRAPH_PAYMENTS_PUBLIC_KEY": ""}), nil, "FINGRAPH_PAYMENTS_PUBLIC_KEY"},
		{"no access token", real(map[string]string{"FINGRAPH_PAYMENTS_ACCESS_TOKEN": ""}), nil, "FINGRAPH_PAYMENTS_ACCESS_TOKEN"},
		{"NATS URL", map[string]string{"FINGRAPH_NATS_URL": "localhost"}, nil, "FINGRAPH_NATS_URL"},
		{"NATS URL scheme", map[string]string{"FINGRAPH_NATS_URL": "http://nats:4222"}, nil, "FINGRAPH_NATS_URL"},
		{"public URL", map[string]string{"FINGRAPH_PUBLIC_URL": "gateway.example"}, nil, "FINGRAPH_PUBLIC_URL"},
		{"webhook over HTTP", real(map[string]string{"FINGRAPH_REGISTER_WEBHOOK": "true", "FINGRAPH_PUBLIC_URL": "http://gateway.example"}), nil, "FINGRAPH_PUBLIC_URL"},
		{"webhook without public URL", real(map[string]string{"FINGRAPH_REGISTER_WEBHOOK": "true"}), nil, "FINGRAPH_PUBLIC_URL"},
		{"register webhook", map[string]string{"FINGRAPH_REGISTER_WEBHOOK": "sometimes"}, nil, "FINGRAPH_REGISTER_WEBHOOK"},
		{"anonymous", map[string]string{"FINGRAPH_SANDBOX_ANONYMOUS": "yes please"}, nil, "FINGRAPH_SANDBOX_ANONYMOUS"},
		{"pprof on every interface", map[string]string{"FINGRAPH_PPROF_ADDR": ":6060"}, nil, "FINGRAPH_PPROF_ADDR"},
		{"pprof on a public address", map[string]string{"FINGRAPH_PPROF_ADDR": "0.0.0.0:6060"}, nil, "FINGRAPH_PPROF_ADDR"},
		{"pprof without port", map[string]string{"FINGRAPH_PPROF_ADDR": "127.0.0.1"}, nil, "FINGRAPH_PPROF_ADDR"},
		{"anonymous with real upstreams", real(map[string]string{"FINGRAPH_SANDBOX_ANONYMOUS": "true"}), nil, "FINGRAPH_SANDBOX_ANONYMOUS"},
		{"strict", map[string]string{"FINGRAPH_SANDBOX_STRICT": "very"}, nil, "FINGRAPH_SANDBOX_STRICT"},
		{"faults", map[string]string{"FINGRAPH_SANDBOX_FAULTS": `{"route": "*"}`}, nil, "FINGRAPH_SANDBOX_FAULTS"},
		{"strict with real upstreams", real(map[string]string{"FINGRAPH_SANDBOX_STRICT": "true"}), nil, "FINGRAPH_SANDBOX_STRICT"},
		{"reconcile interval", map[string]string{"FINGRAPH_RECONCILE_INTERVAL": "often"}, nil, "FINGRAPH_RECONCILE_INTERVAL"},
		{"negative reconcile interval", map[string]string{"FINGRAPH_RECONCILE_INTERVAL": "-1s"}, nil, "FINGRAPH_RECONCILE_INTERVAL"},
		{"busy-loop reconcile interval", map[string]string{"FINGRAPH_RECONCILE_INTERVAL": "1ms"}, nil, "FINGRAPH_RECONCILE_INTERVAL"},
		{"OTLP endpoint", map[string]string{"FINGRAPH_OTLP_ENDPOINT": "collector:4318"}, nil, "FINGRAPH_OTLP_ENDPOINT"},
		{"log format", map[string]string{"FINGRAPH_LOG_FORMAT": "xml"}, nil, "FINGRAPH_LOG_FORMAT"},
		{"log format flag", nil, []string{"-log-format", "yaml"}, "FINGRAPH_LOG_FORMAT"},
		{"log level", map[string]string{"FINGRAPH_LOG_LEVEL": "loud"}, nil, "FINGRAPH_LOG_LEVEL"},
		{"origin without scheme", map[string]string{"FINGRAPH_ALLOWED_ORIGINS": "app.example"}, nil, "FINGRAPH_ALLOWED_ORIGINS"},
		{"origin with a path", map[string]string{"FINGRAPH_ALLOWED_ORIGINS": "https://app.example/login"}, nil, "FINGRAPH_ALLOWED_ORIGINS"},
		{"banking version", nil, []string{"-banking-version", "v1"}, "FINGRAPH_BANKING_VERSION"},
		{"session TTL", nil, []string{"-session-ttl", "soon"}, "FINGRAPH_SESSION_TTL"},
		{"session TTL too short", nil, []string{"-session-ttl", "10s"}, "FINGRAPH_SESSION_TTL"},
		{"customer as operator", nil, []string{"-payments-operators", "STAFF,CUSTOMER"}, "FINGRAPH_PAYMENTS_OPERATORS"},
		{"unknown operator", nil, []string{"-payments-operators", "ROBOT"}, "FINGRAPH_PAYMENTS_OPERATORS"},
		{"rate limit zero", nil, []string{"-public-rate-limit", "0"}, "FINGRAPH_PUBLIC_RATE_LIMIT"},
		{"rate limit text", map[string]string{"FINGRAPH_PUBLIC_RATE_LIMIT": "many"}, nil, "FINGRAPH_PUBLIC_RATE_LIMIT"},
		{"webhook rate limit zero", nil, []string{"-webhook-rate-limit", "0"}, "FINGRAPH_WEBHOOK_RATE_LIMIT"},
		{"webhook rate limit text", map[string]string{"FINGRAPH_WEBHOOK_RATE_LIMIT": "NaN"}, nil, "FINGRAPH_WEBHOOK_RATE_LIMIT"},
		{"no enricher workers", nil, []string{"-enricher-workers", "0"}, "FINGRAPH_ENRICHER_WORKERS"},
		{"enricher busy workers text", map[string]string{"FINGRAPH_ENRICHER_BUSY_WORKERS": "one"}, nil, "FINGRAPH_ENRICHER_BUSY_WORKERS"},
		{"negative token grace", nil, []string{"-sandbox-token-grace", "-1s"}, "FINGRAPH_SANDBOX_TOKEN_GRACE"},
		{"a certificate without its key", map[string]string{"FINGRAPH_TLS_CERT": "/etc/cert.pem"}, nil, "FINGRAPH_TLS_CERT"},
		{"an unknown limit", map[string]string{"FINGRAPH_LIMITS": "depth=8,speed=3"}, nil, "FINGRAPH_LIMITS"},
		{"a limit that is not a number", nil, []string{"-limits", "depth=deep"}, "FINGRAPH_LIMITS"},
		{"metrics address", map[string]string{"FINGRAPH_METRICS_ADDR": "9100"}, nil, "FINGRAPH_METRICS_ADDR"},
		{"trusted proxies", map[string]string{"FINGRAPH_TRUSTED_PROXIES": "10.0.0.0/8, proxy.internal"}, nil, "FINGRAPH_TRUSTED_PROXIES"},
		{"introspection not a bool", map[string]string{"FINGRAPH_INTROSPECTION": "sometimes"}, nil, "FINGRAPH_INTROSPECTION"},
		{"read timeout", map[string]string{"FINGRAPH_READ_TIMEOUT": "0s"}, nil, "FINGRAPH_READ_TIMEOUT"},
		{"operation timeout", nil, []string{"-operation-timeout", "soon"}, "FINGRAPH_OPERATION_TIMEOUT"},
		{"loader wait too long", nil, []string{"-loader-wait", "1s"}, "FINGRAPH_LOADER_WAIT"},
		{"loader wait zero", map[string]string{"FINGRAPH_LOADER_WAIT": "0"}, nil, "FINGRAPH_LOADER_WAIT"},
		{"share window too long", nil, []string{"-share-window", "1s"}, "FINGRAPH_SHARE_WINDOW"},
		{"share window negative", map[string]string{"FINGRAPH_SHARE_WINDOW": "-1ms"}, nil, "FINGRAPH_SHARE_WINDOW"},
		{"share window neither on nor off", map[string]string{"FINGRAPH_SHARE_WINDOW": "no"}, nil, "FINGRAPH_SHARE_WINDOW"},
		{"stray argument", nil, []string{"serve"}, `unexpected argument "serve"`},
		{"drain not a duration", map[string]string{"FINGRAPH_SHUTDOWN_DRAIN": "soon"}, nil, "FINGRAPH_SHUTDOWN_DRAIN"},
		{"replicas not a number", map[string]string{"FINGRAPH_NATS_REPLICAS": "three"}, nil, "FINGRAPH_NATS_REPLICAS"},
		{"replicas past five", map[string]string{"FINGRAPH_NATS_URL": "nats://n:4222", "FINGRAPH_NATS_REPLICAS": "7"}, nil, "FINGRAPH_NATS_REPLICAS"},
		{"replicas of the embedded server", map[string]string{"FINGRAPH_NATS_REPLICAS": "3"}, nil, "need a NATS cluster"},
		{"a NATS URL of a cluster with a bad node", map[string]string{"FINGRAPH_NATS_URL": "nats://a:4222,http://b:4222"}, nil, "FINGRAPH_NATS_URL"},
		{"a bank poll interval of a million hours", map[string]string{"FINGRAPH_BANK_POLL_INTERVAL": "1000000h"}, nil, "FINGRAPH_BANK_POLL_INTERVAL"},
		{"a bank poll interval of a million hours by its old name", map[string]string{"FINGRAPH_LIVE_POLL_INTERVAL": "1000000h"}, nil, "FINGRAPH_LIVE_POLL_INTERVAL"},
		{"mode", map[string]string{"FINGRAPH_MODE": "production"}, nil, "FINGRAPH_MODE"},
		{"sandbox mode with upstream URLs", real(map[string]string{"FINGRAPH_MODE": "sandbox"}), nil, "FINGRAPH_MODE"},
		{"upstreams mode without URLs", map[string]string{"FINGRAPH_MODE": "upstreams"}, nil, "FINGRAPH_MODE"},
		{"a fault the sandbox refuses", map[string]string{"FINGRAPH_SANDBOX_FAULTS": `[{"route": "*", "error_rate": 2}]`}, nil, "FINGRAPH_SANDBOX_FAULTS"},
		{"a reconcile interval of a million hours", nil, []string{"-reconcile-interval", "1000000h"}, "FINGRAPH_RECONCILE_INTERVAL"},
		{"an unbounded body", map[string]string{"FINGRAPH_LIMITS": "bodyBytes=2147483647"}, nil, "bodyBytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig(tc.args, env(tc.env), io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
			for _, secret := range []string{"sk_live", "at_live"} {
				assert.NotContains(t, err.Error(), secret, "an error must not echo a key")
			}
		})
	}
}

func TestUnknownFlagIsRefused(t *testing.T) {
	var usage bytes.Buffer
	_, err := ParseConfig([]string{"-colour", "blue"}, env(nil), &usage)
	require.Error(t, err)
	assert.Contains(t, usage.String(), "FINGRAPH_ADDR", "the usage lists the settings")
}

// TestRunRefusesAnInvalidConfigurationBeforeStarting: Run returns the
// setting's error at once, having listened on nothing.
func TestRunRefusesAnInvalidConfigurationBeforeStarting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := Run(ctx, []string{"fingraph"}, env(map[string]string{"FINGRAPH_LOG_FORMAT": "xml"}), io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "FINGRAPH_LOG_FORMAT")
	assert.False(t, errors.Is(err, context.DeadlineExceeded))

}

func TestConfigLogger(t *testing.T) {
	var out bytes.Buffer
	c, err := ParseConfig([]string{"-log-format", "json", "-log-level", "warn"}, env(nil), io.Discard)
	require.NoError(t, err)
	l := c.Logger(&out)
	l.Info("hidden")
	l.Warn("shown")
	assert.NotContains(t, out.String(), "hidden", "below the level")
	assert.True(t, strings.HasPrefix(out.String(), "{"), "json: %s", out.String())
}
