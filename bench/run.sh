#!/usr/bin/env bash
# Whole-file benchmark: kafka-pcap beside the read floor, cat, tcpdump and tshark on the same
# captures, in one session.
#
# Usage: [RUNS=N] [NO_TSHARK=1] [TSHARK=COMMAND] [FRESH=1] [BASELINE=BIN] bash bench/run.sh
#        [CAPTURE...]
#   CAPTURE  one or more capture files; without any, the standard set below. These three are
#            generated (200 MiB, seed 1) by `cargo run --release --example gen_bench` when
#            missing, named or not:
#              target/bench.pcap         Produce v9 / Fetch v12 with real record batches (the
#                                        versions of current Java clients)
#              target/bench-v8.pcap      the same traffic as Produce v8 / Fetch v11, the newest
#                                        versions tshark 4.0 dissects
#              target/bench-filler.pcap  the generator's first version: filler bodies
#            and, when named, target/bench-busy.pcap (`--profile busy`: 600 connections, frames of
#            100 B to 4 KB, as a busy broker's traffic)
#   RUNS     runs per tool and capture (default 5); the median wall time is reported
#   TSHARK   the tshark to measure (default `tshark` on the PATH), e.g. a wrapper that runs a
#            newer tshark in a chroot (BENCHMARKS.md shows one); it is run from this directory.
#            A tool that fails (exit status not 0) stops the script: no time is reported for it.
#   BASELINE another kafka-pcap binary (say the build of the commit before a refactor) to
#            measure beside this one, in the same session, runs interleaved capture by capture;
#            its line is `baseline`, followed by the ratios kafka-pcap/baseline of wall and user
#            time.
#   FRESH    1: measure a fresh copy of each capture (`cp` to target/fresh/, removed after),
#            not the file itself. How a file came into the page cache changes how fast read(2)
#            serves it, for every tool alike: on the project's machine a file written in 4 KiB
#            writes (as tcpdump's stdio does) or cached a day earlier read 3x slower than one
#            just written by `cp` (BENCHMARKS.md). FRESH=1 puts every capture in the same state.
#
# floor is examples/floor.rs: read(2) in 1 MiB blocks and walk every pcap record header, nothing
# more (the least any reader of every packet must do). tcpdump runs when installed, as
#   tcpdump -r FILE -w /dev/null
# Prints, per capture and tool: median wall and user time, MB/s and packets/s of capture file, peak RSS
# (/usr/bin/time), user time (wait4's rusage), and the ratios kafka-pcap/tshark and kafka-pcap/cat. Each file is
# read once first so that every tool reads it from the page cache. tshark runs only when
# installed:
#   tshark -r FILE -d tcp.port==9092,kafka -Y kafka.api_key==27 -T json
# (NO_TSHARK=1 skips it, e.g. for the 2 GB memory run). Beside the ratios it prints tshark/cat,
# the most that any program reading the whole file with read(2) could reach against tshark.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
tshark=${TSHARK:-tshark}
cargo build --release --quiet --bin kafka-pcap --example gen_bench --example floor
gen=target/release/examples/gen_bench
if [[ $# -eq 0 ]]; then
  set -- target/bench.pcap target/bench-v8.pcap target/bench-filler.pcap
fi
# The standard captures are made when missing, whether named or implied.
for cap in "$@"; do
  [[ -f $cap ]] && continue
  case $cap in
    target/bench.pcap) $gen --size-mb 200 --seed 1 --out "$cap" ;;
    target/bench-v8.pcap)
      $gen --size-mb 200 --seed 1 --produce-version 8 --fetch-version 11 --out "$cap" ;;
    target/bench-filler.pcap) $gen --size-mb 200 --seed 1 --payload filler --out "$cap" ;;
    target/bench-busy.pcap) $gen --size-mb 200 --seed 1 --profile busy --out "$cap" ;;
    *) echo "bench/run.sh: $cap: no such file" >&2; exit 2 ;;
  esac
done
echo "$(nproc) cores; $(uname -sr); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
if [[ -z ${NO_TSHARK:-} ]] && command -v "$tshark" > /dev/null; then
  if ! version=$("$tshark" --version 2> /dev/null | grep -m1 TShark); then
    echo "bench/run.sh: $tshark --version did not name a TShark; is TSHARK right?" >&2
    exit 2
  fi
  echo "$version"
fi

measure() { # name, then the command; prints "name median_s peak_kb median_user_s"
  python3 - "$runs" "$@" <<'PY'
import os, statistics, subprocess, sys, time
runs, name, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
times, users, peak = [], [], 0
for _ in range(runs):
    t0 = time.perf_counter()
    # /usr/bin/time -f %M gives the peak RSS of the command itself (a Python child's rusage
    # would count the interpreter it was forked from); wait4 gives user time to the
    # microsecond (time's own is negligible, and counted with the command it waited for).
    p = subprocess.Popen(['/usr/bin/time', '-f', '%M', '-o', '/tmp/kp-bench-rss'] + cmd,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    times.append(time.perf_counter() - t0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        # A tool that failed has no time worth reporting.
        err = err.decode(errors='replace').strip().splitlines()[-3:]
        sys.exit('bench/run.sh: %s failed (exit %d): %s' % (' '.join(cmd), code, ' | '.join(err)))
    peak = max(peak, int(open('/tmp/kp-bench-rss').read().split()[-1]))
    users.append(ru.ru_utime)
print(name, '%.4f' % statistics.median(times), peak, '%.4f' % statistics.median(users))
PY
}

bench_one() { # capture
  local cap=$1 bytes packets
  if [[ ${FRESH:-} == 1 ]]; then
    mkdir -p target/fresh
    cp "$cap" "target/fresh/$(basename "$cap")"
    cap="target/fresh/$(basename "$cap")"
  fi
  bytes=$(stat -c %s "$cap")
  packets=$(python3 - "$cap" <<'PY2'
import struct, sys
d = open(sys.argv[1], 'rb')
h = d.read(24)
e = '<' if h[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
n = 0
while True:
    r = d.read(16)
    if len(r) < 16:
        break
    d.seek(struct.unpack(e + 'IIII', r)[2], 1)
    n += 1
print(n)
PY2
)
  cat "$cap" > /dev/null
  echo
  echo "capture: $cap, $bytes bytes, $packets packets, median of $runs runs"
  local results=()
  results+=("$(measure kafka-pcap target/release/kafka-pcap "$cap")")
  results+=("$(measure cat cat "$cap")")
  results+=("$(measure floor target/release/examples/floor "$cap")")
  if command -v tcpdump > /dev/null; then
    results+=("$(measure tcpdump tcpdump -r "$cap" -w /dev/null)")
  fi
  local base=""
  if [[ -n ${BASELINE:-} ]]; then
    base=$(measure baseline "$BASELINE" "$cap")
  fi
  if [[ -z ${NO_TSHARK:-} ]] && command -v "$tshark" > /dev/null; then
    results+=("$(measure tshark "$tshark" -r "$cap" -d tcp.port==9092,kafka -Y kafka.api_key==27 -T json)")
  fi
  printf '%-12s %10s %10s %10s %12s %12s\n' tool median_s user_s MB/s packets/s peak_RSS_MB
  local r name t m u
  for r in "${results[@]}" ${base:+"$base"}; do
    read -r name t m u <<< "$r"
    python3 -c "
t=max($t,1e-6); print('%-12s %10.4f %10.4f %10.0f %12.0f %12.1f' % ('$name', $t, $u, $bytes/1e6/t, $packets/t, $m/1024))"
  done
  if [[ -n $base ]]; then
    local kt bt bu ku
    kt=$(echo "${results[0]}" | awk '{print $2}')
    ku=$(echo "${results[0]}" | awk '{print $4}')
    bt=$(echo "$base" | awk '{print $2}')
    bu=$(echo "$base" | awk '{print $4}')
    python3 -c "print('kafka-pcap/baseline: wall %.3f, user %.3f' % (max($kt,1e-6)/max($bt,1e-6), max($ku,1e-6)/max($bu,1e-6)))"
  fi
  local kp ct ft ts r
  kp=$(echo "${results[0]}" | awk '{print $2}')
  ct=$(echo "${results[1]}" | awk '{print $2}')
  ft=$(echo "${results[2]}" | awk '{print $2}')
  python3 -c "print('kafka-pcap/floor time ratio: %.2f' % (max($kp,1e-6)/max($ft,1e-6)))"
  python3 -c "print('kafka-pcap/cat time ratio: %.2f' % (max($kp,1e-6)/max($ct,1e-6)))"
  ts=""
  for r in "${results[@]}"; do
    case $r in
      tcpdump\ *) python3 -c "print('kafka-pcap/tcpdump time ratio: %.2f' % (max($kp,1e-6)/max($(echo "$r" | awk '{print $2}'),1e-6)))" ;;
      tshark\ *) ts=$(echo "$r" | awk '{print $2}') ;;
    esac
  done
  if [[ -n $ts ]]; then
    python3 -c "print('tshark/kafka-pcap time ratio (speed-up): %.0fx' % (max($ts,1e-6)/max($kp,1e-6)))"
    python3 -c "print('tshark/cat time ratio (the ceiling for any reader of the file): %.0fx' % (max($ts,1e-6)/max($ct,1e-6)))"
  fi
}

for cap in "$@"; do
  bench_one "$cap"
  if [[ ${FRESH:-} == 1 ]]; then rm -f "target/fresh/$(basename "$cap")"; fi
done
