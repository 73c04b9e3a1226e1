package app

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/gqlhttp"
)

// Every typed value reads back what it writes: Set(String()) leaves a
// parsed Config as it was, and writes the same field into an empty one.
// So -h's defaults, and a value copied from one gateway's settings to
// another's, mean what they say.
func TestEverySettingRoundTrips(t *testing.T) {
	for _, e := range []map[string]string{everyVariable(), nil} {
		parsed, err := ParseConfig(nil, env(e), io.Discard)
		require.NoError(t, err)
		for _, s := range parsed.settings() {
			if s.renamed != "" {
				continue
			}
			raw := s.String()
			again := parsed
			require.NoError(t, settingNamed(again.settings(), s.flag).Set(raw), "%s=%q", s.env, raw)
			assert.True(t, reflect.DeepEqual(parsed, again), "%s: Set(%q) changed the settings", s.env, raw)

			var empty Config
			fresh := settingNamed(empty.settings(), s.flag)
			require.NoError(t, fresh.Set(raw), "%s=%q on an empty Config", s.env, raw)
			assert.Equal(t, raw, fresh.String(), s.env)
		}
	}
}

// A value a setting refuses is refused in one line that starts with the
// variable's name and repeats the value; settings that take any text (a
// key, a path) take it.
func TestEverySettingNamesItsVariableWhenItRefusesAValue(t *testing.T) {
	anyText := map[string]bool{
		"payments-private-key": true, "payments-public-key": true, "payments-access-token": true, "data-dir": true,
		"trusted-documents": true, "tls-cert": true, "tls-key": true, "download-key": true, "upload-dir": true,
		"payments-corporations": true,
	}
	var c Config
	for _, s := range c.settings() {
		err := s.Set("ROBOT")
		if anyText[s.flag] {
			assert.NoError(t, err, s.env)
			continue
		}
		if !assert.Error(t, err, "%s took ROBOT", s.env) {
			continue
		}
		assert.True(t, strings.HasPrefix(err.Error(), s.env+": "), "%s: %v", s.env, err)
		assert.NotContains(t, err.Error(), "\n", s.env)
		if s.flag != "sandbox-faults" { // a JSON decoder's error, about the first byte
			assert.Contains(t, err.Error(), `"ROBOT"`, s.env)
		}
	}
}

// The errors of the typed values say what is accepted.
func TestValueErrorsSayWhatIsAccepted(t *testing.T) {
	for _, tc := range []struct{ env, value, want string }{
		{"FINGRAPH_SESSION_TTL", "soon", `FINGRAPH_SESSION_TTL: "soon" is not a duration from 1m to 720h, such as 12h`},
		{"FINGRAPH_RECONCILE_INTERVAL", "1ms", `FINGRAPH_RECONCILE_INTERVAL: "1ms" is not a duration from 10ms to 1h, such as 30s (0 turns polling off)`},
		{"FINGRAPH_READ_TIMEOUT", "0s", `FINGRAPH_READ_TIMEOUT: "0s" is not a positive duration up to 10m, such as 30s`},
		{"FINGRAPH_LOADER_WAIT", "1s", `FINGRAPH_LOADER_WAIT: "1s" is not a duration from 100us to 50ms, such as 1ms`},
		{"FINGRAPH_NATS_REPLICAS", "7", `FINGRAPH_NATS_REPLICAS: "7" is not a number from 1 to 5`},
		{"FINGRAPH_WEBHOOK_RATE_LIMIT", "NaN", `FINGRAPH_WEBHOOK_RATE_LIMIT: "NaN" is not a number of webhooks per second from 1 to 100000`},
		{"FINGRAPH_LIMITS", "depth=1000", `FINGRAPH_LIMITS: depth=1000 is more than its upper bound 100`},
		{"FINGRAPH_LIMITS", "speed=3", `FINGRAPH_LIMITS: "speed" is not a limit (tokens, fields,`},
		{"FINGRAPH_PAYMENTS_OPERATORS", "staff,customer", `FINGRAPH_PAYMENTS_OPERATORS: "CUSTOMER" is not one of STAFF, PERSON, INTRODUCER, API_CLIENT`},
		{"FINGRAPH_LOG_FORMAT", "xml", `FINGRAPH_LOG_FORMAT: "xml" is not text or json`},
		{"FINGRAPH_SANDBOX_FAULTS", `[{"route": "*", "status": 200, "error_rate": 1}]`, `FINGRAPH_SANDBOX_FAULTS: "*": status is an error status, 400 to 599`},
		{"FINGRAPH_MODE", "prod", `FINGRAPH_MODE: "prod" is not sandbox or upstreams`},
	} {
		_, err := ParseConfig(nil, env(map[string]string{tc.env: tc.value}), io.Discard)
		if assert.Error(t, err, tc.env) {
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "%s=%s:\n got %v\nwant %s", tc.env, tc.value, err, tc.want)
		}
	}
}

// A bad flag value is refused like a bad variable, naming the variable,
// and prints no usage: the one line says what to change. A bad variable
// that a flag overrides does not matter.
func TestABadFlagValueIsOneLineNamingTheSetting(t *testing.T) {
	var usage bytes.Buffer
	_, err := ParseConfig([]string{"-session-ttl", "soon"}, env(nil), &usage)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), `FINGRAPH_SESSION_TTL: "soon" is not a duration`), "%v", err)
	assert.Empty(t, usage.String())

	c, err := ParseConfig([]string{"-log-level", "warn"}, env(map[string]string{"FINGRAPH_LOG_LEVEL": "loud"}), io.Discard)
	require.NoError(t, err)
	assert.Equal(t, slog.LevelWarn, c.LogLevel)
}

// -h shows each setting's default from the table, never a variable's
// value, which may be a secret.
func TestHelpShowsDefaultsNotTheEnvironment(t *testing.T) {
	var usage bytes.Buffer
	_, err := ParseConfig([]string{"-h"}, env(map[string]string{"FINGRAPH_PAYMENTS_PRIVATE_KEY": "sk_live_secret", "FINGRAPH_ADDR": ":9999"}), &usage)
	require.ErrorIs(t, err, flag.ErrHelp)
	assert.NotContains(t, usage.String(), "sk_live_secret")
	assert.NotContains(t, usage.String(), ":9999")
	assert.Contains(t, usage.String(), `($FINGRAPH_ADDR) (default ":8080")`)
}

// The mode is decided once at parse time: by FINGRAPH_MODE, or by whether
// upstream URLs were given.
func TestTheModeIsDecidedAtParseTime(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Mode
	}{
		{"no URL", nil, ModeSandbox},
		{"explicit sandbox", map[string]string{"FINGRAPH_MODE": "sandbox"}, ModeSandbox},
		{"URLs", realUpstreams(), ModeUpstreams},
	} {
		c, err := ParseConfig([]string{"-data-dir", t.TempDir()}, env(tc.env), io.Discard)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, c.Mode, tc.name)
	}
	up := realUpstreams()
	up["FINGRAPH_MODE"] = "upstreams"
	c, err := ParseConfig(nil, env(up), io.Discard)
	require.NoError(t, err)
	assert.Equal(t, ModeUpstreams, c.Mode)
	assert.False(t, c.Introspection, "real upstreams keep the schema to themselves")
}

// The banking poller's interval: 10 s unless set, by its name or its old
// one (live-poll-interval), the new name winning; anything under a second
// (or not a duration) refused in one line naming the variable that was
// set. The old name is noted for a warning at start.
func TestBankPollInterval(t *testing.T) {
	c, err := ParseConfig(nil, env(nil), io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 10*time.Second, c.BankPollInterval)
	assert.Empty(t, c.oldNames)

	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want time.Duration
		old  string
	}{
		{"variable", nil, map[string]string{"FINGRAPH_BANK_POLL_INTERVAL": "2s"}, 2 * time.Second, ""},
		{"flag", []string{"-bank-poll-interval", "1s"}, map[string]string{"FINGRAPH_BANK_POLL_INTERVAL": "2s"}, time.Second, ""},
		{"old variable", nil, map[string]string{"FINGRAPH_LIVE_POLL_INTERVAL": "3s"}, 3 * time.Second, "FINGRAPH_LIVE_POLL_INTERVAL is the old name of FINGRAPH_BANK_POLL_INTERVAL"},
		{"old flag", []string{"-live-poll-interval", "4s"}, nil, 4 * time.Second, "-live-poll-interval is the old name of -bank-poll-interval"},
		{"new variable wins", nil, map[string]string{"FINGRAPH_LIVE_POLL_INTERVAL": "3s", "FINGRAPH_BANK_POLL_INTERVAL": "5s"}, 5 * time.Second, ""},
		{"old flag wins over new variable", []string{"-live-poll-interval", "4s"}, map[string]string{"FINGRAPH_BANK_POLL_INTERVAL": "5s"}, 4 * time.Second, "-live-poll-interval"},
	} {
		c, err := ParseConfig(tc.args, env(tc.env), io.Discard)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, c.BankPollInterval, tc.name)
		if tc.old == "" {
			assert.Empty(t, c.oldNames, tc.name)
		} else if assert.Len(t, c.oldNames, 1, tc.name) {
			assert.Contains(t, c.oldNames[0], tc.old, tc.name)
		}
	}

	for _, name := range []string{"FINGRAPH_BANK_POLL_INTERVAL", "FINGRAPH_LIVE_POLL_INTERVAL"} {
		for _, v := range []string{"500ms", "0", "-1s", "ten", "10"} {
			_, err := ParseConfig(nil, env(map[string]string{name: v}), io.Discard)
			require.Error(t, err, v)
			assert.True(t, strings.HasPrefix(err.Error(), name+": "), "%s=%s: %v", name, v, err)
			assert.NotContains(t, err.Error(), "\n", v)
		}
	}
}

// validConfig is a valid sandbox-mode Config, parsed, whose data
// directory is under the test's own.
func validConfig(t *testing.T, dir string) Config {
	t.Helper()
	c, err := ParseConfig([]string{"-addr", "127.0.0.1:0", "-sandbox-addr", "127.0.0.1:0", "-data-dir", dir,
		"-register-webhook", "false", "-reconcile-interval", "0"}, env(nil), io.Discard)
	require.NoError(t, err)
	return c
}

// A Config built or changed by hand is checked as a parsed one is: Start
// refuses one that Validate does not pass, with the same one line, before
// it locks a directory or listens anywhere.
func TestStartRefusesAnInvalidConfigBuiltByHand(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"empty", func(c *Config) { *c = Config{DataDir: c.DataDir, Addr: c.Addr} }, "FINGRAPH_MODE"},
		{"a loader wait of an hour", func(c *Config) { c.LoaderWait = time.Hour }, "FINGRAPH_LOADER_WAIT: 1h is not a duration from 100us to 50ms"},
		{"no limits", func(c *Config) { c.Limits = gqlhttp.Limits{} }, "FINGRAPH_LIMITS: tokens=0 is not a positive number"},
		{"a depth past its bound", func(c *Config) { c.Limits.MaxDepth = 1000 }, "FINGRAPH_LIMITS: depth=1000 is more than its upper bound 100"},
		{"a session of ten years", func(c *Config) { c.SessionTTL = 87600 * time.Hour }, "FINGRAPH_SESSION_TTL"},
		{"sandbox mode with an upstream URL", func(c *Config) { c.PaymentsURL = "https://payments.example" }, "FINGRAPH_MODE"},
		{"upstreams mode without URLs", func(c *Config) { c.Mode = ModeUpstreams }, "FINGRAPH_MODE: upstreams needs"},
		{"anonymous with real upstreams", func(c *Config) {
			c.Mode, c.PaymentsURL, c.BankingURL = ModeUpstreams, "https://p.example", "https://b.example"
			c.PaymentsPrivate, c.PaymentsPublic, c.PaymentsAccess = "sk", "pk", "at"
		}, "FINGRAPH_SANDBOX_ANONYMOUS"},
		{"no replicas", func(c *Config) { c.NATSReplicas = 0 }, "FINGRAPH_NATS_REPLICAS"},
		{"an invalid proxy", func(c *Config) { c.TrustedProxies = TrustedProxies{netip.Prefix{}} }, "FINGRAPH_TRUSTED_PROXIES"},
		{"a fault without a route", func(c *Config) { c.SandboxFaults = SandboxFaults{{ErrorRate: 0.5}} }, "FINGRAPH_SANDBOX_FAULTS"},
		{"an origin with a path", func(c *Config) { c.AllowedOrigins = []string{"https://app.example/login"} }, "FINGRAPH_ALLOWED_ORIGINS"},
		{"customers as operators", func(c *Config) { c.PaymentsOperators = []string{"CUSTOMER"} }, "FINGRAPH_PAYMENTS_OPERATORS"},
		{"a webhook rate that is not a number", func(c *Config) { c.WebhookRateLimit = math.NaN() }, "FINGRAPH_WEBHOOK_RATE_LIMIT"},
		{"a share window of a second", func(c *Config) { c.ShareWindow = time.Second }, "FINGRAPH_SHARE_WINDOW"},
		{"pprof on every interface", func(c *Config) { c.PprofAddr = ":6060" }, "FINGRAPH_PPROF_ADDR"},
		{"a log format", func(c *Config) { c.LogFormat = "" }, "FINGRAPH_LOG_FORMAT"},
		{"no shutdown timeout", func(c *Config) { c.ShutdownTimeout = 0 }, "ShutdownTimeout"},
		{"no data directory", func(c *Config) { c.DataDir = "" }, "FINGRAPH_DATA_DIR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			addr := ln.Addr().String()
			require.NoError(t, ln.Close())

			c := validConfig(t, dir)
			c.Addr = addr
			require.NoError(t, c.Validate())
			tc.change(&c)
			verr := c.Validate()
			require.Error(t, verr)
			assert.Contains(t, verr.Error(), tc.want)
			assert.NotContains(t, verr.Error(), "\n")

			a, err := Start(context.Background(), c, slog.New(slog.DiscardHandler))
			if err == nil {
				_ = a.Shutdown()
				t.Fatal("Start took a Config that Validate refuses")
			}
			assert.Equal(t, verr.Error(), err.Error())
			_, statErr := os.Stat(dir)
			assert.True(t, os.IsNotExist(statErr), "the data directory was made: %v", statErr)
			if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				conn.Close()
				t.Errorf("something listens on %s", addr)
			}
		})
	}
}

// Start leaves the settings as they were given: in sandbox mode the
// in-process sandbox's addresses and keys, the upload spool and what the
// strict sandbox turns off are start-up's own (a.rt), so the mode does not
// flip once the sandbox's URLs are known, and the settings the gateway
// holds still pass Validate. A setting given by its old name is said in
// a warning.
func TestStartLeavesTheSettingsAsGiven(t *testing.T) {
	c, err := ParseConfig([]string{"-addr", "127.0.0.1:0", "-sandbox-addr", "127.0.0.1:0", "-data-dir", t.TempDir(),
		"-register-webhook", "false", "-sandbox-strict", "true", "-live-poll-interval", "2s"}, env(nil), io.Discard)
	require.NoError(t, err)
	given := c
	var logs bytes.Buffer
	a, err := Start(context.Background(), c, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	defer func() { require.NoError(t, a.Shutdown()) }()

	assert.True(t, reflect.DeepEqual(given, a.cfg), "Start changed the settings")
	assert.Equal(t, ModeSandbox, a.cfg.Mode)
	assert.Empty(t, a.cfg.PaymentsURL)
	require.NoError(t, a.cfg.Validate(), "the settings the gateway holds still pass")

	sandboxURL := "http://" + a.SandboxAddr()
	assert.Equal(t, sandboxURL+"/payments", a.rt.paymentsURL)
	assert.Equal(t, sandboxURL+"/banking", a.rt.bankingURL)
	assert.Equal(t, sandboxPaymentsKeys, a.rt.paymentsKeys)
	assert.Equal(t, 30*time.Second, a.cfg.ReconcileInterval, "the setting as given")
	assert.Zero(t, a.rt.reconcileInterval, "the strict sandbox has no event listing to poll")
	assert.Nil(t, a.reconciler)
	assert.DirExists(t, a.rt.uploadSpool)
	assert.Equal(t, 2*time.Second, a.bankPoll.Interval)
	assert.Contains(t, logs.String(), "-live-poll-interval is the old name of -bank-poll-interval")
}
