package banking_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/roundtrip"
)

func TestTimestampReadsEveryFormTheUpstreamSends(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return v.UTC()
	}
	for raw, want := range map[string]time.Time{
		`"2026-11-23T19:04:05Z"`:        at("2026-11-23T19:04:05Z"),
		`"2026-11-23T19:04:05.123456Z"`: at("2026-11-23T19:04:05.123456Z"),
		`"2026-11-23T21:04:05+02:00"`:   at("2026-11-23T19:04:05Z"), // kept in UTC
		`"2026-11-23T19:04:05.5"`:       at("2026-11-23T19:04:05.5Z"),
		`"2026-11-23"`:                  at("2026-11-23T00:00:00Z"),
		`"2026-11-23T19:04:05\u005a"`:   at("2026-11-23T19:04:05Z"), // an escaped Z
		`""`:                            {},
		`null`:                          {},
	} {
		var got struct {
			At banking.Timestamp `json:"at"`
		}
		require.NoError(t, roundtrip.Unmarshal([]byte(`{"at":`+raw+`}`), &got), raw)
		assert.True(t, want.Equal(got.At.Time), "%s: got %v, want %v", raw, got.At.Time, want)
		assert.Equal(t, time.UTC, got.At.Location(), raw)
	}
	for _, raw := range []string{`"yesterday"`, `"2026-13-01"`, `1700000000`, `true`} {
		var got struct {
			At banking.Timestamp `json:"at"`
		}
		assert.Error(t, roundtrip.Unmarshal([]byte(`{"at":`+raw+`}`), &got), raw)
	}
}
