package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/fingraph/fingraph/upstream/sandbox"
)

// DefaultSandboxAddr is where the sandbox listens unless told otherwise, in
// process or as `fingraph sandbox`: a known address, so that `fingraph
// trigger` and a browser reach the outboxes without reading a log.
const DefaultSandboxAddr = "127.0.0.1:9090"

// SandboxServer is a seeded sandbox listening on loopback: the in-process
// sandbox of sandbox mode, or the whole of `fingraph sandbox`.
type SandboxServer struct {
	sb   *sandbox.Sandbox
	srv  *http.Server
	addr string
}

// Addr is the address the sandbox listens on, such as 127.0.0.1:9090.
func (s *SandboxServer) Addr() string { return s.addr }

// Shutdown stops accepting, lets running calls finish until ctx is done,
// then stops the sandbox (its webhook sender).
func (s *SandboxServer) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	s.sb.Close()
	return err
}

// StartSandbox starts a seeded sandbox on addr (loopback is expected) with
// the sandbox settings of cfg: its token grace, strict mode, starting faults
// and, in tests, the middleware in front of it.
func StartSandbox(cfg Config, addr string, logger *slog.Logger) (*SandboxServer, error) {
	sb := sandbox.New(sandbox.Config{Logger: logger, TokenGrace: cfg.SandboxTokenGrace, Strict: cfg.SandboxStrict})
	sb.Seed()
	for _, f := range cfg.SandboxFaults {
		if err := sb.SetFault(f); err != nil {
			sb.Close()
			return nil, fmt.Errorf("FINGRAPH_SANDBOX_FAULTS: %s: %w", f.Route, err)
		}
	}
	var handler http.Handler = sb
	if cfg.SandboxMiddleware != nil {
		handler = cfg.SandboxMiddleware(handler)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		sb.Close()
		return nil, fmt.Errorf("FINGRAPH_SANDBOX_ADDR: cannot listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("sandbox server stopped", "err", err)
		}
	}()
	return &SandboxServer{sb: sb, srv: srv, addr: ln.Addr().String()}, nil
}

// startInProcessSandbox starts the sandbox of sandbox mode: at
// FINGRAPH_SANDBOX_ADDR when set (a failure to listen there is an error),
// else at DefaultSandboxAddr, or a free loopback port when that is taken.
func startInProcessSandbox(cfg Config, logger *slog.Logger) (*SandboxServer, error) {
	sbLogger := logger.With("component", "sandbox")
	if cfg.SandboxAddr != "" {
		return StartSandbox(cfg, cfg.SandboxAddr, sbLogger)
	}
	s, err := StartSandbox(cfg, DefaultSandboxAddr, sbLogger)
	if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
		return s, err
	}
	s, err = StartSandbox(cfg, "127.0.0.1:0", sbLogger)
	if err == nil {
		logger.Warn("the sandbox's default address is taken, so it listens on a free port instead; point trigger at it with -sandbox-url",
			"default", DefaultSandboxAddr, "sandbox", "http://"+s.Addr())
	}
	return s, err
}
