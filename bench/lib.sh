# lib.sh is what the bench scripts share; they source it after setting
# default_port. It reads their arguments (a fingraph binary, and the port of
# the gateway, whose next port is the sandbox's), makes a temporary
# directory, and defines wait_ready.
set -euo pipefail
bin=${1:?usage: $(basename "$0") FINGRAPH_BINARY [PORT]}
port=${2:-$default_port}
sbport=$((port + 1))
dir=$(mktemp -d)
here=$(cd "$(dirname "$0")" && pwd)

# wait_ready waits up to 10 s for the gateway on $port to answer /readyz.
wait_ready() {
  for _ in $(seq 50); do
    curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && return 0
    sleep 0.2
  done
  echo "the gateway on port $port was not ready after 10 s" >&2
  return 1
}
