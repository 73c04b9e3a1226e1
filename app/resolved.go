package app

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fingraph/fingraph/gqlhttp"
	"github.com/fingraph/fingraph/upstream/payments"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// resolved is what start-up derives from the validated settings, kept apart
// from them so that a Config says only what the operator asked for: where
// the upstreams are and with which keys (in sandbox mode, the in-process
// sandbox's address and demo keys), where JetStream and the uploads are
// stored in this run, and what the strict sandbox turns off. Start makes it
// once, in its first phase (resolve); the later phases only read it.
type resolved struct {
	// paymentsURL and bankingURL are the upstreams' base URLs, and
	// paymentsKeys the merchant's keys: the settings', or the in-process
	// sandbox's.
	paymentsURL, bankingURL string
	paymentsKeys            payments.Keys
	// sandboxAddr is the in-process sandbox's listening address, "" with
	// real upstreams.
	sandboxAddr string
	// storeDir is the embedded JetStream's directory: DataDir, or in
	// sandbox mode its sandbox/ subdirectory, fresh at each start as the
	// sandbox's data is; "" with an external cluster.
	storeDir string
	// uploadSpool is the directory this process spools uploads to, removed
	// at shutdown.
	uploadSpool string
	// reconcileInterval is ReconcileInterval, or 0 against the strict
	// sandbox, which shows no event listing to poll.
	reconcileInterval time.Duration
}

// sandboxURL is the in-process sandbox's base URL, or "".
func (r resolved) sandboxURL() string {
	if r.sandboxAddr == "" {
		return ""
	}
	return "http://" + r.sandboxAddr
}

// sandboxPaymentsKeys are the demo merchant's keys of the sandbox
// (docs/sandbox-payments.md, "Demo keys"); only sandbox mode uses them.
var sandboxPaymentsKeys = payments.Keys{Public: paymentsim.PublicKey, Private: paymentsim.PrivateKey, AccessToken: paymentsim.AccessToken}

// resolve is Start's first phase, and fills a.rt: the data directory is
// locked before anything reads or writes it, the upload spool made, and in
// sandbox mode the in-process sandbox must listen before the upstream
// clients are pointed at it. Against real upstreams it checks they answer
// instead. What it starts is recorded on a as it goes, so that a failure
// half-way is shut down.
func (a *App) resolve(ctx context.Context, cfg Config) (err error) {
	logger := a.logger
	a.rt = resolved{
		paymentsURL: cfg.PaymentsURL, bankingURL: cfg.BankingURL,
		paymentsKeys:      payments.Keys{Public: cfg.PaymentsPublic, Private: cfg.PaymentsPrivate, AccessToken: cfg.PaymentsAccess},
		reconcileInterval: cfg.ReconcileInterval,
	}
	if cfg.SandboxStrict {
		// The strict sandbox has no event listing; openUpstreams says so
		// once, with everything else it turns off.
		a.rt.reconcileInterval = 0
	}
	if cfg.NATSURL == "" {
		a.rt.storeDir = cfg.DataDir
		if a.dirLock, err = lockDataDir(cfg.DataDir); err != nil {
			return err
		}
	}
	if a.rt.uploadSpool, err = uploadSpool(cfg); err != nil {
		return err
	}
	if cfg.Mode != ModeSandbox {
		return checkUpstreams(ctx, cfg, logger)
	}
	if a.sandbox, err = startInProcessSandbox(cfg, logger); err != nil {
		return err
	}
	sb := "http://" + a.sandbox.Addr()
	a.rt.sandboxAddr = a.sandbox.Addr()
	a.rt.paymentsURL, a.rt.bankingURL = sb+"/payments", sb+"/banking"
	a.rt.paymentsKeys = sandboxPaymentsKeys
	logger.Info("no upstream configured: started the sandbox in-process with demo data",
		"sandbox", sb, "sms_outbox", sb+"/_sandbox/sms",
		"email_outbox", sb+"/_sandbox/email", "payments_public_key", a.rt.paymentsKeys.Public)
	if cfg.NATSURL == "" {
		if a.rt.storeDir, err = freshSandboxStore(cfg.DataDir); err != nil {
			return err
		}
	}
	return nil
}

// uploadSpool makes the directory this process spools uploads to, empty:
// uploads/ of the locked data directory (what a killed process left there
// is removed), or a directory of its own under FINGRAPH_UPLOAD_DIR or the
// system's temporary directory, which may be shared.
func uploadSpool(cfg Config) (string, error) {
	if cfg.UploadDir == "" && cfg.DataDir != "" && cfg.NATSURL == "" {
		dir := filepath.Join(cfg.DataDir, "uploads")
		if err := gqlhttp.PrepareUploadDir(dir); err != nil {
			return "", fmt.Errorf("FINGRAPH_UPLOAD_DIR: cannot prepare %s: %w", dir, err)
		}
		return dir, nil
	}
	parent := cmp.Or(cfg.UploadDir, os.TempDir())
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", fmt.Errorf("FINGRAPH_UPLOAD_DIR: cannot create %s: %w", parent, err)
	}
	dir, err := os.MkdirTemp(parent, "fingraph-uploads-")
	if err != nil {
		return "", fmt.Errorf("FINGRAPH_UPLOAD_DIR: cannot create a directory in %s: %w", parent, err)
	}
	return dir, nil
}
