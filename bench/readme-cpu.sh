#!/usr/bin/env bash
# readme-cpu.sh measures the README query's CPU per request against real sockets:
# a gateway binary in real-upstream mode against a sandbox in a process of
# its own, loaded by wrk with 16 connections; the gateway process's CPU time
# (user + system, /proc/<pid>/stat) over the requests of a 10 s run after a
# 3 s warm-up, and the sandbox's over the same run (the upstream calls the
# gateway made), with the ratio of the two and the calls per request.
#
#   go build -o /tmp/fingraph . && bench/readme-cpu.sh /tmp/fingraph 18911
#
# Needs wrk (Debian package) and Linux's /proc. Ports: PORT (gateway) and
# PORT+1 (sandbox), on loopback.
#
# Optional, for the profiles docs/performance.md quotes:
#   PROFILE=/tmp/readme.prof  also writes an 8 s CPU profile of the gateway
#                             taken during the measured run (pprof on PORT+2);
#   SYSCALLS=1                also counts the gateway's system calls per
#                             request (strace -c, Debian package strace); it
#                             slows the gateway, so its CPU figure then does
#                             not count;
#   SCRIPT=bench/side-by-side-query.lua
#                             sends another wrk script's query instead (that
#                             one is the query ../shared/peers/run.sh sends);
#   FINGRAPH_SHARE_WINDOW=off makes every request its own two upstream
#                             calls (the gateway reads its environment).
#
# The gateway serves its metrics on PORT+3, for the calls per request.
default_port=18911
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

"$bin" sandbox -sandbox-addr "127.0.0.1:$sbport" -data-dir "$dir/sandbox" -log-level warn >"$dir/sandbox.log" 2>&1 &
sb=$!
pprof=()
[ -n "${PROFILE:-}" ] && pprof=(env "FINGRAPH_PPROF_ADDR=127.0.0.1:$((port + 2))")
FINGRAPH_METRICS_ADDR="127.0.0.1:$((port + 3))" "${pprof[@]}" "$bin" -addr "127.0.0.1:$port" -data-dir "$dir/gateway" -log-level warn \
  -payments-url "http://127.0.0.1:$sbport/payments" -banking-url "http://127.0.0.1:$sbport/banking" \
  -payments-private-key sk_sandbox_demo -payments-public-key pk_sandbox_demo \
  -payments-access-token at_sandbox_demo -register-webhook false -reconcile-interval 0 >"$dir/gateway.log" 2>&1 &
gw=$!
trap 'kill $gw $sb 2>/dev/null; wait $gw $sb 2>/dev/null; rm -rf "$dir"' EXIT

wait_ready
signin='{"query":"mutation { signIn(input: {kind: API_KEY, apiKey: \"demo-api-key\"}) { ... on SignedIn { sessionToken } } }"}'
FINGRAPH_SESSION=$(curl -sf -H 'Content-Type: application/json' -d "$signin" "http://127.0.0.1:$port/graphql" |
  sed -n 's/.*"sessionToken":"\([^"]*\)".*/\1/p')
export FINGRAPH_SESSION
[ -n "$FINGRAPH_SESSION" ] || { echo "sign-in failed" >&2; exit 1; }

url="http://127.0.0.1:$port/graphql"
script=$(realpath "${SCRIPT:-$here/readme-query.lua}")
wrk -t2 -c16 -d3s -s "$script" "$url" >/dev/null
cpu() { awk '{print $14 + $15}' "/proc/${1:-$gw}/stat"; }
side=()
if [ -n "${PROFILE:-}" ]; then
  (sleep 1; curl -sf "http://127.0.0.1:$((port + 2))/debug/pprof/profile?seconds=8" -o "$PROFILE") &
  side+=($!)
fi
if [ "${SYSCALLS:-}" = 1 ]; then
  timeout 11 strace -c -f -p "$gw" -o "$dir/strace" 2>/dev/null &
  side+=($!)
fi
# upstream calls made, and reads answered by another request's call
calls() {
  curl -sf "http://127.0.0.1:$((port + 3))/metrics" |
    awk '/^fingraph_upstream_requests_total/ {c += $NF} /^fingraph_upstream_shared_reads_total/ {r += $NF} END {print c + 0, r + 0}'
}
read -r c0 r0 < <(calls)
t0=$(cpu); s0=$(cpu "$sb")
out=$(wrk -t2 -c16 -d10s --latency -s "$script" "$url")
t1=$(cpu); s1=$(cpu "$sb")
read -r c1 r1 < <(calls)
if [ ${#side[@]} -gt 0 ]; then wait "${side[@]}" || true; fi
echo "$out"
reqs=$(echo "$out" | awk '/requests in/ {print $1}')
ticks=$(getconf CLK_TCK)
awk -v d=$((t1 - t0)) -v n="$reqs" -v hz="$ticks" \
  'BEGIN { printf "gateway CPU per request: %.0f µs over %d requests\n", d * 1e6 / hz / n, n }'
# The sandbox answers the gateway's upstream calls: two per request, unless
# requests at the same time share them (FINGRAPH_SHARE_WINDOW; set it to
# off and every request makes its two). The gateway's CPU against the
# sandbox's is what the gateway adds over the work it stands for.
awk -v c=$((c1 - c0)) -v r=$((r1 - r0)) -v n="$reqs" \
  'BEGIN { printf "upstream calls per request: %.2f; reads shared per request: %.2f\n", c / n, r / n }'
awk -v d=$((t1 - t0)) -v s=$((s1 - s0)) -v n="$reqs" -v hz="$ticks" \
  'BEGIN { printf "sandbox CPU per request: %.0f µs; gateway / sandbox: %.2fx\n", s * 1e6 / hz / n, (s > 0 ? d / s : 0) }'
if [ "${SYSCALLS:-}" = 1 ]; then
  awk -v n="$reqs" 'NR > 2 && $NF ~ /^(read|write|futex|epoll_pwait)$/ {printf "%s: %.2f per request\n", $NF, $4 / n}' "$dir/strace"
fi
