// Command fingraph is a GraphQL backend-for-frontend gateway over a payments
// and a banking upstream. `fingraph` runs the gateway (package app);
// `fingraph sandbox` runs only the emulator of both upstreams (cmd/sandbox);
// `fingraph trigger` fires a sandbox event (cmd/trigger). This file only
// turns signals into a context and dispatches to one of them.
package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/fingraph/fingraph/app"
	sandboxcmd "github.com/fingraph/fingraph/cmd/sandbox"
	"github.com/fingraph/fingraph/cmd/trigger"
)

// The GraphQL schema is the source of truth: regenerate graph/ and the
// resolver stubs after any change under schema/. gqlinline then rewrites
// gqlgen's list marshalling to run inline where no element waits on I/O
// (internal/gqlinline says why).
//go:generate go tool gqlgen generate
//go:generate go run ./internal/gqlinline graph/generated.go graph/inline_gen.go

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fingraph:", err)
		os.Exit(1)
	}
}

// subCommands are the words the command takes before its flags, each run
// by its own package with the arguments after it.
var subCommands = map[string]func(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error{
	"sandbox": sandboxcmd.Run,
	"trigger": trigger.Run,
}

// run is the command with its process surroundings passed in (arguments,
// environment, standard output), so that nothing below main reads them
// from the process. A first argument that is not a flag names a
// sub-command; without one, the gateway runs.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) > 1 && args[1] != "" && !strings.HasPrefix(args[1], "-") {
		sub, ok := subCommands[args[1]]
		if !ok {
			return fmt.Errorf("unknown sub-command %q: fingraph runs the gateway with no sub-command, or one of: %s (fingraph -h explains each)",
				args[1], strings.Join(slices.Sorted(maps.Keys(subCommands)), ", "))
		}
		return sub(ctx, args[2:], getenv, stdout)
	}
	return app.Run(ctx, args, getenv, stdout)
}
