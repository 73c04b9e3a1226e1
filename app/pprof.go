package app

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// checkPprofAddr accepts only loopback addresses: profiles show the
// process's memory and call stacks, which are for an operator on the host,
// never for the network. Its errors leave naming the setting to the caller.
func checkPprofAddr(addr string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return errors.New("profiles are served on a loopback address only, such as 127.0.0.1:6060")
	}
	return nil
}

// startPprof serves the Go profiles on their own loopback listener, apart
// from the gateway's routes, when FINGRAPH_PPROF_ADDR is set.
func (a *App) startPprof() error {
	if a.cfg.PprofAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", a.cfg.PprofAddr)
	if err != nil {
		return fmt.Errorf("FINGRAPH_PPROF_ADDR: cannot listen on %s: %w", a.cfg.PprofAddr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	a.pprof = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = a.pprof.Serve(ln) }()
	a.logger.Info("serving Go profiles", "pprof", "http://"+ln.Addr().String()+"/debug/pprof/")
	return nil
}
