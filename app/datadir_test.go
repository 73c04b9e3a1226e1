package app

import (
	"io"
	"path/filepath"
	"testing"
)

// Defects issue, item 11: with no FINGRAPH_DATA_DIR the embedded JetStream
// lives in a persistent directory, so a restart keeps sessions, idempotency
// keys and the event history; an external cluster needs none.
func TestDefaultDataDirIsPersistent(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"XDG state home", map[string]string{"XDG_STATE_HOME": "/xdg/state", "HOME": "/home/u"}, "/xdg/state/fingraph/jetstream"},
		{"home", map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/fingraph/jetstream"},
		{"relative XDG is ignored", map[string]string{"XDG_STATE_HOME": "state", "HOME": "/home/u"}, "/home/u/.local/state/fingraph/jetstream"},
		{"explicit", map[string]string{"FINGRAPH_DATA_DIR": "/srv/fingraph", "HOME": "/home/u"}, "/srv/fingraph"},
		{"external cluster", map[string]string{"FINGRAPH_NATS_URL": "nats://127.0.0.1:4222", "HOME": "/home/u"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig(nil, func(k string) string { return tc.env[k] }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Clean(cfg.DataDir) != filepath.Clean(tc.want) && !(tc.want == "" && cfg.DataDir == "") {
				t.Errorf("DataDir = %q, want %q", cfg.DataDir, tc.want)
			}
		})
	}
}
