// Command webhooks loads a running gateway's webhook intake
// (/webhooks/payments) and reports acknowledgements per second and the
// acknowledgement latency (p50/p95/p99). It is a measuring tool, run by hand
// (docs/performance.md, "Webhook intake"):
//
//	go build -o /tmp/fingraph . && /tmp/fingraph -addr 127.0.0.1:18491 \
//	  -sandbox-addr 127.0.0.1:18492 -data-dir /tmp/fg-webhooks -log-level warn \
//	  -register-webhook false -webhook-rate-limit 1000000 &
//	go run ./bench/webhooks -url http://127.0.0.1:18491 -sandbox http://127.0.0.1:18492
//
// The gateway limits each sending address (FINGRAPH_WEBHOOK_RATE_LIMIT,
// 200/s by default); all load comes from one address, so the run needs the
// limit raised, as above. -register-webhook false keeps the sandbox from
// delivering the same events itself.
//
// First it fires real events in the sandbox (POST /_sandbox/trigger), so
// that each webhook names an event the upstream knows and the gateway's
// enrichment does its real work (a GET of the event) behind the intake.
// Then two phases, each at the given concurrency:
//
//   - unique: every event's webhook posted once (each is stored);
//   - repeat: the same webhooks again, round and round, for a fixed
//     duration (each is a duplicate that JetStream deduplicates by id).
//
// Only 202 counts as an acknowledgement; any other status is reported.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:18491", "the gateway")
	sandbox := flag.String("sandbox", "http://127.0.0.1:18492", "the gateway's sandbox (control API)")
	events := flag.Int("events", 20000, "real events to fire in the sandbox, one webhook each in the unique phase")
	conc := flag.Int("c", 32, "concurrent senders")
	repeat := flag.Duration("repeat", 10*time.Second, "how long the repeat phase posts already-stored webhooks (0 skips it)")
	name := flag.String("event", "OrderCreated", "the sandbox trigger to fire")
	flag.Parse()
	if err := run(*url, *sandbox, *name, *events, *conc, *repeat); err != nil {
		fmt.Fprintln(os.Stderr, "webhooks:", err)
		os.Exit(1)
	}
}

var client = &http.Client{
	Timeout:   30 * time.Second,
	Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute},
}

func run(url, sandbox, name string, n, conc int, repeat time.Duration) error {
	t0 := time.Now()
	bodies, err := fire(sandbox, name, n, 8)
	if err != nil {
		return err
	}
	fmt.Printf("fired %d %s events in the sandbox in %s\n", n, name, time.Since(t0).Round(time.Millisecond))
	fmt.Printf("%d concurrent senders\n", conc)

	var next atomic.Int64
	unique, err := load(url, conc, func() ([]byte, bool) {
		i := next.Add(1) - 1
		if i >= int64(len(bodies)) {
			return nil, false
		}
		return bodies[i], true
	})
	if err != nil {
		return err
	}
	fmt.Println("unique  ", unique)
	if repeat > 0 {
		next.Store(0)
		end := time.Now().Add(repeat)
		dup, err := load(url, conc, func() ([]byte, bool) {
			if time.Now().After(end) {
				return nil, false
			}
			return bodies[(next.Add(1)-1)%int64(len(bodies))], true
		})
		if err != nil {
			return err
		}
		fmt.Println("repeated", dup)
	}
	return nil
}

// fire triggers n events in the sandbox with p parallel calls and returns
// the webhook body of each, as the upstream would send it.
func fire(sandbox, name string, n, p int) ([][]byte, error) {
	bodies := make([][]byte, n)
	var next atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || firstErr.Load() != nil {
					return
				}
				resp, err := client.Post(sandbox+"/_sandbox/trigger", "application/json", strings.NewReader(`{"name":"`+name+`"}`))
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				var ev struct {
					ID, Name  string
					CreatedAt string `json:"created_at"`
				}
				err = json.NewDecoder(resp.Body).Decode(&ev)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || ev.ID == "" {
					firstErr.CompareAndSwap(nil, fmt.Errorf("trigger %s: status %d, %v", name, resp.StatusCode, err))
					return
				}
				bodies[i], _ = json.Marshal(map[string]string{"id": ev.ID, "name": ev.Name, "createdAt": ev.CreatedAt})
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return nil, err
	}
	return bodies, nil
}

type result struct {
	acks     int
	statuses map[int]int
	elapsed  time.Duration
	lat      []time.Duration
}

func (r result) String() string {
	if len(r.lat) == 0 {
		return "no acknowledgement"
	}
	slices.Sort(r.lat)
	pct := func(p float64) time.Duration { return r.lat[min(len(r.lat)-1, int(p*float64(len(r.lat))))] }
	s := fmt.Sprintf("%7d acks in %s: %8.0f acks/s, p50 %s, p95 %s, p99 %s, max %s",
		r.acks, r.elapsed.Round(time.Millisecond), float64(r.acks)/r.elapsed.Seconds(),
		ms(pct(0.50)), ms(pct(0.95)), ms(pct(0.99)), ms(r.lat[len(r.lat)-1]))
	for st, n := range r.statuses {
		if st != http.StatusAccepted {
			s += fmt.Sprintf(", %d answered %d", n, st)
		}
	}
	return s
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

// load posts the bodies next hands out, from conc senders, until it has
// no more. Latency counts acknowledgements (202) only.
func load(url string, conc int, next func() ([]byte, bool)) (result, error) {
	var mu sync.Mutex
	r := result{statuses: map[int]int{}}
	var firstErr error
	var wg sync.WaitGroup
	t0 := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			statuses := map[int]int{}
			var err error
			for err == nil {
				body, ok := next()
				if !ok {
					break
				}
				start := time.Now()
				var resp *http.Response
				resp, err = client.Post(url+"/webhooks/payments", "application/json", bytes.NewReader(body))
				if err != nil {
					break
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				d := time.Since(start)
				statuses[resp.StatusCode]++
				if resp.StatusCode == http.StatusAccepted {
					lat = append(lat, d)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			r.lat = append(r.lat, lat...)
			for st, n := range statuses {
				r.statuses[st] += n
			}
			if firstErr == nil {
				firstErr = err
			}
		}()
	}
	wg.Wait()
	r.elapsed = time.Since(t0)
	r.acks = r.statuses[http.StatusAccepted]
	return r, firstErr
}
