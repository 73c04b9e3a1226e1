package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fingraph/fingraph/bench/internal/benchkit"
)

// leaseConfig is the take-over run's flags.
type leaseConfig struct {
	corporations     int
	interval         time.Duration
	before, after    time.Duration
	names            []string
	countName        string
	keep             bool
	pollIntervalFlag string
	leaseBucket      string
}

// creditLog is every credit of the run, by corporation.
type creditLog struct {
	mu    sync.Mutex
	times map[string][]time.Time
}

func (l *creditLog) add(corp string, at time.Time) {
	l.mu.Lock()
	l.times[corp] = append(l.times[corp], at)
	l.mu.Unlock()
}

// runLease: two replicas on one JetStream in front of one sandbox, two
// persons of each corporation subscribed (one on each replica), a credit
// to every corporation each interval; then the first replica is killed
// (SIGKILL: no lease is handed over, it must expire) and its subscribers
// resume on the other. It reports how long after the kill each
// corporation's changes flowed again, in intervals, and the changes lost
// or announced twice over all subscribers.
func runLease(c leaseConfig) error {
	dir, err := os.MkdirTemp("", "fingraph-livescale-")
	if err != nil {
		return err
	}
	if c.keep {
		fmt.Println("logs in", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	fmt.Println("building the gateway …")
	bin := filepath.Join(dir, "fingraph")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	ns, err := benchkit.StartNATS(dir)
	if err != nil {
		return err
	}
	defer ns.Shutdown()
	sb, sandboxURL, err := benchkit.StartSandbox(bin, dir)
	if err != nil {
		return err
	}
	defer sb.Stop(syscall.SIGTERM)
	shared := []string{
		"FINGRAPH_NATS_URL=" + ns.ClientURL(),
		"FINGRAPH_PAYMENTS_URL=" + sandboxURL + "/payments", "FINGRAPH_BANKING_URL=" + sandboxURL + "/banking",
		"FINGRAPH_PAYMENTS_PUBLIC_KEY=pk_sandbox_demo", "FINGRAPH_PAYMENTS_PRIVATE_KEY=sk_sandbox_demo",
		"FINGRAPH_PAYMENTS_ACCESS_TOKEN=at_sandbox_demo", "FINGRAPH_DOWNLOAD_KEY=livescale-run",
		"FINGRAPH_LOG_LEVEL=warn", "FINGRAPH_PUBLIC_RATE_LIMIT=1000000", "FINGRAPH_LIMITS=socketsPerAddress=20000",
		c.pollIntervalFlag + "=" + c.interval.String(),
	}
	replicas, urls, err := benchkit.StartReplicas(bin, dir, 2, shared)
	if err != nil {
		return err
	}
	for _, p := range replicas {
		defer p.Stop(syscall.SIGTERM)
	}

	b, err := seed(sandboxURL, c.corporations, 2)
	if err != nil {
		return fmt.Errorf("bulk seeding: %w", err)
	}
	persons, err := signInAll(urls[0], b, 8)
	if err != nil {
		return fmt.Errorf("sign-in: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	// One person of each corporation on replica 1 first, so that replica
	// 1 takes every lease; then the other on replica 2, which can only
	// wait. Killing replica 1 then makes every corporation a take-over.
	var first, second []*person
	for i, p := range persons {
		if i%2 == 0 {
			first = append(first, p)
		} else {
			second = append(second, p)
		}
	}
	sc := scaleConfig{names: c.names}
	subs1, err := subscribeAll(ctx, first, []string{wsURL(urls[0]), wsURL(urls[1])}, sc.query(), 8)
	if err != nil {
		return fmt.Errorf("subscribing on replica 1: %w", err)
	}
	held, err := waitLeases(ctx, js, c.leaseBucket, c.corporations, 3*c.interval+10*time.Second)
	if err != nil {
		return err
	}
	subs2, err := subscribeAll(ctx, second, []string{wsURL(urls[1]), wsURL(urls[0])}, sc.query(), 8)
	if err != nil {
		return fmt.Errorf("subscribing on replica 2: %w", err)
	}
	subs := append(subs1, subs2...)
	if h := holders(held); len(h) != 1 {
		return fmt.Errorf("replica 1 alone has subscribers, yet the leases name %d replicas", len(h))
	}
	fmt.Printf("%d corporations, %d subscribers, one of each corporation on each replica; replica 1 holds all %d leases; poll interval %s\n",
		c.corporations, len(subs), len(held), c.interval)
	time.Sleep(2 * c.interval) // every corporation polled once: a credit from now on is a change

	credits := &creditLog{times: map[string][]time.Time{}}
	creditAll := func(tag string) error {
		return forEach(len(b.Corporations), 4, func(i int) error {
			corp := b.Corporations[i]
			at := time.Now()
			if err := credit(sandboxURL, corp.WalletID, 100, tag); err != nil {
				return err
			}
			credits.add(corp.ID, at)
			return nil
		})
	}
	steady := func(d time.Duration) error {
		end := time.Now().Add(d)
		for n := 0; time.Now().Before(end); n++ {
			next := time.Now().Add(c.interval)
			if err := creditAll(fmt.Sprintf("livescale %d", n)); err != nil {
				return err
			}
			time.Sleep(time.Until(next))
		}
		return nil
	}
	fmt.Printf("crediting every corporation each interval for %s …\n", c.before)
	if err := steady(c.before); err != nil {
		return err
	}
	atKill, err := readLeases(ctx, js, c.leaseBucket)
	if err != nil {
		return err
	}
	killed := time.Now()
	replicas[0].Stop(syscall.SIGKILL)
	fmt.Printf("killed replica-1 (SIGKILL), holding %d of %d leases\n", len(atKill), c.corporations)
	takeovers := map[string]time.Duration{}
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for ctx.Err() == nil && len(takeovers) < len(atKill) && time.Since(killed) < c.after+3*c.interval {
			now, err := readLeases(ctx, js, c.leaseBucket)
			at := time.Since(killed)
			if err == nil {
				for k, r := range now {
					if _, done := takeovers[k]; !done && r != atKill[k] {
						takeovers[k] = at
					}
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	if err := creditAll("livescale at the kill"); err != nil {
		return err
	}
	if err := steady(c.after); err != nil {
		return err
	}
	<-watchDone
	var times []time.Duration
	for _, d := range takeovers {
		times = append(times, d)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	fmt.Printf("leases taken over: %d of %d; kill to take-over: min %s, median %s, max %s (interval %s; %.2f intervals at most)\n",
		len(times), len(atKill), percentile(times, 0).Round(time.Millisecond), percentile(times, .5).Round(time.Millisecond),
		percentile(times, 1).Round(time.Millisecond), c.interval, percentile(times, 1).Seconds()/c.interval.Seconds())
	// Let the last credits arrive, the resumed subscribers catch up.
	deadline := time.Now().Add(3*c.interval + 10*time.Second)
	for time.Now().Before(deadline) && !allCounted(subs, credits, c.countName) {
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	reportLease(subs, credits, killed, c)
	return nil
}

// count is what one subscriber received of its corporation's credits.
func count(s *sub, name string) (total, distinct int) {
	seen := map[string]bool{}
	for _, a := range s.received() {
		if a.name != name || a.corporation != s.p.corp {
			continue
		}
		total++
		if !seen[a.id] {
			seen[a.id] = true
			distinct++
		}
	}
	return total, distinct
}

func allCounted(subs []*sub, credits *creditLog, name string) bool {
	credits.mu.Lock()
	defer credits.mu.Unlock()
	for _, s := range subs {
		if _, d := count(s, name); d < len(credits.times[s.p.corp]) {
			return false
		}
	}
	return true
}

func reportLease(subs []*sub, credits *creditLog, killed time.Time, c leaseConfig) {
	credits.mu.Lock()
	defer credits.mu.Unlock()
	lost, repeated, extra, made, resumes := 0, 0, 0, 0, 0
	resumed := map[string]time.Duration{} // corporation -> first arrival after the kill of a credit made at or after it
	for _, s := range subs {
		total, distinct := count(s, c.countName)
		want := len(credits.times[s.p.corp])
		made += want
		repeated += total - distinct
		if distinct < want {
			lost += want - distinct
		} else {
			extra += distinct - want
		}
		s.mu.Lock()
		resumes += s.resumes
		s.mu.Unlock()
		var firstAfter time.Time
		for _, t := range credits.times[s.p.corp] {
			if !t.Before(killed) {
				firstAfter = t
				break
			}
		}
		for _, a := range s.received() {
			if a.corporation == s.p.corp && a.name == c.countName && !firstAfter.IsZero() && a.at.After(firstAfter) {
				d := a.at.Sub(killed)
				if old, ok := resumed[s.p.corp]; !ok || d < old {
					resumed[s.p.corp] = d
				}
				break
			}
		}
	}
	var gaps []time.Duration
	for _, d := range resumed {
		gaps = append(gaps, d)
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	iv := func(d time.Duration) string {
		return fmt.Sprintf("%s (%.2f intervals)", d.Round(time.Millisecond), d.Seconds()/c.interval.Seconds())
	}
	fmt.Printf("\nkill to the first event of a credit made at or after it, per corporation (n=%d of %d): min %s, median %s, max %s\n",
		len(gaps), c.corporations, iv(percentile(gaps, 0)), iv(percentile(gaps, .5)), iv(percentile(gaps, 1)))
	fmt.Printf("%s over all %d subscribers: %d expected, %d lost, %d repeated (same event id), %d extra (another id for a change already announced); %d subscriptions resumed after the kill\n",
		c.countName, len(subs), made, lost, repeated, extra, resumes)
}

// readLeases returns the poll leases: corporation key -> the replica
// holding it (the value's "replica").
func readLeases(ctx context.Context, js jetstream.JetStream, bucket string) (map[string]string, error) {
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		return nil, err
	}
	keys, err := kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		e, err := kv.Get(ctx, k)
		if err != nil {
			continue // handed back meanwhile
		}
		var v struct {
			Replica string `json:"replica"`
		}
		if json.Unmarshal(e.Value(), &v) != nil || v.Replica == "" {
			return nil, fmt.Errorf("lease %s: a value without a replica: %q", k, e.Value())
		}
		out[k] = v.Replica
	}
	return out, nil
}

// waitLeases waits until n corporations have a lease.
func waitLeases(ctx context.Context, js jetstream.JetStream, bucket string, n int, within time.Duration) (map[string]string, error) {
	deadline := time.Now().Add(within)
	for {
		l, err := readLeases(ctx, js, bucket)
		if err == nil && len(l) >= n {
			return l, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("after %s, %d of %d corporations have a poll lease in %s (last error: %v)", within, len(l), n, bucket, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func holders(leases map[string]string) map[string]int {
	out := map[string]int{}
	for _, r := range leases {
		out[r]++
	}
	return out
}
