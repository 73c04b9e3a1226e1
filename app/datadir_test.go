package app

import (
	"io"
	"path/filepath"
	"strings"
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

// A data directory inside or around one another gateway holds is refused:
// a real-upstream gateway on D/sandbox would run a second JetStream on the
// store of a sandbox-mode gateway on D, and a sandbox-mode start on E would
// empty the store of a gateway on E/sandbox. Directories side by side are
// each their own.
func TestDataDirNestedInAnotherIsRefused(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "d")
	outer, err := lockDataDir(d)
	if err != nil {
		t.Fatal(err)
	}
	defer outer.Unlock()
	for _, inside := range []string{filepath.Join(d, "sandbox"), filepath.Join(d, "a", "b")} {
		l, err := lockDataDir(inside)
		if err == nil {
			_ = l.Unlock()
			t.Fatalf("%s, inside a held data directory, was taken", inside)
		}
		if !strings.Contains(err.Error(), "FINGRAPH_DATA_DIR") || !strings.Contains(err.Error(), "is inside "+d) {
			t.Errorf("refusal of %s: %v", inside, err)
		}
	}

	e := filepath.Join(root, "e")
	inner, err := lockDataDir(filepath.Join(e, "sandbox"))
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Unlock()
	for _, around := range []string{e, root} {
		l, err := lockDataDir(around)
		if err == nil {
			_ = l.Unlock()
			t.Fatalf("%s, around a held data directory, was taken", around)
		}
		if !strings.Contains(err.Error(), "contains") {
			t.Errorf("refusal of %s: %v", around, err)
		}
	}

	// A sibling, and a directory once held and now free, are taken.
	sib, err := lockDataDir(filepath.Join(root, "f"))
	if err != nil {
		t.Fatalf("a sibling directory: %v", err)
	}
	_ = sib.Unlock()
	_ = inner.Unlock()
	again, err := lockDataDir(e)
	if err != nil {
		t.Fatalf("a directory around one no longer held: %v", err)
	}
	_ = again.Unlock()
}
