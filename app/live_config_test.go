package app

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The live poll interval: 10 s unless set, from the variable or the flag,
// and anything under a second (or not a duration) refused at start in one
// line naming the setting.
func TestLivePollInterval(t *testing.T) {
	c, err := ParseConfig(nil, env(nil), io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 10*time.Second, c.LivePollInterval)

	c, err = ParseConfig(nil, env(map[string]string{"FINGRAPH_LIVE_POLL_INTERVAL": "2s"}), io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, c.LivePollInterval)

	c, err = ParseConfig([]string{"-live-poll-interval", "1s"}, env(map[string]string{"FINGRAPH_LIVE_POLL_INTERVAL": "2s"}), io.Discard)
	require.NoError(t, err)
	assert.Equal(t, time.Second, c.LivePollInterval)

	for _, v := range []string{"500ms", "0", "-1s", "ten", "10"} {
		_, err := ParseConfig(nil, env(map[string]string{"FINGRAPH_LIVE_POLL_INTERVAL": v}), io.Discard)
		require.Error(t, err, v)
		assert.True(t, strings.HasPrefix(err.Error(), "FINGRAPH_LIVE_POLL_INTERVAL: "), "%s: %v", v, err)
		assert.NotContains(t, err.Error(), "\n", v)
	}
}
