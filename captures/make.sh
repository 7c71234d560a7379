#!/usr/bin/env bash
# Remakes the test captures in this folder from real TCP on loopback.
#
# Usage (as root, with tcpdump installed: apt-get install tcpdump):
#   bash captures/make.sh            # every capture
#   bash captures/make.sh v1-9092    # one of them
#   bash captures/make.sh snaplen    # only the snapshot-length cuts of the two above
#
# Each capture: tcpdump records the loopback interface while `cargo run --example
# make_captures` sends one scripted scenario between two sockets; the example also writes
# <name>.expected.json, the message bodies it encoded (in kafka-pcap's JSON schema). The golden
# outputs (<name>.ndjson) are then regenerated on purpose with:
#   KAFKA_PCAP_BLESS=1 cargo test --test captures
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --example make_captures
bin=target/debug/examples/make_captures

# name scenario port [extra tcpdump options]
make_one() {
  local name=$1 scenario=$2 port=$3; shift 3
  local out="captures/$name.pcap"
  rm -f "$out"
  tcpdump -i lo -s 262144 -U -w "$out" "$@" "tcp port $port" 2>/dev/null &
  local pid=$!
  sleep 1
  "$bin" "$scenario" "$port" "captures/$name.expected.json"
  sleep 1
  kill -INT "$pid"
  wait "$pid" || true
  echo "made $out ($(stat -c %s "$out") bytes)"
}

want=${1:-all}
[[ $want == all || $want == seed-9092 ]] && make_one seed-9092 seed 9092
[[ $want == all || $want == v1-9092 ]] && make_one v1-9092 v1 9092
[[ $want == all || $want == v0-v2-19092-nanosec ]] && make_one v0-v2-19092-nanosec v0v2 19092 --time-stamp-precision=nano
# Snapshot-length cuts of the loopback captures (every WriteTxnMarkers version, requests and
# responses), cut by Wireshark's editcap rather than by us: snaplen-<N>-<capture>.pcap.
snaplen() {
  command -v editcap >/dev/null || { echo "editcap (wireshark-common) is needed for snaplen-*" >&2; return 1; }
  for n in 96 128 200; do
    for c in v1-9092 v0-v2-19092-nanosec; do
      editcap -s "$n" "captures/$c.pcap" "captures/snaplen-$n-$c.pcap"
      echo "made captures/snaplen-$n-$c.pcap"
    done
  done
}
[[ $want == all || $want == snaplen ]] && snaplen
exit 0
