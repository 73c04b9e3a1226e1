package app

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The upstream round-tripper keeps promhttp's series: the same calls,
// answered with the same codes, give the same counts under the same label
// values, and a call without an answer counts nowhere.
func TestUpstreamMetricsAreThoseOfPromhttp(t *testing.T) {
	ours, theirs := newMetrics(), newMetrics()
	answers := []struct {
		method string
		code   int
	}{{"GET", 200}, {"GET", 200}, {"POST", 201}, {"PUT", 409}, {"get", 503}, {"PROPFIND", 207}, {"DELETE", 0}, {"GET", -1}}
	fake := http.RoundTripper(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		code := answerCode(r)
		if code < 0 {
			return nil, errors.New("no answer")
		}
		return &http.Response{StatusCode: code, Request: r}, nil
	}))
	l := prometheus.Labels{"upstream": "payments"}
	rts := []http.RoundTripper{
		ours.instrument("payments", fake),
		promhttp.InstrumentRoundTripperCounter(theirs.upstreamCalls.MustCurryWith(l),
			promhttp.InstrumentRoundTripperDuration(theirs.upstreamDuration.MustCurryWith(l), fake)),
	}
	for _, rt := range rts {
		for _, a := range answers {
			req, _ := http.NewRequest(a.method, "http://upstream/x", nil)
			req.Header.Set("X-Code", itoa(a.code))
			_, _ = rt.RoundTrip(req)
		}
	}
	for _, name := range []string{"fingraph_upstream_requests_total", "fingraph_upstream_request_duration_seconds_count"} {
		a, b := gather(t, ours.registry, name), gather(t, theirs.registry, name)
		if a != b || a == "" {
			t.Errorf("%s:\nours   %s\ntheirs %s", name, a, b)
		}
	}
	if n := strings.Count(gather(t, ours.registry, "fingraph_upstream_requests_total"), "\n"); n != 6 {
		t.Errorf("%d series, want 6 (GET 200, POST 201, PUT 409, GET 503, unknown 207, DELETE 200)", n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func answerCode(r *http.Request) int {
	n := 0
	s := r.Header.Get("X-Code")
	neg := strings.HasPrefix(s, "-")
	for _, c := range strings.TrimPrefix(s, "-") {
		n = n*10 + int(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// gather writes one metric family's samples, without the durations' sums
// (which differ run to run), one per line in the registry's order.
func gather(t *testing.T, reg *prometheus.Registry, name string) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		family := mf.GetName()
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, lp := range m.GetLabel() {
				labels = append(labels, lp.GetName()+"="+lp.GetValue())
			}
			switch {
			case family == name:
				b.WriteString(strings.Join(labels, ",") + " " + itoa(int(m.GetCounter().GetValue())) + "\n")
			case family+"_count" == name:
				b.WriteString(strings.Join(labels, ",") + " " + itoa(int(m.GetHistogram().GetSampleCount())) + "\n")
			}
		}
	}
	return b.String()
}
