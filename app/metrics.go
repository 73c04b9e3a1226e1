package app

import (
	"net/http"

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
	// event (events.Enricher.Lag).
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

// watchLive exports the live poller's counters: how many corporations
// this replica polls now, and its polls, changes and failures.
func (m *metrics) watchLive(s *bankpoll.Stats) {
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

// instrument wraps an upstream's transport so that its calls are counted
// and timed; labels carry no URL, so no id or token reaches the metrics.
func (m *metrics) instrument(upstream string, rt http.RoundTripper) http.RoundTripper {
	l := prometheus.Labels{"upstream": upstream}
	return promhttp.InstrumentRoundTripperCounter(m.upstreamCalls.MustCurryWith(l),
		promhttp.InstrumentRoundTripperDuration(m.upstreamDuration.MustCurryWith(l), rt))
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
