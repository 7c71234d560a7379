#!/usr/bin/env bash
# The --report page in a real browser (issue 18): Debian's chromium, headless, opens the page
# of captures/txn-v2-flow.pcap and, when ../shared is beside the project, of
# rb2-01-many-txn-lo.pcap (120 transactions); each must pass the page's own check
# (data-selfcheck="ok": every bar drawn, no network request tried, which the page's
# Content-Security-Policy blocks and reports), draw as many bars as the capture has
# transaction records, and give a screenshot that is not blank (larger than a blank page's).
# Then a capture of 10,000 transactions made by `make_txn_captures --many 10000`: its page
# draws the 1,000 lanes it keeps (self-check ok, as many bars as its data-bars says) and its
# chart over time counts all 10,000.
# Skipped, saying so, without chromium. Uses the debug binary `cargo test` built.
set -euo pipefail
cd "$(dirname "$0")/../.."
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
  echo "tests/browser: skipped: chromium is not installed (apt-get install chromium)"
  exit 0
fi
bin=target/debug/kafka-pcap
[[ -x $bin ]] || cargo build --quiet --locked --bin kafka-pcap
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run_browser() { # args...
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$out/profile" \
    "$@" 2> /dev/null
}
echo '<!DOCTYPE html><html><body></body></html>' > "$out/blank.html"
run_browser --window-size=1400,900 --screenshot="$out/blank.png" "file://$out/blank.html" > /dev/null
blank=$(stat -c %s "$out/blank.png")
caps=(captures/txn-v2-flow.pcap)
if [[ -f ../shared/captures/real-broker-2/rb2-01-many-txn-lo.pcap ]]; then
  caps+=(../shared/captures/real-broker-2/rb2-01-many-txn-lo.pcap)
else
  echo "tests/browser: ../shared is absent: the real-broker page is not checked"
fi
fail=0
for cap in "${caps[@]}"; do
  page="$out/$(basename "$cap" .pcap).html"
  "$bin" -q --report "$page" "$cap" 2> /dev/null
  want=$("$bin" --transactions "$cap" 2> /dev/null | grep -c '"event_type":"transaction"' || true)
  dom=$(run_browser --dump-dom "file://$page")
  check=$(grep -o 'data-selfcheck="[a-z]*"' <<< "$dom" || true)
  bars=$(grep -o 'data-bar="1"' <<< "$dom" | wc -l)
  run_browser --window-size=1400,900 --screenshot="$out/shot.png" "file://$page" > /dev/null
  shot=$(stat -c %s "$out/shot.png")
  if [[ $check != 'data-selfcheck="ok"' || $bars -ne $want || $want -eq 0 || $shot -le $((2 * blank)) ]]; then
    echo "tests/browser: $cap: FAILED: self-check ${check:-absent}, $bars bars for $want transactions, screenshot $shot bytes (blank $blank)"
    fail=1
  else
    echo "tests/browser: $cap: ok ($bars bars, screenshot $shot bytes)"
  fi
done
cargo run --quiet --locked --example make_txn_captures -- --many 10000 --out "$out/many.pcap" > /dev/null
page="$out/many.html"
"$bin" -q --report "$page" "$out/many.pcap" 2> /dev/null
dom=$(run_browser --dump-dom "file://$page")
check=$(grep -o 'data-selfcheck="[a-z]*"' <<< "$dom" || true)
bars=$(grep -o 'data-bar="1"' <<< "$dom" | wc -l)
said=$(grep -o '<body data-bars="[0-9]*"' <<< "$dom" | grep -o '[0-9]*' || true)
columns=$(grep -o '<rect data-column="[0-9]*"[^>]*><title>[0-9]*' <<< "$dom" | grep -o '[0-9]*$' | paste -sd+ | bc)
lanes=$(grep -c '<text x="2" y=' <<< "$dom" || true)
run_browser --window-size=1400,900 --screenshot="$out/shot.png" "file://$page" > /dev/null
shot=$(stat -c %s "$out/shot.png")
if [[ $check != 'data-selfcheck="ok"' || $bars -ne ${said:-0} || $bars -lt 1000 || $columns -ne 10000 || $lanes -ne 1000 || $shot -le $((2 * blank)) ]]; then
  echo "tests/browser: 10,000 transactions: FAILED: self-check ${check:-absent}, $bars bars (page says ${said:-nothing}), $lanes lanes, chart counts $columns, screenshot $shot bytes"
  fail=1
else
  echo "tests/browser: 10,000 transactions: ok ($bars bars on $lanes lanes, the chart counts $columns, page $(stat -c %s "$page") bytes)"
fi
exit $fail
