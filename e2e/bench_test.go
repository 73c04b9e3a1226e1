package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// BenchmarkReadmeQuery measures the README's query end to end: HTTP to the
// gateway, GraphQL execution with loaders, and the two upstream calls to the
// in-process sandbox over loopback HTTP. It reports upstream calls per query
// from the sandbox's own counters. Results and the command: docs/performance.md.
func BenchmarkReadmeQuery(b *testing.B) {
	// The anonymous demo session of sandbox mode, as `go run .` serves it.
	g := startGateway(b, "-log-level", "warn", "-sandbox-anonymous", "true")
	body, _ := json.Marshal(map[string]any{"query": readmeQuery})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	post := func() {
		resp, err := client.Post(g.URL+"/graphql", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || bytes.Contains(raw, []byte(`"errors"`)) {
			b.Fatalf("status %d: %s", resp.StatusCode, raw)
		}
	}
	post()
	reset, _ := http.NewRequest(http.MethodPost, g.SandboxURL+"/_sandbox/stats/reset", nil)
	if resp, err := client.Do(reset); err == nil {
		resp.Body.Close()
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			post()
		}
	})
	b.StopTimer()
	resp, err := client.Get(g.SandboxURL + "/_sandbox/stats")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var s sandboxStats
	_ = json.NewDecoder(resp.Body).Decode(&s)
	b.ReportMetric(float64(s.Total)/float64(b.N), "upstream-calls/op")
}
