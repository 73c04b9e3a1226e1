package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// scaleConfig is the one-replica run's flags.
type scaleConfig struct {
	gateway, sandbox, pprof, heapProfile string
	cpuProfile                           string
	corporations, persons, parallel      int
	interval, window, hold               time.Duration
	rounds                               int
	names                                []string
	subject                              bool
}

func (c scaleConfig) query() string {
	names := `"` + strings.Join(c.names, `", "`) + `"`
	sel := "id name createdAt payload"
	if c.subject {
		sel += " subject { id }"
	}
	return `subscription($after: String) { events(names: [` + names + `], after: $after) { cursor event { ` + sel + ` } } }`
}

// runScale: bulk persons, one subscription each on one gateway, then the
// gateway's memory per subscription, the upstream calls per second while
// they are held, and the delay from a credit made in the sandbox to its
// event on every subscriber of its corporation.
func runScale(c scaleConfig) error {
	t0 := time.Now()
	b, err := seed(c.sandbox, c.corporations, c.persons)
	if err != nil {
		return fmt.Errorf("bulk seeding: %w", err)
	}
	fmt.Printf("seeded %d corporations × %d persons in %s\n", c.corporations, c.persons, time.Since(t0).Round(time.Millisecond))
	signedOut, err := readMetrics(c.gateway, c.pprof, "")
	if err != nil {
		return err
	}
	t0 = time.Now()
	persons, err := signInAll(c.gateway, b, c.parallel)
	if err != nil {
		return fmt.Errorf("sign-in: %w", err)
	}
	fmt.Printf("signed %d persons in through the gateway in %s\n", len(persons), time.Since(t0).Round(time.Millisecond))

	baseProfile := ""
	if c.heapProfile != "" {
		baseProfile = c.heapProfile + ".base"
	}
	base, err := readMetrics(c.gateway, c.pprof, baseProfile)
	if err != nil {
		return err
	}
	fmt.Println("before:", base)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 = time.Now()
	subs, err := subscribeAll(ctx, persons, []string{wsURL(c.gateway)}, c.query(), c.parallel)
	if err != nil {
		return fmt.Errorf("subscribing: %w", err)
	}
	opened := time.Now()
	fmt.Printf("opened %d subscriptions in %s\n", len(subs), opened.Sub(t0).Round(time.Millisecond))
	// Past one poll of every corporation, so that the pollers (started by
	// the first subscriber of each) hold what they keep for it.
	time.Sleep(max(2*time.Second, c.interval+c.interval/2))
	held, err := readMetrics(c.gateway, c.pprof, c.heapProfile)
	if err != nil {
		return err
	}
	n := float64(len(subs))
	fmt.Println("holding:", held)
	per := func(a, b float64) float64 { return (a - b) / n / 1e3 }
	fmt.Printf("per subscription: %.1f KB held (live heap %.1f KB + stacks %.1f KB); %.2f goroutines; heap in use %.1f KB, resident %.1f KB\n",
		per(held.heapAlloc+held.stacks, base.heapAlloc+base.stacks), per(held.heapAlloc, base.heapAlloc), per(held.stacks, base.stacks),
		(held.goroutines-base.goroutines)/n, per(held.heapInuse, base.heapInuse), per(held.rss, base.rss))
	fmt.Printf("per subscribed person, its session included: %.1f KB held, heap in use %.1f KB, resident %.1f KB\n",
		per(held.heapAlloc+held.stacks, signedOut.heapAlloc+signedOut.stacks), per(held.heapInuse, signedOut.heapInuse), per(held.rss, signedOut.rss))

	if err := upstreamRate(c); err != nil {
		return err
	}
	for r := range c.rounds {
		if err := deliveryRound(c, r, b, subs); err != nil {
			return err
		}
	}
	time.Sleep(c.hold)
	return nil
}

// upstreamRate counts the banking calls over a window while every
// subscription is held and nothing changes.
func upstreamRate(c scaleConfig) error {
	m0, err := readMetrics(c.gateway, "", "")
	if err != nil {
		return err
	}
	s0, err := stats(c.sandbox)
	if err != nil {
		return err
	}
	t0 := time.Now()
	time.Sleep(c.window)
	s1, err := stats(c.sandbox)
	if err != nil {
		return err
	}
	m1, err := readMetrics(c.gateway, "", "")
	if err != nil {
		return err
	}
	secs := time.Since(t0).Seconds()
	if polls := m1.polls - m0.polls; polls > 0 {
		fmt.Printf("polls: %.1f/s, one per corporation every %.2f s on average\n", polls/secs, float64(c.corporations)*secs/polls)
	}
	total := 0
	routes := slices.Sorted(maps.Keys(s1))
	fmt.Printf("banking calls over %.1f s (interval %s, %d corporations):\n", secs, c.interval, c.corporations)
	for _, r := range routes {
		d := s1[r] - s0[r]
		if d == 0 || !strings.Contains(r, "/banking/") {
			continue
		}
		total += d
		fmt.Printf("  %-70s %8.1f/s  %.2f per corporation per interval\n", r, float64(d)/secs,
			float64(d)/secs*c.interval.Seconds()/float64(c.corporations))
	}
	fmt.Printf("upstream calls: %.1f/s; per corporation per interval %.2f (the listings polled)\n",
		float64(total)/secs, float64(total)/secs*c.interval.Seconds()/float64(c.corporations))
	return nil
}

// deliveryRound credits one wallet of every corporation through the
// sandbox and waits until every subscriber of that corporation received an
// event of it, or a deadline of three intervals and 20 s.
func deliveryRound(c scaleConfig, round int, b *bulk, subs []*sub) error {
	credited := make(map[string]time.Time, len(b.Corporations))
	var mu sync.Mutex
	profiled := make(chan error, 1)
	if round == 0 && c.cpuProfile != "" && c.pprof != "" {
		go func() { profiled <- saveCPUProfile(c.pprof, c.cpuProfile, 2*c.interval) }()
	} else {
		profiled <- nil
	}
	start := time.Now()
	err := forEach(len(b.Corporations), 8, func(i int) error {
		corp := b.Corporations[i]
		at := time.Now()
		if err := credit(c.sandbox, corp.WalletID, int64(100+round), fmt.Sprintf("livescale round %d", round)); err != nil {
			return err
		}
		mu.Lock()
		credited[corp.ID] = at
		mu.Unlock()
		return nil
	})
	if err != nil {
		return fmt.Errorf("crediting: %w", err)
	}
	fmt.Printf("round %d: credited %d wallets in %s\n", round+1, len(credited), time.Since(start).Round(time.Millisecond))
	deadline := time.Now().Add(3*c.interval + 20*time.Second)
	var delays, found, fanned []time.Duration
	var lastOf map[string]time.Duration
	for {
		delays, found, fanned, lastOf = delays[:0], found[:0], fanned[:0], map[string]time.Duration{}
		missing := 0
		for _, s := range subs {
			at := credited[s.p.corp]
			d := time.Duration(-1)
			for _, a := range s.received() {
				if a.corporation == s.p.corp && a.at.After(at) {
					d = a.at.Sub(at)
					found = append(found, a.created.Sub(at))
					fanned = append(fanned, a.at.Sub(a.created))
					break
				}
			}
			if d < 0 {
				missing++
				continue
			}
			delays = append(delays, d)
			lastOf[s.p.corp] = max(lastOf[s.p.corp], d)
		}
		if missing == 0 || time.Now().After(deadline) {
			if missing > 0 {
				fmt.Printf("round %d: %d of %d subscribers got no event of their corporation's credit\n", round+1, missing, len(subs))
			}
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, d := range [][]time.Duration{delays, found, fanned} {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	}
	last := slices.Sorted(maps.Values(lastOf))
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	fmt.Printf("round %d: credit to subscriber (n=%d): p50 %s, p99 %s, max %s; credit to its corporation's last subscriber (n=%d): p50 %s, p99 %s, max %s; interval %s\n",
		round+1, len(delays), ms(percentile(delays, .5)), ms(percentile(delays, .99)), ms(percentile(delays, 1)),
		len(last), ms(percentile(last, .5)), ms(percentile(last, .99)), ms(percentile(last, 1)), c.interval)
	fmt.Printf("round %d: of which credit to the event's announcement (createdAt): p50 %s, p99 %s; announcement to the subscriber: p50 %s, p99 %s\n",
		round+1, ms(percentile(found, .5)), ms(percentile(found, .99)), ms(percentile(fanned, .5)), ms(percentile(fanned, .99)))
	return <-profiled
}

// saveCPUProfile writes the gateway's CPU profile over d to path.
func saveCPUProfile(pprof, path string, d time.Duration) error {
	res, err := http.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", pprof, int(d.Seconds())))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, res.Body)
	return err
}
