package sandbox

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// A setting that cannot be right is refused at once, naming it, having
// listened on nothing.
func TestRunRefusesAnInvalidConfigurationBeforeStarting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := Run(ctx, nil, env(map[string]string{"FINGRAPH_SANDBOX_ADDR": "nope", "FINGRAPH_DATA_DIR": t.TempDir()}), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "FINGRAPH_SANDBOX_ADDR") {
		t.Fatalf("got %v, want an error naming FINGRAPH_SANDBOX_ADDR", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("the refusal waited for the context")
	}
}

// The sandbox command serves the sandbox at the address it is given, with
// its demo data, until its context ends.
func TestRunServesTheSandboxUntilItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, []string{"-sandbox-addr", "127.0.0.1:0", "-log-format", "json"}, env(map[string]string{"FINGRAPH_DATA_DIR": t.TempDir()}), &out)
	}()
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, rest, ok := strings.Cut(out.String(), `"url":"`); ok {
			url, _, _ = strings.Cut(rest, `"`)
		}
	}
	if url == "" {
		cancel()
		t.Fatalf("the sandbox did not say where it listens: %s", out.String())
	}
	res, err := http.Get(url + "/_sandbox/sms")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("GET /_sandbox/sms: %d", res.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// syncBuffer is the command's output, written by its goroutines while the
// test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
