#!/usr/bin/env bash
# peers-terms.sh: what each gateway of ../shared/peers asks of the upstream per query, setting by
# setting: the sandbox's calls (GET /_sandbox/stats) and CPU per query, beside each gateway's own
# CPU per query, requests/s and latency. It shows which settings are equal terms: two gateways
# compare at equal terms only when they ask the upstream for the same work.
#
# Tailcall runs as ../shared/peers/run.sh configures it (a 1 ms batch window, which its batchKey on
# Customer.orders needs), without and with `dedupe`; fingraph with every sharing off, with shared
# reads only (FINGRAPH_SHARE_QUERIES=false) and with both; and the Go floor (bench/peersfloor: the
# same two calls per query, with no GraphQL). One standalone sandbox serves all; each
# wrk run (1 thread, 16 connections, 8 s) loads one gateway while the others idle, in turn.
#
# usage: bench/peers-terms.sh FINGRAPH_BINARY [ROUNDS]   (wrk, jq, npm; about 30 s to install
#        Tailcall, then 40 s a round)
set -euo pipefail
bin=$(realpath "${1:?usage: $(basename "$0") FINGRAPH_BINARY [ROUNDS]}"); rounds=${2:-2}
repo=$(cd "$(dirname "$0")/.." && pwd); peers=${PEERS:-$(cd "$repo/../shared/peers" && pwd)}
work=$(mktemp -d); pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/peersfloor" ./bench/peersfloor)
cp "$peers"/package.json "$peers"/package-lock.json "$peers"/tailcall.graphql.tmpl "$peers"/post.lua "$work"/
cd "$work" && npm ci --no-audit --no-fund --loglevel=error >/dev/null

sb=127.0.0.1:19190
FINGRAPH_SANDBOX_ADDR=$sb "$bin" sandbox >sb.log 2>&1 & sb_pid=$!; pids+=($sb_pid)
tailcall() { # port dedupe
  sed "s/\${SANDBOX}/$sb/g; s/\${TCPORT}/$1/g; s/\${DEDUPE}/$2/g" tailcall.graphql.tmpl >"tc$1.graphql"
  ./node_modules/@tailcallhq/core-linux-x64-gnu/bin/tailcall start "tc$1.graphql" >"tc$1.log" 2>&1 & pids+=($!)
  pid[$1]=$!
}
fingraph() { # port, then settings
  local port=$1; shift
  env FINGRAPH_DATA_DIR="$work/fg$port" FINGRAPH_ADDR=127.0.0.1:$port FINGRAPH_PAYMENTS_URL=http://$sb/payments \
    FINGRAPH_BANKING_URL=http://$sb/banking FINGRAPH_PAYMENTS_PRIVATE_KEY=sk_sandbox_demo \
    FINGRAPH_PAYMENTS_PUBLIC_KEY=pk_sandbox_demo FINGRAPH_PAYMENTS_ACCESS_TOKEN=at_sandbox_demo \
    FINGRAPH_LOG_LEVEL=warn FINGRAPH_RECONCILE_INTERVAL=0 "$@" "$bin" >"fg$port.log" 2>&1 & pids+=($!)
  pid[$port]=$!
}
declare -A pid
for _ in $(seq 50); do curl -s -o /dev/null "http://$sb/" && break; sleep 0.2; done
tailcall 4180 ''; tailcall 4181 ', dedupe: true'
fingraph 18380 FINGRAPH_SHARE_WINDOW=off
fingraph 18381 FINGRAPH_SHARE_QUERIES=false
fingraph 18382
"$work/peersfloor" -upstream "http://$sb/payments" -addr 127.0.0.1:18383 >floor.log 2>&1 & pids+=($!); pid[18383]=$!
for p in 18380 18381 18382; do
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$p/readyz" && break; sleep 0.3; done
done
for p in 4180 4181; do
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$p/graphql" && break; sleep 0.3; done
done

# The same query as run.sh's, in each gateway's spelling.
q='{ customers { id number contact { name email } orders(start: \"2026-08-01\", end: \"2026-11-30\") { id status amount'
echo "{\"query\":\"$q currency } } }\"}" >peer.json
echo "{\"query\":\"$q { amount currency } } } }\"}" >fg.json
declare -A token # each fingraph keeps its own sessions
for p in 18380 18381 18382; do
  token[$p]=$(curl -s "http://127.0.0.1:$p/graphql" -H 'content-type: application/json' \
    -d '{"query":"mutation { signIn(input: {kind: API_KEY, apiKey: \"demo-api-key\"}) { ... on SignedIn { sessionToken } } }"}' |
    jq -r .data.signIn.sessionToken)
done
for p in 4180 4181 18380 18381 18382 18383; do # every server answers the same orders before it is loaded
  if [ "$p" -lt 10000 ]; then body=peer.json auth="Bearer sk_sandbox_demo"; else body=fg.json auth="Bearer ${token[$p]:-}"; fi
  echo "port $p answers $(curl -s "http://127.0.0.1:$p/graphql" -H 'content-type: application/json' -H "Authorization: $auth" \
    --data-binary @"$body" | jq '[.data.customers[].orders[]] | length') orders"
done

ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
calls() { curl -s "http://$sb/_sandbox/stats" | jq .total; }
hz=$(getconf CLK_TCK)
one() { # name port body auth
  local g0 s0 c0 out n
  g0=$(ticks "${pid[$2]}"); s0=$(ticks "$sb_pid"); c0=$(calls)
  out=$(BODY_FILE=$work/$3 AUTH="$4" timeout 60 wrk -t1 -c16 -d8s --latency -s "$work/post.lua" "http://127.0.0.1:$2/graphql")
  n=$(awk '/requests in/{print $1}' <<<"$out")
  awk -v name="$1" -v n="$n" -v hz="$hz" -v g="$(( $(ticks "${pid[$2]}") - g0 ))" -v s="$(( $(ticks "$sb_pid") - s0 ))" \
    -v c="$(( $(calls) - c0 ))" -v rps="$(awk '/Requests\/sec/{print $2}' <<<"$out")" \
    -v p50="$(awk '$1=="50%"{print $2}' <<<"$out")" -v p99="$(awk '$1=="99%"{print $2}' <<<"$out")" \
    -v bad="$(grep -E 'Non-2xx|Socket errors' <<<"$out" | tr '\n' ' ')" \
    'BEGIN{printf "%-28s %6.0f rps  p50 %-8s p99 %-8s  gateway %4.0f µs  sandbox %3.0f µs, %.2f calls per query %s\n",
      name, rps, p50, p99, 1e6*g/hz/n, 1e6*s/hz/n, c/n, bad}'
}
echo "per query: requests/s, latency, the gateway's own CPU, the sandbox's CPU and calls"
for r in $(seq 0 "$rounds"); do
  one "tailcall (run.sh off)" 4180 peer.json "Bearer sk_sandbox_demo"
  one "tailcall dedupe (run.sh on)" 4181 peer.json "Bearer sk_sandbox_demo"
  one "fingraph sharing off" 18380 fg.json "Bearer ${token[18380]}"
  one "fingraph shared reads only" 18381 fg.json "Bearer ${token[18381]}"
  one "fingraph reads and queries" 18382 fg.json "Bearer ${token[18382]}"
  one "go floor (bench/peersfloor)" 18383 fg.json "Bearer none"
done | tail -n +7   # round 0 warms every gateway up
