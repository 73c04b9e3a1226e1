// Package benchkit holds what the measuring tools under bench/ share:
// starting and stopping the processes of a run (NATS, the sandbox, gateway
// replicas), posting JSON to a gateway
// or sandbox, and reading a gateway's /metrics.
package benchkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// Proc is a process of a run, logging to <dir>/<Name>.log.
type Proc struct {
	Name string
	Args []string
	Env  []string // added to this process's environment
	Cmd  *exec.Cmd
	log  *os.File
}

// Start starts the process, its output appended to its log in dir.
func (p *Proc) Start(dir string) error {
	log, err := os.OpenFile(filepath.Join(dir, p.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	p.log = log
	p.Cmd = exec.Command(p.Args[0], p.Args[1:]...)
	p.Cmd.Env = append(os.Environ(), p.Env...)
	p.Cmd.Stdout, p.Cmd.Stderr = log, log
	return p.Cmd.Start()
}

// Stop ends a running process with sig, waits for it, and closes its log.
func (p *Proc) Stop(sig syscall.Signal) {
	if p.Cmd != nil && p.Cmd.Process != nil && p.Cmd.ProcessState == nil {
		_ = p.Cmd.Process.Signal(sig)
		_ = p.Cmd.Wait()
	}
	if p.log != nil {
		p.log.Close()
	}
}

// FreePort is a loopback address free at the moment of the call.
func FreePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// PostJSON posts body as JSON to u (with a bearer when token is set) and
// decodes a 2xx answer into out when out is not nil; another status is an
// error quoting the answer.
func PostJSON(client *http.Client, u, token string, body, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %d %s", u, res.StatusCode, bytes.TrimSpace(data))
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// Metrics reads the unlabelled samples of a gateway's /metrics (Prometheus
// text), by name.
func Metrics(client *http.Client, gateway string) (map[string]float64, error) {
	res, err := client.Get(gateway + "/metrics")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: %d", res.StatusCode)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			out[name] = v
		}
	}
	return out, sc.Err()
}

// WaitOK polls u until it answers 200; the two minutes only end a broken
// run.
func WaitOK(u string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if res, err := http.Get(u); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s never answered 200", u)
}

// StartNATS starts a JetStream server on a free loopback port, storing in
// <dir>/nats.
func StartNATS(dir string) (*natsserver.Server, error) {
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true,
		StoreDir: filepath.Join(dir, "nats"), NoSigs: true, NoLog: true})
	if err != nil {
		return nil, err
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("NATS did not start")
	}
	return ns, nil
}

// StartSandbox starts the gateway binary bin's sandbox on a free port and
// waits until it answers; it returns the process and the sandbox's URL.
func StartSandbox(bin, dir string) (*Proc, string, error) {
	addr, err := FreePort()
	if err != nil {
		return nil, "", err
	}
	sb := &Proc{Name: "sandbox", Args: []string{bin, "sandbox", "-sandbox-addr", addr, "-log-level", "warn"}}
	if err := sb.Start(dir); err != nil {
		return nil, "", err
	}
	u := "http://" + addr
	if err := WaitOK(u + "/_sandbox/stats"); err != nil {
		sb.Stop(syscall.SIGTERM)
		return nil, "", err
	}
	return sb, u, nil
}

// StartReplicas starts n gateways from bin, each with env and its own
// FINGRAPH_ADDR on a free port, and waits
// until each is ready. It returns the processes and their base URLs; on
// an error it stops those it started.
func StartReplicas(bin, dir string, n int, env []string) ([]*Proc, []string, error) {
	var procs []*Proc
	var urls []string
	fail := func(err error) ([]*Proc, []string, error) {
		for _, p := range procs {
			p.Stop(syscall.SIGTERM)
		}
		return nil, nil, err
	}
	for i := range n {
		addr, err := FreePort()
		if err != nil {
			return fail(err)
		}
		p := &Proc{Name: fmt.Sprintf("replica-%d", i+1), Args: []string{bin}, Env: append(slices.Clone(env), "FINGRAPH_ADDR="+addr)}
		if err := p.Start(dir); err != nil {
			return fail(err)
		}
		procs = append(procs, p)
		urls = append(urls, "http://"+addr)
		if err := WaitOK("http://" + addr + "/readyz"); err != nil {
			return fail(err)
		}
	}
	return procs, urls, nil
}
