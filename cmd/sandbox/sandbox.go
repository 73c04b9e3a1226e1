// Package sandbox is the `fingraph sandbox` command: the emulator of both
// upstreams alone, with its demo data, for pointing another gateway or a
// test at it. It takes the gateway's settings (the sandbox's own are
// FINGRAPH_SANDBOX_*), and runs the same sandbox server as the gateway's
// sandbox mode (app.StartSandbox).
package sandbox

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"io"

	"github.com/fingraph/fingraph/app"
)

// Run serves the sandbox at FINGRAPH_SANDBOX_ADDR (app.DefaultSandboxAddr
// unless set) until ctx is done, then shuts it down. args are what follows
// the word sandbox; -h prints the settings and is not an error.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := app.ParseConfig(args, getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	logger := cfg.Logger(stdout)
	srv, err := app.StartSandbox(cfg, cmp.Or(cfg.SandboxAddr, app.DefaultSandboxAddr), logger)
	if err != nil {
		return err
	}
	base := "http://" + srv.Addr()
	logger.Info("sandbox listening", "url", base, "payments", base+"/payments", "banking", base+"/banking")
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	return srv.Shutdown(sctx)
}
