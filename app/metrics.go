package app

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fingraph/fingraph/bankpoll"
	"github.com/fingraph/fingraph/events"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the gateway's Prometheus metrics, on a registry of its own
// (no package-level state), served at /metrics.
type metrics struct {
	registry *prometheus.Registry
	// requests counts the gateway's own HTTP requests by route and class.
	requests *prometheus.CounterVec
	// upstream counts and times calls to the upstreams by upstream, method
	// and status code.
	upstreamCalls    *prometheus.CounterVec
	upstreamDuration *prometheus.HistogramVec
	// enrichmentLag is how long a stored webhook waited for its enriched
	// event (paymentsfeed.Enricher.Lag).
	enrichmentLag prometheus.Histogram
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fingraph_http_requests_total", Help: "HTTP requests by route and status class.",
		}, []string{"route", "code"}),
		upstreamCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fingraph_upstream_requests_total", Help: "Calls to the upstreams by upstream, method and status code.",
		}, []string{"upstream", "method", "code"}),
		upstreamDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "fingraph_upstream_request_duration_seconds", Help: "Duration of calls to the upstreams.",
			Buckets: prometheus.DefBuckets,
		}, []string{"upstream", "method", "code"}),
		enrichmentLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "fingraph_event_enrichment_lag_seconds", Help: "Time from a webhook stored (acknowledged) to its enriched event stored.",
			Buckets: []float64{.001, .002, .005, .01, .02, .05, .1, .2, .3, .5, .75, 1, 1.5, 2, 2.5, 3, 4, 5, 7.5, 10, 20, 60},
		}),
	}
	m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.upstreamCalls, m.upstreamDuration, m.enrichmentLag)
	return m
}

// watchBankPoll exports the banking poller's counters: how many corporations
// this replica polls now, and its polls, changes and failures.
func (m *metrics) watchBankPoll(s *bankpoll.Stats) {
	gauge := func(name, help string, v func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, v)
	}
	counter := func(name, help string, v func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, v)
	}
	m.registry.MustRegister(
		gauge("fingraph_live_corporations_polled", "Corporations whose banking changes this replica polls now (it holds their lease).",
			func() float64 { return float64(s.Polling.Load()) }),
		counter("fingraph_live_polls_total", "Completed polls of a corporation's banking listings.",
			func() float64 { return float64(s.Polls.Load()) }),
		counter("fingraph_live_changes_total", "Banking changes found by polling and announced.",
			func() float64 { return float64(s.Changes.Load()) }),
		counter("fingraph_live_poll_errors_total", "Polls that failed (upstream or JetStream) and were retried with back-off.",
			func() float64 { return float64(s.Errors.Load()) }),
		gauge("fingraph_live_subscribers", "Live subscribers with a corporation on this replica, whose corporations' banking changes are polled.",
			func() float64 { return float64(s.Subscribers.Load()) }),
		counter("fingraph_live_lease_takeovers_total", "Poll leases taken over from a replica that stopped renewing them.",
			func() float64 { return float64(s.Takeovers.Load()) }),
	)
}

// watchEventReads exports the messages read from the event stream for
// readers (history pages, lookups, resumes): what tenants' reads cost, which
// grows with their own events, not with the stream.
func (m *metrics) watchEventReads(b *events.Bus) {
	m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fingraph_event_reads_total",
		Help: "Messages read from the event stream for readers (history, lookups by id, resumes), not for the live fan-out."},
		func() float64 { return float64(b.Reads()) }))
}

// watchSharedReads exports the reads of an upstream answered by a call
// another operation made (roundtrip.ShareFrom) instead of one of their own.
func (m *metrics) watchSharedReads(upstream string, shared func() uint64) {
	m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fingraph_upstream_shared_reads_total",
		Help:        "Upstream reads answered by a call another operation made at the same time, not by a call of their own.",
		ConstLabels: prometheus.Labels{"upstream": upstream}},
		func() float64 { return float64(shared()) }))
}

// watchSharedQueries exports the queries answered by an identical query's
// execution of the same view (gqlhttp's operation sharing).
func (m *metrics) watchSharedQueries(shared func() uint64) {
	m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fingraph_shared_queries_total",
		Help: "Queries answered by the execution of an identical query of the same view that arrived at the same time."},
		func() float64 { return float64(shared()) }))
}

// instrument wraps an upstream's transport so that its calls are counted
// and timed; labels carry no URL, so no id or token reaches the metrics.
// The series are promhttp's instrumented round-tripper's (method and code
// as it names them, calls that got an answer), but each (method, code)
// pair's counter and histogram are looked up once and kept: promhttp builds
// a label map and hashes it twice on every call.
func (m *metrics) instrument(upstream string, rt http.RoundTripper) http.RoundTripper {
	return &instrumented{next: rt, upstream: upstream, calls: m.upstreamCalls, duration: m.upstreamDuration}
}

type instrumented struct {
	next     http.RoundTripper
	upstream string
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	series   sync.Map // seriesKey → *upstreamSeries
}

type seriesKey struct {
	method string
	code   int
}

type upstreamSeries struct {
	calls    prometheus.Counter
	duration prometheus.Observer
}

func (t *instrumented) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	k := seriesKey{r.Method, resp.StatusCode}
	s, ok := t.series.Load(k)
	if !ok {
		method, code := metricMethod(r.Method), metricCode(resp.StatusCode)
		s, _ = t.series.LoadOrStore(k, &upstreamSeries{
			calls:    t.calls.WithLabelValues(t.upstream, method, code),
			duration: t.duration.WithLabelValues(t.upstream, method, code),
		})
	}
	us := s.(*upstreamSeries)
	us.duration.Observe(time.Since(start).Seconds())
	us.calls.Inc()
	return resp, nil
}

// metricMethod names a method as promhttp does: the standard ones in lower
// case, anything else "unknown", so that the label's values stay few.
func metricMethod(m string) string {
	switch strings.ToUpper(m) {
	case "GET", "PUT", "HEAD", "POST", "DELETE", "CONNECT", "OPTIONS", "NOTIFY", "TRACE", "PATCH":
		return strings.ToLower(m)
	}
	return "unknown"
}

// metricCode names a status code as promhttp does.
func metricCode(code int) string {
	switch {
	case code == 0:
		return "200"
	case code >= 100 && code <= 599:
		return strconv.Itoa(code)
	}
	return "unknown"
}

// handler serves the metrics to GET and HEAD; other methods are 405.
func (m *metrics) handler() http.Handler {
	h := promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}
