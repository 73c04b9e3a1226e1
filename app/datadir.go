package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofrs/flock"
)

// lockFile is the name of the lock that one gateway process holds on its
// data directory for as long as it runs.
const lockFile = "fingraph.lock"

// dataDirLock is a data directory held by this process: two embedded
// JetStream servers writing one store would corrupt it, so a second gateway
// on the same directory is refused before it touches anything there.
type dataDirLock struct {
	lock *flock.Flock
}

// lockDataDir creates dir when needed and takes its lock, or says which
// process holds it. The lock is an advisory file lock (flock), released by
// the kernel when the process ends, however it ends: a gateway killed with
// -9 never leaves a stale lock behind.
func lockDataDir(dir string) (*dataDirLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("FINGRAPH_DATA_DIR: cannot create %s: %w", dir, err)
	}
	path := filepath.Join(dir, lockFile)
	l := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	ok, err := l.TryLock()
	if err != nil {
		return nil, fmt.Errorf("FINGRAPH_DATA_DIR: cannot lock %s: %w", dir, err)
	}
	if !ok {
		return nil, errInUse(dir, path)
	}
	// The holder's process id, for the refusal of the next one.
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		_ = l.Unlock()
		return nil, fmt.Errorf("FINGRAPH_DATA_DIR: cannot write %s: %w", path, err)
	}
	// A directory inside or around another gateway's is that gateway's
	// too: its JetStream store, or the sandbox's store it empties at each
	// start. The check comes after this lock is taken, so that of two
	// gateways starting at once on nested directories at least one sees
	// the other (both may refuse; neither runs on the other's store).
	if err := nestedHolder(dir, path); err != nil {
		_ = l.Unlock()
		return nil, err
	}
	return &dataDirLock{lock: l}, nil
}

// maxLockWalk bounds the entries looked at for locks below a data
// directory, so that a data directory set to a large tree still starts.
const maxLockWalk = 100_000

// nestedHolder refuses dir when a directory above it or below it holds a
// lock another gateway has (own is this gateway's lock file).
func nestedHolder(dir, own string) error {
	abs, err := filepath.Abs(dir)
	if err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
	}
	if err != nil {
		return fmt.Errorf("FINGRAPH_DATA_DIR: cannot resolve %s: %w", dir, err)
	}
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		if held(filepath.Join(p, lockFile)) {
			return fmt.Errorf("FINGRAPH_DATA_DIR: %s is inside %s, the data directory of another gateway (%s); give this one a directory apart",
				dir, p, holderOf(filepath.Join(p, lockFile)))
		}
		if filepath.Dir(p) == p {
			break
		}
	}
	ownAbs := filepath.Join(abs, lockFile)
	seen := 0
	var found string
	_ = filepath.WalkDir(abs, func(p string, d os.DirEntry, err error) error {
		if seen++; err != nil || seen > maxLockWalk || found != "" {
			return filepath.SkipAll
		}
		if d.IsDir() {
			// The embedded JetStream's own files hold no gateway's lock.
			if p != abs && d.Name() == "jetstream" && filepath.Dir(p) == abs {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == lockFile && p != ownAbs && p != own && held(p) {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	if found != "" {
		return fmt.Errorf("FINGRAPH_DATA_DIR: %s contains %s, the data directory of another gateway (%s); give this one a directory apart",
			dir, filepath.Dir(found), holderOf(found))
	}
	return nil
}

// held reports whether another open lock holds the lock file at path. A
// lock of this process on another descriptor counts (flock locks belong to
// the open file, not to the process).
func held(path string) bool {
	if _, err := os.Stat(path); err != nil {
		return false
	}
	l := flock.New(path, flock.SetFlag(os.O_RDONLY))
	ok, err := l.TryLock()
	if err != nil {
		return false
	}
	if ok {
		_ = l.Unlock()
		return false
	}
	return true
}

// holderOf names the process that wrote the lock file at path.
func holderOf(path string) string {
	if raw, err := os.ReadFile(path); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && pid > 0 {
			return "process " + strconv.Itoa(pid)
		}
	}
	return "another process"
}

// errInUse names the directory and, when the holder wrote it, its process.
func errInUse(dir, path string) error {
	return fmt.Errorf("FINGRAPH_DATA_DIR: %s is in use by another gateway (%s); stop it, or give this one its own -data-dir", dir, holderOf(path))
}

// Unlock releases the directory; the file stays, so that the next holder
// locks the same inode.
func (d *dataDirLock) Unlock() error {
	if d == nil {
		return nil
	}
	return d.lock.Unlock()
}

// freshSandboxStore empties the store of the in-process sandbox. That
// sandbox keeps its state in memory and is seeded anew at every start, so
// sessions, idempotency keys and events kept from an earlier run name
// tokens, orders and wallets that no longer exist: an idempotency key would
// answer an order the new sandbox cannot read. The store lives and ends with
// its sandbox instead. Real upstreams use the data directory itself, which
// this never touches.
func freshSandboxStore(dataDir string) (string, error) {
	dir := filepath.Join(dataDir, "sandbox")
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("FINGRAPH_DATA_DIR: cannot clear the sandbox's store %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("FINGRAPH_DATA_DIR: cannot create %s: %w", dir, err)
	}
	return dir, nil
}
