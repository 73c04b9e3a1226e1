#!/usr/bin/env bash
# readme-latency.sh measures the README query's latency when every upstream
# call takes 20 ms: a gateway binary in sandbox mode (the in-process sandbox,
# the anonymous demo session), latency injected through the sandbox's
# faults API, then wrk at one connection and at 16, each for 8 s after a
# 2 s warm-up. One upstream round trip is the floor: the query's two
# listings run at once (docs/performance.md, "The README query's latency").
#
#   go build -o /tmp/fingraph . && bench/readme-latency.sh /tmp/fingraph 18581
#
# Needs wrk (Debian package). Ports: PORT (gateway) and PORT+1 (sandbox),
# on loopback.
default_port=18581
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

"$bin" -addr "127.0.0.1:$port" -sandbox-addr "127.0.0.1:$sbport" -data-dir "$dir" -log-level warn \
  -register-webhook false -reconcile-interval 0 >"$dir/gateway.log" 2>&1 &
gw=$!
trap 'kill $gw 2>/dev/null; wait $gw 2>/dev/null; rm -rf "$dir"' EXIT
wait_ready
curl -sf -X POST "http://127.0.0.1:$sbport/_sandbox/faults" -H 'Content-Type: application/json' \
  -d '{"route":"*","latency_ms":20}' >/dev/null

url="http://127.0.0.1:$port/graphql"
for c in 1 16; do
  wrk -t1 -c"$c" -d2s -s "$here/readme-query.lua" "$url" >/dev/null
  wrk -t1 -c"$c" -d8s --latency -s "$here/readme-query.lua" "$url" |
    awk -v c="$c" '/Requests\/sec/ {rps=$2} / 50%/ {p50=$2} / 99%/ {p99=$2} /non-2xx/ {err=$NF}
      END {print c " connection(s): p50 " p50 ", p99 " p99 ", " rps " requests/s, " err " errors"}'
done
