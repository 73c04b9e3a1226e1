package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// runTrigger is `fingraph trigger <EventName>` (like `stripe trigger`): it
// asks a running sandbox to fire the event with realistic data, through the
// same flow the real upstream would take (an order is created and captured
// for OrderCaptured), so a registered webhook receives it and a gateway's
// subscribers see it. `trigger --list` names every event it can fire.
func runTrigger(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("trigger", flag.ContinueOnError)
	fs.SetOutput(stdout)
	def := getenv("FINGRAPH_SANDBOX_URL")
	if def == "" {
		def = "http://127.0.0.1:9090"
	}
	base := fs.String("sandbox-url", def, "base URL of the running sandbox: `go run . sandbox` listens on http://127.0.0.1:9090; the in-process one logs its URL ($FINGRAPH_SANDBOX_URL)")
	list := fs.Bool("list", false, "list the events trigger can fire")
	fs.Usage = func() {
		fmt.Fprintln(stdout, "usage: fingraph trigger [-sandbox-url URL] <EventName> | --list")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *list {
		for _, t := range paymentsim.Triggers() {
			fmt.Fprintf(stdout, "%-34s %s\n", t.Name, t.Description)
		}
		return nil
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("trigger: name one event (trigger --list names them)")
	}
	name := fs.Arg(0)
	if !slices.Contains(paymentsim.TriggerNames(), name) {
		return fmt.Errorf("trigger: unknown event %q; one of: %s", name, strings.Join(paymentsim.TriggerNames(), ", "))
	}
	body, _ := json.Marshal(map[string]string{"name": name})
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(*base, "/")+"/_sandbox/trigger", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("trigger: FINGRAPH_SANDBOX_URL: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("trigger: is the sandbox running at %s? %w", *base, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("trigger: the sandbox answered %d: %s", res.StatusCode, bytes.TrimSpace(raw))
	}
	var out bytes.Buffer
	if json.Indent(&out, raw, "", "  ") != nil {
		out.Reset()
		out.Write(raw)
	}
	fmt.Fprintf(stdout, "fired %s:\n%s\n", name, bytes.TrimSpace(out.Bytes()))
	return nil
}
