package app

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fingraph/fingraph/livequery"
)

// watchLiveQueries exports the live queries' counters: how many run now on
// this replica, how often they ran, and how many answers they sent (a run
// whose answer equals the last sends none).
func (m *metrics) watchLiveQueries(e *livequery.Engine) {
	m.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fingraph_live_queries",
			Help: "@live queries running on this replica."},
			func() float64 { return float64(e.Stats().Active) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fingraph_live_query_runs_total",
			Help: "Executions of @live queries, first answers included."},
			func() float64 { return float64(e.Stats().Runs) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fingraph_live_query_answers_total",
			Help: "Answers of @live queries sent: first answers and answers that differ from the last."},
			func() float64 { return float64(e.Stats().Answers) }),
	)
}
