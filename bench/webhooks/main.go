// Command webhooks loads a running gateway's webhook intake
// (/webhooks/payments) and reports acknowledgements per second and the
// acknowledgement latency (p50/p95/p99). It is a measuring tool, run by hand
// (docs/performance-events.md, "Webhook intake"):
//
//	go build -o /tmp/fingraph . && /tmp/fingraph -addr 127.0.0.1:18491 \
//	  -sandbox-addr 127.0.0.1:18492 -data-dir /tmp/fg-webhooks -log-level warn \
//	  -register-webhook false -webhook-rate-limit 1000000 &
//	go run ./bench/webhooks -url http://127.0.0.1:18491 -sandbox http://127.0.0.1:18492
//
// The gateway's per-address limit (FINGRAPH_WEBHOOK_RATE_LIMIT) counts only
// refused deliveries, and every webhook here is well formed, so raising it
// (as above) changes nothing; it keeps the command the one the documented
// figures were taken with. -register-webhook false keeps the sandbox
// from delivering the same events itself.
//
// First it fires real events in the sandbox (POST /_sandbox/trigger), so
// that each webhook names an event the upstream knows and the gateway's
// enrichment does its real work (a GET of the event) behind the intake.
// Then two phases, each at the given concurrency:
//
//   - unique: every event's webhook posted once (each is stored);
//   - repeat: the same webhooks again, round and round, for a fixed
//     duration (each is a duplicate: the intake acknowledges an id it has
//     just stored without storing it again, and JetStream deduplicates
//     the rest by id).
//
// Only 202 counts as an acknowledgement; any other status is reported.
//
// Between the two phases it waits for the enrichment to catch up, and
// reports the enrichment lag (webhook stored to enriched event stored,
// from the gateway's fingraph_event_enrichment_lag_seconds histogram) of
// the events enriched during the unique burst and of those enriched after
// it, and how long the catch-up took (the catch-up is seen in the sandbox's
// count of event reads, so a gateway without the histogram can be measured
// too). It also reports its own CPU time per acknowledgement: the load
// program shares the machine with the gateway, so each sender posts over
// one plain keep-alive connection (-nethttp: through net/http's client,
// which costs the load program about twice the CPU; figures taken with the
// two are not comparable).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:18491", "the gateway")
	sandbox := flag.String("sandbox", "http://127.0.0.1:18492", "the gateway's sandbox (control API)")
	events := flag.Int("events", 20000, "real events to fire in the sandbox, one webhook each in the unique phase")
	conc := flag.Int("c", 32, "concurrent senders")
	repeat := flag.Duration("repeat", 10*time.Second, "how long the repeat phase posts already-stored webhooks (0 skips it)")
	name := flag.String("event", "OrderCreated", "the sandbox trigger to fire")
	metrics := flag.String("metrics", "", "the gateway's /metrics (default: -url + /metrics)")
	flag.Parse()
	if *metrics == "" {
		*metrics = *url + "/metrics"
	}
	if err := run(*url, *sandbox, *metrics, *name, *events, *conc, *repeat); err != nil {
		fmt.Fprintln(os.Stderr, "webhooks:", err)
		os.Exit(1)
	}
}

var client = &http.Client{
	Timeout:   30 * time.Second,
	Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute},
}

func run(url, sandbox, metrics, name string, n, conc int, repeat time.Duration) error {
	t0 := time.Now()
	bodies, err := fire(sandbox, name, n, 8)
	if err != nil {
		return err
	}
	fmt.Printf("fired %d %s events in the sandbox in %s\n", n, name, time.Since(t0).Round(time.Millisecond))
	fmt.Printf("%d concurrent senders\n", conc)

	var next atomic.Int64
	before, err := scrapeLag(metrics)
	if err != nil {
		fmt.Println("no enrichment lag:", err)
		metrics = ""
	}
	reads0, err := eventReads(sandbox)
	if err != nil {
		return err
	}
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
	// Enrichment has caught up when the upstream has been asked for every
	// event (the sandbox counts the reads); the lag histogram, when the
	// gateway has it, says how long each waited.
	t1 := time.Now()
	var burst, caught lagHistogram
	if metrics != "" {
		if burst, err = scrapeLag(metrics); err != nil {
			return err
		}
	}
	reads1, err := eventReads(sandbox)
	if err != nil {
		return err
	}
	for reads := reads1; reads-reads0 < unique.acks && time.Since(t1) < 2*time.Minute; {
		time.Sleep(20 * time.Millisecond)
		if reads, err = eventReads(sandbox); err != nil {
			return err
		}
	}
	caughtUp := time.Since(t1)
	if metrics == "" {
		fmt.Printf("enrichment: %d of %d events read during the burst; caught up %s after it\n",
			reads1-reads0, unique.acks, caughtUp.Round(10*time.Millisecond))
		return repeatPhase(url, conc, repeat, bodies, &next)
	}
	// The read comes before the publish: wait for the last observations.
	for caught = burst; caught.count-before.count < float64(unique.acks) && time.Since(t1) < 2*time.Minute; {
		if caught, err = scrapeLag(metrics); err != nil {
			return err
		}
		if caught.count-before.count < float64(unique.acks) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	fmt.Printf("enrichment: %.0f of %d events enriched during the burst, lag p50 %s p99 %s; %.0f after it, lag p50 %s p99 %s; caught up %s after the burst\n",
		burst.count-before.count, unique.acks, burst.sub(before).quantile(0.5), burst.sub(before).quantile(0.99),
		caught.count-burst.count, caught.sub(burst).quantile(0.5), caught.sub(burst).quantile(0.99),
		caughtUp.Round(10*time.Millisecond))
	return repeatPhase(url, conc, repeat, bodies, &next)
}

// repeatPhase posts already-stored webhooks round and round for repeat.
func repeatPhase(url string, conc int, repeat time.Duration, bodies [][]byte, next *atomic.Int64) error {
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
	// cpu is the load program's own CPU time (user + system) over the phase.
	cpu time.Duration
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
	s += fmt.Sprintf(", load program CPU %.0f µs/ack (%.2f cores)", float64(r.cpu.Microseconds())/float64(max(r.acks, 1)), r.cpu.Seconds()/r.elapsed.Seconds())
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
	target, err := neturl.Parse(url + "/webhooks/payments")
	if err != nil || target.Scheme != "http" {
		return result{}, fmt.Errorf("-url must be http://host:port: %v", err)
	}
	var mu sync.Mutex
	r := result{statuses: map[int]int{}}
	var firstErr error
	var wg sync.WaitGroup
	t0, cpu0 := time.Now(), cpuTime()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 4096)
			statuses := map[int]int{}
			var err error
			p := &poster{target: target}
			defer p.close()
			for err == nil {
				body, ok := next()
				if !ok {
					break
				}
				start := time.Now()
				var status int
				if *useNetHTTP {
					status, err = postNetHTTP(target.String(), body)
				} else {
					status, err = p.post(body)
				}
				if err != nil {
					break
				}
				d := time.Since(start)
				statuses[status]++
				if status == http.StatusAccepted {
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
	r.elapsed, r.cpu = time.Since(t0), cpuTime()-cpu0
	r.acks = r.statuses[http.StatusAccepted]
	return r, firstErr
}

// useNetHTTP posts through net/http's client instead of a poster, to
// compare the load program's own cost.
var useNetHTTP = flag.Bool("nethttp", false, "post through net/http's client (costlier for the load program) instead of one plain HTTP/1.1 connection per sender")

func postNetHTTP(url string, body []byte) (int, error) {
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// poster posts webhooks over one keep-alive HTTP/1.1 connection with a
// reused request buffer: net/http's client costs the load program CPU per
// request (its connection goroutines, the request and header values), taken
// from the same cores as the gateway it measures. The
// answer is read with http.ReadResponse, so it is parsed as HTTP.
type poster struct {
	target *neturl.URL
	conn   net.Conn
	br     *bufio.Reader
	buf    []byte
}

func (p *poster) post(body []byte) (int, error) {
	if p.conn == nil {
		c, err := net.Dial("tcp", p.target.Host)
		if err != nil {
			return 0, err
		}
		p.conn, p.br = c, bufio.NewReaderSize(c, 4096)
	}
	p.buf = append(p.buf[:0], "POST "...)
	p.buf = append(p.buf, p.target.RequestURI()...)
	p.buf = append(p.buf, " HTTP/1.1\r\nHost: "...)
	p.buf = append(p.buf, p.target.Host...)
	p.buf = append(p.buf, "\r\nContent-Type: application/json\r\nContent-Length: "...)
	p.buf = strconv.AppendInt(p.buf, int64(len(body)), 10)
	p.buf = append(p.buf, "\r\n\r\n"...)
	p.buf = append(p.buf, body...)
	if _, err := p.conn.Write(p.buf); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(p.br, nil)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.Close || err != nil {
		p.close()
	}
	return resp.StatusCode, err
}

func (p *poster) close() {
	if p.conn != nil {
		p.conn.Close()
		p.conn = nil
	}
}

// eventReads counts the sandbox's answers to event reads (GET
// /payments/v?/events/{id}): one per enriched webhook.
func eventReads(sandbox string) (int, error) {
	resp, err := client.Get(sandbox + "/_sandbox/stats")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var st struct {
		Routes map[string]int `json:"routes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return 0, fmt.Errorf("sandbox stats: %w", err)
	}
	n := 0
	for route, calls := range st.Routes {
		if strings.HasPrefix(route, "GET /payments/v") && strings.HasSuffix(route, "/events/{id}") {
			n += calls
		}
	}
	return n, nil
}

// cpuTime is this process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// lagHistogram is the gateway's enrichment lag histogram at one moment:
// cumulative counts per upper bound (seconds), as /metrics shows them.
type lagHistogram struct {
	le    []float64
	cum   []float64
	count float64
}

const lagMetric = "fingraph_event_enrichment_lag_seconds"

// scrapeLag reads the enrichment lag histogram from /metrics.
func scrapeLag(url string) (lagHistogram, error) {
	resp, err := client.Get(url)
	if err != nil {
		return lagHistogram{}, err
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return lagHistogram{}, fmt.Errorf("metrics: status %d, %v", resp.StatusCode, err)
	}
	var h lagHistogram
	found := false
	for line := range strings.Lines(string(text)) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, lagMetric+`_bucket{le="`):
			rest := strings.TrimPrefix(line, lagMetric+`_bucket{le="`)
			bound, val, ok := strings.Cut(rest, `"} `)
			le, err1 := strconv.ParseFloat(bound, 64)
			n, err2 := strconv.ParseFloat(val, 64)
			if !ok || err1 != nil || err2 != nil {
				return lagHistogram{}, fmt.Errorf("metrics: cannot read %q", line)
			}
			h.le, h.cum = append(h.le, le), append(h.cum, n)
		case strings.HasPrefix(line, lagMetric+"_count "):
			h.count, _ = strconv.ParseFloat(strings.TrimPrefix(line, lagMetric+"_count "), 64)
			found = true
		}
	}
	if !found {
		return lagHistogram{}, fmt.Errorf("metrics: no %s at %s (a gateway from before it?)", lagMetric, url)
	}
	return h, nil
}

// sub is what was observed between two scrapes.
func (h lagHistogram) sub(earlier lagHistogram) lagHistogram {
	d := lagHistogram{le: h.le, cum: slices.Clone(h.cum), count: h.count - earlier.count}
	for i := range d.cum {
		if i < len(earlier.cum) {
			d.cum[i] -= earlier.cum[i]
		}
	}
	return d
}

// quantile estimates a quantile by linear interpolation inside its bucket,
// as Prometheus's histogram_quantile does: the precision is the bucket's.
func (h lagHistogram) quantile(q float64) string {
	if h.count <= 0 {
		return "-"
	}
	rank := q * h.count
	lower, below := 0.0, 0.0
	for i, le := range h.le {
		if h.cum[i] >= rank {
			if math.IsInf(le, 1) {
				return fmt.Sprintf("> %s", fmtSeconds(lower))
			}
			inBucket := h.cum[i] - below
			frac := 1.0
			if inBucket > 0 {
				frac = (rank - below) / inBucket
			}
			return fmtSeconds(lower + frac*(le-lower))
		}
		lower, below = le, h.cum[i]
	}
	return "-"
}

func fmtSeconds(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.1f ms", s*1000)
	}
	return fmt.Sprintf("%.2f s", s)
}
