#!/bin/sh
# peers-reads-only.sh: fingraph for ../shared/peers/run.sh at the nearest equal terms to Tailcall's
# batch window without `dedupe` (docs/performance.md, "Side by side"): identical upstream reads
# shared, every query run on its own. run.sh's SHARING=off sets FINGRAPH_SHARE_WINDOW=off, which
# turns off both; this sets the window back to its default and turns shared queries off.
#
# usage: go build -o /tmp/fingraph . &&
#        FINGRAPH_BIN=/tmp/fingraph SHARING=off ../shared/peers/run.sh bench/peers-reads-only.sh 6
bin=${FINGRAPH_BIN:?set FINGRAPH_BIN to a fingraph binary}
[ "$1" = sandbox ] && exec "$bin" "$@"
FINGRAPH_SHARE_WINDOW=1ms FINGRAPH_SHARE_QUERIES=false exec "$bin" "$@"
