// Command fingraph is a GraphQL backend-for-frontend gateway over a payments
// and a banking upstream. `fingraph` runs the gateway; `fingraph sandbox`
// runs only the emulator of both upstreams. Everything else is in package
// app; this file only turns signals into a context and calls app.Run.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/fingraph/fingraph/app"
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

// run is the command with its process surroundings passed in (arguments,
// environment, standard output), so that nothing below main reads them
// from the process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	return app.Run(ctx, args, getenv, stdout)
}
