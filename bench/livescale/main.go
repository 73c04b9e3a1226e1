// Command livescale records live events at scale: persons of many
// corporations subscribed to their corporation's events, changes made in
// the sandbox outside the gateway, and what the gateway costs for it. It is
// a recorded run, not a test (docs/performance-events.md, "Live events at scale";
// bench/README.md says how to run it).
//
// -mode scale targets one running gateway in sandbox mode: it bulk-seeds
// corporations and persons in the sandbox, signs every person in through
// the gateway, opens one graphql-transport-ws subscription per person, and
// prints the gateway's memory per subscription, the banking calls per
// second while they are held, and the delay from a sandbox credit to its
// event on every subscriber.
//
// -mode lease starts everything itself (NATS JetStream in this process,
// the sandbox and two replicas built from this tree), kills one replica
// with SIGKILL under a steady stream of credits, and prints how long each
// corporation's changes took to flow again and the changes lost or
// announced twice.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	mode := flag.String("mode", "scale", "scale (one running gateway) or lease (two replicas started here, one killed)")
	url := flag.String("url", "http://127.0.0.1:18461", "scale: the gateway")
	sandbox := flag.String("sandbox", "http://127.0.0.1:18462", "scale: the gateway's sandbox (control API)")
	pprof := flag.String("pprof", "", "scale: the gateway's FINGRAPH_PPROF_ADDR as a URL; when set, the heap is collected before each memory reading")
	heapProfile := flag.String("heap-profile", "", "scale: write the gateway's heap profile while the subscriptions are held to this file, and the one before they opened to the file with .base appended (needs -pprof)")
	cpuProfile := flag.String("cpu-profile", "", "scale: write the gateway's CPU profile over two intervals from the first round's credits to this file (needs -pprof)")
	corps := flag.Int("corporations", 1000, "corporations to seed (lease: default 20)")
	persons := flag.Int("persons", 10, "scale: persons of each corporation, each with one subscription")
	parallel := flag.Int("parallel", 32, "scale: sign-ins and sockets opened at once")
	interval := flag.Duration("interval", 10*time.Second, "the gateway's live poll interval (scale: as the gateway was started; lease: given to the replicas)")
	window := flag.Duration("window", 0, "scale: how long the banking calls are counted (default two intervals)")
	rounds := flag.Int("rounds", 2, "scale: rounds of one credit to every corporation")
	hold := flag.Duration("hold", 0, "scale: keep the subscriptions this long after measuring (to profile the gateway meanwhile)")
	names := flag.String("names", "WalletBalanceChanged,WalletTransactionCreated", "event names subscribed to")
	subject := flag.Bool("subject", false, "scale: also select each event's subject { id }")
	countName := flag.String("count", "WalletTransactionCreated", "lease: the event name of one credit, counted per subscriber")
	before := flag.Duration("before", 0, "lease: steady credits before the kill (default 4 intervals)")
	after := flag.Duration("after", 0, "lease: steady credits after the kill (default 5 intervals)")
	keep := flag.Bool("keep", false, "lease: keep the temporary directory with the processes' logs")
	pollSetting := flag.String("poll-setting", "FINGRAPH_BANK_POLL_INTERVAL", "lease: the replicas' environment variable of the poll interval")
	leaseBucket := flag.String("lease-bucket", "live_leases", "lease: the JetStream bucket of the poll leases")
	flag.Parse()

	var err error
	switch *mode {
	case "scale":
		if *window == 0 {
			*window = 2 * *interval
		}
		err = runScale(scaleConfig{gateway: *url, sandbox: *sandbox, pprof: *pprof, heapProfile: *heapProfile, cpuProfile: *cpuProfile,
			corporations: *corps, persons: *persons, parallel: *parallel, interval: *interval, window: *window,
			hold: *hold, rounds: *rounds, names: strings.Split(*names, ","), subject: *subject})
	case "lease":
		if !flagSet("corporations") {
			*corps = 20
		}
		if *before == 0 {
			*before = 4 * *interval
		}
		if *after == 0 {
			*after = 5 * *interval
		}
		err = runLease(leaseConfig{corporations: *corps, interval: *interval, before: *before, after: *after,
			names: strings.Split(*names, ","), countName: *countName, keep: *keep, pollIntervalFlag: *pollSetting, leaseBucket: *leaseBucket})
	default:
		err = fmt.Errorf("unknown -mode %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "livescale:", err)
		os.Exit(1)
	}
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
