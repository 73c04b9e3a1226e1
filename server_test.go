package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests run the command the way the README tells a new user to: the
// real main function in its own process (the test binary re-executed as
// the command, so no second build is needed), no address setting, no
// FINGRAPH_* variable, and a HOME of its own, so the default data
// directory, the default listen address (every interface) and the
// sandbox's default address are the ones exercised.

// asMain makes the test binary act as the command: set in the environment
// of the processes the tests start.
const asMain = "FINGRAPH_TEST_AS_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(asMain) == "1" {
		os.Args = append([]string{"fingraph"}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// command is one run of the command, its output gathered line by line.
type command struct {
	t     *testing.T
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	seen  chan struct{} // signalled on every new line
	done  chan struct{} // closed when the process has exited
	err   error         // the exit status, once done is closed
}

// freshEnv is the environment of a new user: a PATH, a HOME, nothing else.
func freshEnv(home string, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, asMain + "=1"}, extra...)
}

func start(t *testing.T, env []string, args ...string) *command {
	t.Helper()
	c := &command{t: t, cmd: exec.Command(os.Args[0], args...), seen: make(chan struct{}, 1), done: make(chan struct{})}
	c.cmd.Env = env
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.cmd.Stderr = c.cmd.Stdout
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			c.mu.Lock()
			c.lines = append(c.lines, sc.Text())
			c.mu.Unlock()
			select {
			case c.seen <- struct{}{}:
			default:
			}
		}
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		_ = c.cmd.Process.Signal(os.Interrupt)
		select {
		case <-c.done:
		case <-time.After(20 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
		if t.Failed() {
			t.Logf("output of %v:\n%s", args, c.output())
		}
	})
	return c
}

func (c *command) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.lines, "\n")
}

// waitFor returns the first line containing want, failing the test if the
// process exits first or nothing comes within a minute (a cold start under
// the race detector on a loaded machine is slow).
func (c *command) waitFor(want string) string {
	c.t.Helper()
	deadline := time.After(time.Minute)
	for {
		c.mu.Lock()
		for _, l := range c.lines {
			if strings.Contains(l, want) {
				c.mu.Unlock()
				return l
			}
		}
		c.mu.Unlock()
		select {
		case <-c.seen:
		case <-c.done:
			if strings.Contains(c.output(), want) {
				continue
			}
			c.t.Fatalf("the command exited (%v) before logging %q:\n%s", c.err, want, c.output())
		case <-deadline:
			c.t.Fatalf("no %q within a minute:\n%s", want, c.output())
		}
	}
}

// stop interrupts the command as Ctrl-C does and wants a clean exit.
func (c *command) stop() {
	c.t.Helper()
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		c.t.Fatalf("the command did not stop within 30 s of an interrupt:\n%s", c.output())
	}
	if c.err != nil {
		c.t.Fatalf("the command exited with %v after an interrupt:\n%s", c.err, c.output())
	}
}

// free reports whether addr can be listened on now.
func free(addr string) bool {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

var urlAttr = regexp.MustCompile(`graphql=(\S+)/graphql`)

// gatewayURL reads the gateway's base URL from its "gateway listening" line.
func gatewayURL(t *testing.T, c *command) string {
	t.Helper()
	m := urlAttr.FindStringSubmatch(c.waitFor(`msg="gateway listening"`))
	if m == nil {
		t.Fatalf("no graphql URL in the start-up line:\n%s", c.output())
	}
	return m[1]
}

type gqlAnswer struct {
	Data   map[string]json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

func post(t *testing.T, base, query string, vars map[string]any) gqlAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	res, err := http.Post(base+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST /graphql: %v", err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var a gqlAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("not GraphQL (%d): %s", res.StatusCode, raw)
	}
	if len(a.Errors) > 0 {
		t.Fatalf("errors: %s", raw)
	}
	return a
}

// readmeFirstQuery is the first GraphQL block of the README, as a reader
// pastes it into the playground.
func readmeFirstQuery(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := bytes.Cut(readme, []byte("```graphql\n"))
	q, _, ok2 := bytes.Cut(rest, []byte("```"))
	if !ok || !ok2 {
		t.Fatal("the README has no graphql block")
	}
	return string(q)
}

// playgroundCreateOrder is the playground's create-order example, as its
// tab holds it (web/playground/examples.js).
func playgroundCreateOrder(t *testing.T) (string, map[string]any) {
	t.Helper()
	js, err := os.ReadFile(filepath.Join("web", "playground", "examples.js"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := bytes.Cut(js, []byte("const createOrder = `"))
	q, _, ok2 := bytes.Cut(rest, []byte("`;"))
	if !ok || !ok2 || !bytes.Contains(js, []byte("idempotencyKey: 'playground-1'")) {
		t.Fatal("the playground's create-order example is not where this test reads it")
	}
	return string(q), map[string]any{"input": map[string]any{
		"idempotencyKey": "playground-1", "currency": "EUR", "items": map[string]any{"amount": 1250},
		"payment": map[string]any{"card": map[string]any{"token": "tok_ok_playground"}},
	}}
}

// TestFirstCommandAsTheREADMEGivesIt is a new user's first minutes: `go run
// .` with nothing set stays up, answers the README's first query, receives
// `go run . trigger OrderCreated` from a second shell, refuses a second
// gateway on the same machine, and after a restart the playground's
// create-order example answers an order that can be read.
func TestFirstCommandAsTheREADMEGivesIt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the command three times")
	}
	home := t.TempDir()
	// The default port when it is free; otherwise the same unspecified
	// host on a port of the kernel's choosing, which is what broke.
	var extra []string
	defaults := free(":8080") && free("127.0.0.1:9090")
	if !defaults {
		t.Log("8080 or 9090 is taken on this machine: the gateway listens on :0 and the sandbox moves")
		extra = append(extra, "FINGRAPH_ADDR=:0")
	}
	env := freshEnv(home, extra...)

	first := start(t, env)
	base := gatewayURL(t, first)
	// A webhook the sandbox accepts: live events work out of the box.
	first.waitFor(`msg="webhook registered"`)
	sandboxLine := first.waitFor("started the sandbox in-process")
	if defaults && !strings.Contains(sandboxLine, "sandbox=http://127.0.0.1:9090") {
		t.Errorf("the sandbox is not at its documented address: %s", sandboxLine)
	}
	if !strings.Contains(sandboxLine, "sms_outbox=") {
		t.Errorf("the start-up line does not say where the SMS outbox is: %s", sandboxLine)
	}

	a := post(t, base, readmeFirstQuery(t), nil)
	var customers []map[string]any
	if err := json.Unmarshal(a.Data["customers"], &customers); err != nil || len(customers) == 0 {
		t.Fatalf("the README's first query answered no customers: %s", a.Data["customers"])
	}

	// The playground and the dashboard name the outboxes.
	for _, path := range []string{"/", "/dashboard"} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		outboxes := regexp.MustCompile(`href="http://127\.0\.0\.1:\d+/_sandbox/(sms|email)"`).FindAll(page, -1)
		if len(outboxes) != 2 {
			t.Errorf("%s does not link the SMS and e-mail outboxes", path)
		}
	}

	// A second shell: `go run . trigger OrderCreated`, with no flags when
	// the defaults were free.
	triggerArgs := []string{"trigger", "OrderCreated"}
	if !defaults {
		m := regexp.MustCompile(`sandbox=(http://\S+)`).FindStringSubmatch(sandboxLine)
		triggerArgs = []string{"trigger", "-sandbox-url", m[1], "OrderCreated"}
	}
	out, err := runToEnd(freshEnv(home), triggerArgs...)
	if err != nil {
		t.Fatalf("trigger: %v\n%s", err, out)
	}
	orderID := regexp.MustCompile(`"order_id":\s*"([^"]+)"`).FindStringSubmatch(out)
	if orderID == nil {
		t.Fatalf("trigger printed no order id:\n%s", out)
	}
	waitForEvent(t, base, "OrderCreated", orderID[1])
	// Every name trigger --list shows reaches the default start, with no
	// flags.
	if defaults {
		list, err := runToEnd(freshEnv(home), "trigger", "--list")
		if err != nil {
			t.Fatalf("trigger --list: %v\n%s", err, list)
		}
		names := regexp.MustCompile(`(?m)^  ([A-Z][A-Za-z]+) `).FindAllStringSubmatch(list, -1)
		if len(names) < 10 {
			t.Fatalf("trigger --list names %d events:\n%s", len(names), list)
		}
		for _, n := range names {
			if out, err := runToEnd(freshEnv(home), "trigger", n[1]); err != nil {
				t.Errorf("trigger %s with no flags: %v\n%s", n[1], err, out)
			}
		}
	}

	// A second gateway on the same machine is refused in one line naming
	// the directory and the running process.
	out, err = runToEnd(freshEnv(home, "FINGRAPH_ADDR=127.0.0.1:0"))
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("a second gateway on the same data directory was not refused (%v):\n%s", err, out)
	}
	wantDir := filepath.Join(home, ".local", "state", "fingraph")
	if !strings.Contains(out, wantDir) || !strings.Contains(out, fmt.Sprintf("process %d", first.cmd.Process.Pid)) {
		t.Errorf("the refusal does not name the directory and the running process %d:\n%s", first.cmd.Process.Pid, out)
	}

	// The playground's create-order example, before and after a restart:
	// every id the gateway answers can be read.
	query, vars := playgroundCreateOrder(t)
	readOrder := func(base string) string {
		t.Helper()
		a := post(t, base, query, vars)
		var o struct {
			Typename string `json:"__typename"`
			ID       string `json:"id"`
		}
		_ = json.Unmarshal(a.Data["createOrder"], &o)
		if o.Typename != "Order" || o.ID == "" {
			t.Fatalf("the create-order example answered %s", a.Data["createOrder"])
		}
		r := post(t, base, `query($id: ID!) { node(id: $id) { id ... on Order { status } } }`, map[string]any{"id": o.ID})
		if string(r.Data["node"]) == "null" {
			t.Fatalf("the order %s that createOrder answered cannot be read", o.ID)
		}
		return o.ID
	}
	readOrder(base)
	first.stop()

	second := start(t, env)
	base = gatewayURL(t, second)
	readOrder(base)
	second.stop()
}

// runToEnd runs the command to its end and returns what it printed.
func runToEnd(env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = env
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// waitForEvent polls the event history until the event named name about
// orderID is there.
func waitForEvent(t *testing.T, base, name, orderID string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		a := post(t, base, `{ eventHistory(first: 20) { edges { node { name payload } } } }`, nil)
		var h struct {
			Edges []struct {
				Node struct {
					Name    string `json:"name"`
					Payload struct {
						OrderID string `json:"order_id"`
					} `json:"payload"`
				} `json:"node"`
			} `json:"edges"`
		}
		_ = json.Unmarshal(a.Data["eventHistory"], &h)
		for _, e := range h.Edges {
			if e.Node.Name == name && e.Node.Payload.OrderID == orderID {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s of order %s never reached the gateway's event history: %+v", name, orderID, h)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
