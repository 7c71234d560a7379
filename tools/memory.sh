#!/usr/bin/env bash
# Measures kafka-pcap's peak resident memory on captures built to make it hold memory
# (examples/gen_memory.rs), the cases of the README's memory table, and says what it gave up.
#
# Usage:
#   tools/memory.sh [BIN]          (default: target/release/kafka-pcap, built first)
#
# Environment:
#   SCALE=N     divides every case's connection count (default 1: the sizes below; SCALE=10
#               for a quick look). The captures take up to ~1 GB each in $WORK.
#   WORK=DIR    where the captures are written (default: a temporary directory, removed after)
#   LIMIT=SIZE  passed as --memory-limit (default: none, the built-in default)
#
# It builds the release binary (unless BIN is given) and the generator with cargo first.
#
# Output: one line per case: case, capture size, options, peak RSS (from /usr/bin/time -v),
# charged (the budget's own peak, `--stats=json` memory.peak_bytes: what the program counted
# as held; RSS above it by much more than ~10 MB means something is held uncharged), exit
# code, memory_limit anomalies written, and the run's "given up" counts from --stats.
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${SCALE:-1}
if [[ $# -ge 1 ]]; then
  BIN=$1
else
  cargo build --release --quiet --bin kafka-pcap
  BIN=target/release/kafka-pcap
fi
cargo build --release --quiet --example gen_memory --example make_txn_captures
GEN=target/release/examples/gen_memory
TXN=target/release/examples/make_txn_captures
if [[ -n ${WORK:-} ]]; then
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
fi
limit=()
[[ -n ${LIMIT:-} ]] && limit=(--memory-limit "$LIMIT")

# case, connections (before SCALE; transactions for `report`), options
cases=(
  "pending 10000 -"
  "big-frames 3000 -"
  "inference 10000 -"
  "pair-names 1000 --pair"
  "pair-names 1000 --errors"
  "producers 8000 -"
  "out-of-order 100000 -"
  "out-of-order 1000000 -"
  "tiny-segments 50000 -"
  "report 60000 --transactions,--report=/dev/null"
)
printf '%-14s %8s %-9s %10s %10s %4s %8s  %s\n' case capture options peak_rss charged exit mem_anom given_up
for c in "${cases[@]}"; do
  read -r name conns opts <<<"$c"
  conns=$((conns / SCALE))
  [[ $conns -lt 1 ]] && conns=1
  cap="$WORK/$name-$conns.pcap"
  if [[ $name == report ]]; then
    # Not a connection count: transactions (a page of many lanes, bars and round trips).
    [[ -f $cap ]] || "$TXN" --many "$conns" --out "$cap" >/dev/null
  else
    [[ -f $cap ]] || "$GEN" "$name" "$conns" "$cap"
  fi
  args=()
  [[ $opts != - ]] && IFS=, read -r -a args <<<"$opts"
  set +e
  /usr/bin/time -v -o "$WORK/time" "$BIN" "${limit[@]}" "${args[@]}" --stats=json "$cap" >"$WORK/out" 2>/dev/null
  rc=$?
  set -e
  rss=$(awk -F: '/Maximum resident/ {gsub(/ /, "", $2); print $2}' "$WORK/time")
  anomalies=$(grep -c '"kind":"memory_limit"' "$WORK/out" || true)
  given=$(tail -n 1 "$WORK/out" | grep -o '"given_up":{[^}]*}' | sed 's/"given_up"://' || true)
  charged=$(tail -n 1 "$WORK/out" | grep -o '"peak_bytes":[0-9]*' | cut -d: -f2 || true)
  size=$(du -m "$cap" | cut -f1)
  printf '%-14s %6sMB %-9s %8sMB %8sMB %4s %8s  %s\n' "$name" "$size" "$opts" "$((rss / 1024))" "$(( ${charged:-0} / 1048576 ))" "$rc" "$anomalies" "${given:-{\}}"
done
