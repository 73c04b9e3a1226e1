package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// cpuNow is the process's CPU time so far (the gateway and the sandbox run
// in it).
func cpuNow(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestPersonsHistoryCostsItsOwnEventsOnly: a person's request of twenty
// aliased eventHistory(first: 1) reads as many messages from the event
// stream (fingraph_event_reads_total) with 1,600 payments events in it as
// without them, and finds the same newest event. The CPU of both is logged
// for docs/performance.md.
func TestPersonsHistoryCostsItsOwnEventsOnly(t *testing.T) {
	g := liveGateway(t)
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	staff := g.as(g.signInStaff(t))
	ben.query(t, blockPerson, map[string]any{"id": bankingsim.KatiID}).decode(t, &map[string]any{})
	ben.query(t, restorePerson, map[string]any{"id": bankingsim.KatiID}).decode(t, &map[string]any{})

	var q strings.Builder
	q.WriteString("{")
	for i := range 20 {
		fmt.Fprintf(&q, " h%d: eventHistory(first: 1) { edges { cursor node { id name } } pageInfo { hasNextPage } }", i)
	}
	q.WriteString(" }")
	const rounds = 30
	measure := func() (reads float64, cpu time.Duration, newest string) {
		before, start := g.metric(t, "fingraph_event_reads_total"), cpuNow(t)
		for range rounds {
			var d map[string]struct {
				Edges []struct {
					Node struct{ Name string } `json:"node"`
				} `json:"edges"`
			}
			ben.query(t, q.String(), nil).decode(t, &d)
			if len(d["h0"].Edges) != 1 {
				t.Fatalf("ben's newest event: %+v", d["h0"])
			}
			newest = d["h0"].Edges[0].Node.Name
		}
		return (g.metric(t, "fingraph_event_reads_total") - before) / rounds, (cpuNow(t) - start) / rounds, newest
	}
	quietReads, quietCPU, quietNewest := measure()

	for range 1600 {
		g.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "OrderCreated"}, &sandboxEvent{})
	}
	deadline := time.Now().Add(120 * time.Second)
	for seen := 0; seen < 1600; {
		seen = 0
		var after *string
		for {
			page := staff.history(t, 100, after, []string{"OrderCreated"})
			seen += len(page.Edges)
			if !page.PageInfo.HasNextPage {
				break
			}
			after = page.PageInfo.EndCursor
		}
		if seen < 1600 && time.Now().After(deadline) {
			t.Fatalf("%d of the 1,600 payments events reached the stream", seen)
		}
		if seen < 1600 {
			time.Sleep(100 * time.Millisecond)
		}
	}
	busyReads, busyCPU, busyNewest := measure()

	t.Logf("20 aliased eventHistory(first: 1) of a person, per request: %.0f messages read and %v CPU without payments events; %.0f and %v with 1,600",
		quietReads, quietCPU, busyReads, busyCPU)
	if busyReads != quietReads || busyNewest != quietNewest {
		t.Fatalf("a person's history read %.0f messages per request with 1,600 payments events in the stream, %.0f without (newest %s, %s)",
			busyReads, quietReads, busyNewest, quietNewest)
	}
}

// aliasedHistory is a request of n aliased eventHistory(first: 1).
func aliasedHistory(n int) string {
	var q strings.Builder
	q.WriteString("{")
	for i := range n {
		fmt.Fprintf(&q, " h%d: eventHistory(first: 1) { edges { cursor node { id name } } pageInfo { hasNextPage } }", i)
	}
	q.WriteString(" }")
	return q.String()
}

// TestAliasedEventHistoryCountsWhatItReads: the complexity limit counts
// each page's fixed reads (the newest event of each subject of the scope),
// so with the limit at 1,000 a person's five aliased eventHistory(first: 1)
// pass and twenty are refused before a message of the stream is read
// (fingraph_event_reads_total does not move).
func TestAliasedEventHistoryCountsWhatItReads(t *testing.T) {
	g := startGateway(t, "-limits", "complexity=1000")
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	ben.query(t, blockPerson, map[string]any{"id": bankingsim.KatiID}).decode(t, &map[string]any{})
	ben.query(t, restorePerson, map[string]any{"id": bankingsim.KatiID}).decode(t, &map[string]any{})

	before := g.metric(t, "fingraph_event_reads_total")
	var d map[string]struct {
		Edges []struct{ Cursor string } `json:"edges"`
	}
	ben.query(t, aliasedHistory(5), nil).decode(t, &d)
	if len(d["h4"].Edges) != 1 {
		t.Fatalf("five pages: %+v", d)
	}
	if g.metric(t, "fingraph_event_reads_total") == before {
		t.Fatal("five pages read nothing from the stream")
	}

	before = g.metric(t, "fingraph_event_reads_total")
	r := ben.query(t, aliasedHistory(20), nil)
	if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["reason"] != "COMPLEXITY_LIMIT_EXCEEDED" {
		t.Errorf("twenty pages: want COMPLEXITY_LIMIT_EXCEEDED, got %+v", r.Errors)
	}
	if n := g.metric(t, "fingraph_event_reads_total") - before; n != 0 {
		t.Errorf("a refused request read %.0f messages from the event stream", n)
	}
}
