// Command lb is a small HTTP load balancer for running several gateway
// replicas on one machine: the README's deploy section and the rolling
// restart run (bench/rolling) put it in front of the replicas. It is a
// stand-in for the load balancer of a real deployment (a cloud balancer,
// nginx, Envoy), with the two behaviours a rolling restart needs of one:
//
//   - a health check: every backend's /readyz is read every -check
//     interval, and only ready backends get new requests (a draining
//     gateway answers 503 there before it stops; FINGRAPH_SHUTDOWN_DRAIN);
//   - a retry on a refused connection: a request that could not be sent at
//     all (the backend's listener is closed) goes to the next ready backend.
//     Nothing that a backend may have received is sent twice.
//
// Websocket upgrades pass through (net/http/httputil.ReverseProxy), and the
// client's address is forwarded in X-Forwarded-For (set
// FINGRAPH_TRUSTED_PROXIES=127.0.0.1 on the gateways to key limits on it).
//
//	go run ./bench/lb -listen 127.0.0.1:8080 -backends http://127.0.0.1:8081,http://127.0.0.1:8082
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "listen address")
	backends := flag.String("backends", "", "comma-separated base URLs of the replicas")
	check := flag.Duration("check", 250*time.Millisecond, "health-check interval (GET /readyz)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *listen, *backends, *check); err != nil {
		fmt.Fprintln(os.Stderr, "lb:", err)
		os.Exit(1)
	}
}

type backend struct {
	url   *url.URL
	ready atomic.Bool
}

type balancer struct {
	backends []*backend
	next     atomic.Uint64
	proxy    *httputil.ReverseProxy
	logger   *slog.Logger
}

// maxBody is the largest request body the balancer keeps to retry a
// request on another backend; larger bodies are passed on once.
const maxBody = 1 << 20

func run(ctx context.Context, listen, list string, check time.Duration) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	b := &balancer{logger: logger}
	for _, raw := range strings.Split(list, ",") {
		if raw = strings.TrimSpace(raw); raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return fmt.Errorf("-backends: %q is not a URL", raw)
		}
		b.backends = append(b.backends, &backend{url: u})
	}
	if len(b.backends) == 0 {
		return errors.New("-backends: name at least one replica")
	}
	b.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetXForwarded()
			// The transport picks the backend (retry); this is the first.
			r.Out.URL.Scheme, r.Out.URL.Host = "http", "backend"
		},
		Transport:     b,
		FlushInterval: -1, // server-sent events pass at once
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			logger.Warn("no backend answered", "path", r.URL.Path, "err", err)
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	for _, be := range b.backends {
		b.probe(ctx, be)
	}
	go b.checkLoop(ctx, check)
	srv := &http.Server{Addr: listen, Handler: http.HandlerFunc(b.serve), ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	logger.Info("lb listening", "url", "http://"+ln.Addr().String(), "backends", list)
	go func() { <-ctx.Done(); _ = srv.Shutdown(context.Background()) }()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// serve keeps a small body in memory, so that a refused connection can be
// retried on the next backend with the same bytes.
func (b *balancer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Body != nil && r.ContentLength >= 0 && r.ContentLength <= maxBody {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	b.proxy.ServeHTTP(w, r)
}

// RoundTrip sends r to the next ready backend, and to the one after when
// the connection is refused before anything was sent.
func (b *balancer) RoundTrip(r *http.Request) (*http.Response, error) {
	n := len(b.backends)
	start := int(b.next.Add(1) % uint64(n))
	var lastErr error
	for i := range n {
		be := b.backends[(start+i)%n]
		if !be.ready.Load() {
			continue
		}
		out := r.Clone(r.Context())
		out.URL.Scheme, out.URL.Host, out.Host = be.url.Scheme, be.url.Host, ""
		if i > 0 && r.GetBody != nil {
			body, _ := r.GetBody()
			out.Body = body
		} else if i > 0 && r.Body != nil && r.Body != http.NoBody {
			break // a large body went to the first backend; it is not sent twice
		}
		res, err := http.DefaultTransport.RoundTrip(out)
		if err == nil {
			return res, nil
		}
		lastErr = err
		var op *net.OpError
		if !errors.As(err, &op) || op.Op != "dial" {
			return nil, err // it may have been received: not retried
		}
		be.ready.Store(false)
	}
	if lastErr == nil {
		lastErr = errors.New("no ready backend")
	}
	return nil, lastErr
}

func (b *balancer) checkLoop(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, be := range b.backends {
				b.probe(ctx, be)
			}
		}
	}
}

func (b *balancer) probe(ctx context.Context, be *backend) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, be.url.String()+"/readyz", nil)
	res, err := http.DefaultClient.Do(req)
	ready := err == nil && res.StatusCode == http.StatusOK
	if err == nil {
		res.Body.Close()
	}
	if be.ready.Swap(ready) != ready {
		b.logger.Info("backend", "url", be.url.String(), "ready", ready)
	}
}
