#!/usr/bin/env bash
# Runs the README's DuckDB and ClickHouse (chdb) recipes verbatim on kafka-pcap's records and
# checks their answers (tests/ingest/check.py); and its jq recipes, when jq is installed
# (tests/ingest/check_jq.py). Installs duckdb and chdb from PyPI into a
# virtual environment under target/ (once); when that cannot be done (no network, no python3
# venv), says so and skips, since the engines are not part of the build.
#
# Usage: bash tests/ingest/run.sh   (after `cargo build`; uses target/debug/kafka-pcap)
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=target/ingest-venv
if [[ ! -x $venv/bin/python ]] || ! $venv/bin/python -c 'import duckdb, chdb' 2>/dev/null; then
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install -q 'duckdb==2.0.1' 'chdb==4.4.0'; }; then
    echo "tests/ingest: SKIPPED: could not install duckdb and chdb into $venv (offline?)" >&2
    exit 0
  fi
fi
py=$venv/bin/python
bin=target/debug/kafka-pcap
[[ -x $bin ]] || cargo build -q
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check() { # label, kafka-pcap arguments...
  local label=$1; shift
  "$bin" "$@" > "$work/records.ndjson"
  "$py" tests/ingest/check.py README.md "$work/records.ndjson" "$label"
}

check v1-9092 captures/v1-9092.pcap
check v1-9092-all-apis --all-apis captures/v1-9092.pcap
# More than DuckDB's 20,000 sampled records of other APIs before the WriteTxnMarkers ones.
"$bin" --all-apis captures/api-fetch.pcap captures/api-metadata.pcap > "$work/other.ndjson"
grep -v '"WriteTxnMarkers"' "$work/other.ndjson" > "$work/other-only.ndjson" || true
n=$(wc -l < "$work/other-only.ndjson")
{ for _ in $(seq $(( 30000 / (n > 0 ? n : 1) + 1 ))); do cat "$work/other-only.ndjson"; done
  "$bin" captures/v1-9092.pcap; } > "$work/mixed.ndjson"
"$py" tests/ingest/check.py README.md "$work/mixed.ndjson" "30,000 other records first"
# Transaction records: aborted by fencing, a timeout, an admin client; hanging; several at once.
for c in txn-fenced txn-timeout txn-admin-abort txn-hanging txn-inter-broker txn-v1-flow \
         txn-lso-stuck; do
  check "$c-transactions" --transactions "captures/$c.pcap"
done
shared=../shared/captures
if [[ -d $shared ]]; then
  check r4 "$shared/real-broker/r4-crabka-wtm-v1-lo.pcap"
  check rb2-01-all-apis --all-apis "$shared/real-broker-2/rb2-01-many-txn-lo.pcap"
  check rb2-01-transactions --transactions "$shared/real-broker-2/rb2-01-many-txn-lo.pcap"
else
  echo "tests/ingest: ../shared is absent: the real-broker captures are skipped" >&2
fi
# The jq recipes, verbatim but for the binary and the capture.
if command -v jq > /dev/null; then
  for c in captures/v1-9092.pcap captures/tcp-gap-inside-frame.pcap captures/txn-fenced.pcap \
           captures/snaplen-96-v1-9092.pcap captures/snaplen-96-v0-v2-19092-nanosec.pcap \
           captures/tcp-snaplen-cut.pcap \
           captures/txn-hanging.pcap captures/txn-timeout.pcap \
           "$shared/real-broker-2/rb2-01-many-txn-lo.pcap"; do
    [[ -f $c ]] || continue
    python3 tests/ingest/check_jq.py README.md "$bin" "$c" "$(basename "$c" .pcap)"
  done
else
  echo "tests/ingest: jq is not installed: the jq recipes are skipped" >&2
fi
echo "tests/ingest: every recipe gave the expected answers"
