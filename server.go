// Command fingraph is a GraphQL backend-for-frontend gateway over a payments
// and a banking upstream. `fingraph` runs the gateway; `fingraph sandbox`
// runs only the emulator of both upstreams.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/idempotency"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
	"github.com/fingraph/fingraph/upstream/sandbox"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fingraph:", err)
		os.Exit(1)
	}
}

// run starts the gateway (or, with the argument "sandbox", only the sandbox)
// and serves until ctx is done, then shuts down gracefully.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	args = args[1:]
	if len(args) > 0 && args[0] == "sandbox" {
		return runSandbox(ctx, args[1:], getenv, stdout)
	}
	cfg, err := parseConfig(args, getenv, stdout)
	if err != nil {
		return err
	}
	app, err := start(ctx, cfg, cfg.logger(stdout))
	if err != nil {
		return err
	}
	<-ctx.Done()
	return app.shutdown()
}

// runSandbox serves only the emulator, for pointing another gateway or a
// test at it.
func runSandbox(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseConfig(args, getenv, stdout)
	if err != nil {
		return err
	}
	if cfg.SandboxAddr == "" {
		cfg.SandboxAddr = "127.0.0.1:9090"
	}
	logger := cfg.logger(stdout)
	sb, srv, addr, err := startSandbox(cfg.SandboxAddr, cfg.SandboxTokenGrace, logger)
	if err != nil {
		return err
	}
	logger.Info("sandbox listening", "url", "http://"+addr, "payments", "http://"+addr+"/payments", "banking", "http://"+addr+"/banking")
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	sb.Close()
	return err
}

// app is a running gateway and everything it started.
type app struct {
	cfg     config
	logger  *slog.Logger
	server  *http.Server
	addr    string
	engine  *engine.Engine
	sandbox *sandbox.Sandbox
	sbSrv   *http.Server
	sbAddr  string
	tempDir string
	served  chan error
}

// Demo keys of the sandbox's merchant, documented in docs/sandbox.md.
var sandboxPaymentsKeys = payments.Keys{Public: "pk_sandbox_demo", Private: "sk_sandbox_demo", AccessToken: "at_sandbox_demo"}

// start wires and starts the gateway; it returns once the listener accepts.
func start(ctx context.Context, cfg config, logger *slog.Logger) (_ *app, err error) {
	a := &app{cfg: cfg, logger: logger, served: make(chan error, 1)}
	defer func() {
		if err != nil {
			_ = a.shutdown()
		}
	}()

	if cfg.sandboxMode() {
		addr := cfg.SandboxAddr
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		a.sandbox, a.sbSrv, a.sbAddr, err = startSandbox(addr, cfg.SandboxTokenGrace, logger.With("component", "sandbox"))
		if err != nil {
			return nil, err
		}
		cfg.PaymentsURL = "http://" + a.sbAddr + "/payments"
		cfg.BankingURL = "http://" + a.sbAddr + "/banking"
		cfg.PaymentsPublic, cfg.PaymentsPrivate, cfg.PaymentsAccess = sandboxPaymentsKeys.Public, sandboxPaymentsKeys.Private, sandboxPaymentsKeys.AccessToken
		logger.Info("no upstream configured: started the sandbox in-process with demo data",
			"sandbox", "http://"+a.sbAddr, "payments_public_key", cfg.PaymentsPublic)
	}

	dataDir := cfg.DataDir
	if dataDir == "" && cfg.NATSURL == "" {
		if a.tempDir, err = os.MkdirTemp("", "fingraph-data-"); err != nil {
			return nil, fmt.Errorf("FINGRAPH_DATA_DIR: cannot create a temporary directory: %w", err)
		}
		dataDir = a.tempDir
	}
	a.engine, err = engine.Open(ctx, engine.Config{URL: cfg.NATSURL, DataDir: dataDir, Logger: logger.With("component", "nats")})
	if err != nil {
		return nil, err
	}
	if a.engine.Embedded() {
		logger.Info("embedded JetStream started", "data_dir", dataDir)
	} else {
		logger.Info("connected to NATS JetStream", "url", cfg.NATSURL)
	}
	attemptsKV, err := a.engine.KeyValue(ctx, idempotency.Bucket, idempotency.TTL)
	if err != nil {
		return nil, err
	}

	pay, err := payments.NewClient(cfg.PaymentsURL, payments.Keys{
		Public: cfg.PaymentsPublic, Private: cfg.PaymentsPrivate, AccessToken: cfg.PaymentsAccess,
	}, payments.WithTimeout(cfg.UpstreamTimeout), payments.WithLogger(logger.With("upstream", "payments")))
	if err != nil {
		return nil, fmt.Errorf("FINGRAPH_PAYMENTS_URL: %w", err)
	}

	// session.Transport orders a session's calls and writes their refreshed
	// tokens back; the transport under it is tuned like the client's own.
	bankHTTP := &http.Client{Transport: session.Transport(&http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 15 * time.Second,
	})}
	bank, err := banking.NewClient(cfg.BankingURL, banking.WithVersion(cfg.BankingVersion), banking.WithHTTPClient(bankHTTP),
		banking.WithTimeout(cfg.UpstreamTimeout), banking.WithLogger(logger.With("upstream", "banking")))
	if err != nil {
		return nil, fmt.Errorf("FINGRAPH_BANKING_URL: %w", err)
	}
	sessionsKV, err := a.engine.KeyValue(ctx, session.Bucket, cfg.SessionTTL)
	if err != nil {
		return nil, err
	}

	handler := newRouter(routeDeps{
		cfg:      cfg,
		logger:   logger,
		engine:   a.engine,
		payments: pay,
		banking:  bank,
		sessions: session.NewJetStreamStore(sessionsKV, cfg.SessionTTL),
		attempts: idempotency.New(attemptsKV),
	})
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("FINGRAPH_ADDR: cannot listen on %s: %w", cfg.Addr, err)
	}
	a.addr = ln.Addr().String()
	a.server = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	go func() { a.served <- a.server.Serve(ln) }()
	logger.Info("gateway listening", "graphql", "http://"+displayAddr(a.addr)+"/graphql", "playground", "http://"+displayAddr(a.addr)+"/")
	return a, nil
}

// displayAddr turns ":8080" or "[::]:8080" into "localhost:8080" for logs.
func displayAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// startSandbox starts a seeded sandbox on addr (loopback is expected).
func startSandbox(addr string, tokenGrace time.Duration, logger *slog.Logger) (*sandbox.Sandbox, *http.Server, string, error) {
	sb := sandbox.New(sandbox.Config{Logger: logger, TokenGrace: tokenGrace})
	sb.Seed()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		sb.Close()
		return nil, nil, "", fmt.Errorf("FINGRAPH_SANDBOX_ADDR: cannot listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: sb, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("sandbox server stopped", "err", err)
		}
	}()
	return sb, srv, ln.Addr().String(), nil
}

// shutdown stops accepting requests, lets running ones finish, then stops
// the sandbox and the engine. It is safe on a partly started app.
func (a *app) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.ShutdownTimeout)
	defer cancel()
	var errs []error
	if a.server != nil {
		a.logger.Info("shutting down")
		errs = append(errs, a.server.Shutdown(ctx))
		if err := <-a.served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	if a.sbSrv != nil {
		errs = append(errs, a.sbSrv.Shutdown(ctx))
	}
	if a.sandbox != nil {
		a.sandbox.Close()
	}
	if a.engine != nil {
		a.engine.Close()
	}
	if a.tempDir != "" {
		errs = append(errs, os.RemoveAll(a.tempDir))
	}
	return errors.Join(errs...)
}
