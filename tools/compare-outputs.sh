#!/usr/bin/env bash
# Checks that two kafka-pcap binaries write byte-identical output: standard output, standard
# error and exit code, on every capture at hand, in every output mode.
#
# Usage:
#   tools/compare-outputs.sh OLD_BIN NEW_BIN
#
#   e.g. tools/compare-outputs.sh /work/bin/kafka-pcap-f11cf1c target/release/kafka-pcap
#
# Captures (found recursively; a directory that is absent is skipped with a note on stderr):
#   - captures/ of this repository (the project's test captures; this includes everything
#     `cargo run --example make_loss_captures` and `make_malformed_captures` write: those
#     examples take no output directory and always write into captures/, so nothing is
#     generated here);
#   - ../shared/captures relative to the repository root (public captures, some damaged, and
#     real broker captures);
#   - every directory (or file) in $EXTRA_CAPTURES (space-separated).
#   A capture is a file named *.pcap, *.pcapng, *.cap, *.ntar, *.snoop, *.erf, any of those
#   followed by .gz/.zst/.xz/.bz2/.lz4/.zip, or any other file that starts with a pcap or pcapng
#   magic number. Files reached twice (same real path) are used once.
#
# Runs: every capture in every mode of $MODES, one run of each binary per (capture, mode), each
# with -q, standard input from /dev/null, and `timeout $TIMEOUT`; then the multi-capture runs of
# $MULTI_MODES, each given all the captures of captures/ at once. Damaged and non-Kafka inputs
# are expected: whatever comes out (exit code 2 included) is compared.
#
# Environment:
#   MODES        ';'- or newline-separated argument lists, one per mode; `default` means no
#                option at all; a mode that starts with `@stdin` pipes the capture into standard
#                input and names `-` instead, e.g. MODES='default;--pair;@stdin --pair'
#   MULTI_MODES  the same (without @stdin), for the multi-capture runs (default: '-j 2;-j 1');
#                empty: none
#   EXTRA_CAPTURES  more capture directories or files, space-separated
#   JOBS         runs at once (default 2)
#   TIMEOUT      seconds per run of one binary (default 120)
#   KEEP=1       keep the work directory (every output of every run) and print its path
#
# Output: a report for every difference (which streams differ, the command, the first differing
# byte, and at most ~20 lines of diff per stream), notes for runs that timed out, differences per
# mode, and a last line `compared N runs over M captures: I identical, K different`.
# Exit status: 0 when all runs were identical, 1 when any differed, 2 on a usage error.
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" >&2
  exit 2
}

[[ $# -eq 2 ]] || usage
[[ $1 == -h || $1 == --help ]] && usage

# An absolute path for a binary given as a path or as a command name.
resolve_bin() {
  local b=$1
  if [[ $b != */* && ! -f $b ]]; then
    b=$(command -v -- "$b") || { echo "compare-outputs: $1: no such file or command" >&2; exit 2; }
  fi
  [[ -f $b && -x $b ]] || { echo "compare-outputs: $1: not an executable file" >&2; exit 2; }
  [[ $b == /* ]] || b="$PWD/$b"
  printf '%s\n' "$b"
}
OLD_BIN=$(resolve_bin "$1")
NEW_BIN=$(resolve_bin "$2")

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=${JOBS:-2}
TIMEOUT=${TIMEOUT:-120}
KEEP=${KEEP:-0}

DEFAULT_MODES='default
--format json
--format text
--format tree
--format tree -x
--pair
--all-apis
--all-apis --pair
--stats=json
--stats
--format text --pair
--errors
--result abort
--result commit --pair
--producer-id 4000
--topic orders
--stream 0
--all-apis --stats=json --format text'
MODES=${MODES-$DEFAULT_MODES}
MULTI_MODES=${MULTI_MODES-'-j 2;-j 1'}

# Splits a MODES-style list into the array named $1 (empty entries dropped).
split_modes() {
  local -n into=$1
  local m
  into=()
  while IFS= read -r m; do
    m=${m#"${m%%[![:space:]]*}"}
    m=${m%"${m##*[![:space:]]}"}
    [[ -n $m ]] && into+=("$m")
  done < <(printf '%s\n' "$2" | tr ';' '\n')
  return 0
}
modes=() multi_modes=()
split_modes modes "$MODES"
split_modes multi_modes "$MULTI_MODES"
[[ ${#modes[@]} -gt 0 || ${#multi_modes[@]} -gt 0 ]] || { echo "compare-outputs: no modes" >&2; exit 2; }

start=$SECONDS
WORK=$(mktemp -d "${TMPDIR:-/tmp}/compare-outputs.XXXXXX")
cleanup() {
  if [[ $KEEP == 1 ]]; then
    echo "compare-outputs: outputs kept in $WORK" >&2
  else
    rm -rf -- "$WORK"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$WORK/jobs" "$WORK/runs" "$WORK/cwd"

# ---- Captures -------------------------------------------------------------------------------

ext_re='\.(pcap|pcapng|cap|ntar|snoop|erf)(\.(gz|zst|xz|bz2|lz4|zip))?$'
# True when the file starts with a pcap (either byte order, micro or nano) or pcapng magic.
has_capture_magic() {
  local magic
  magic=$(od -An -tx1 -N4 -- "$1" 2>/dev/null | tr -d ' \n') || return 1
  case $magic in
    d4c3b2a1 | a1b2c3d4 | 4d3cb2a1 | a1b23c4d | 0a0d0d0a) return 0 ;;
    *) return 1 ;;
  esac
}

declare -A seen=()
captures=()         # every capture, in order
project_captures=() # those of captures/, for the multi-capture runs
add_capture() { # path, is-project
  local real
  real=$(realpath -- "$1")
  [[ -n ${seen[$real]:-} ]] && return 0
  seen[$real]=1
  captures+=("$1")
  [[ $2 == 1 ]] && project_captures+=("$1")
  return 0
}
scan() { # directory-or-file, is-project
  local f
  if [[ -f $1 ]]; then
    add_capture "$1" "$2"
    return 0
  fi
  if [[ ! -d $1 ]]; then
    echo "compare-outputs: note: $1 is absent, skipped" >&2
    return 0
  fi
  while IFS= read -r -d '' f; do
    if [[ ${f,,} =~ $ext_re ]] || has_capture_magic "$f"; then
      add_capture "$f" "$2"
    fi
  done < <(find -L "$1" -type f -print0 | LC_ALL=C sort -z)
}

scan "$REPO_ROOT/captures" 1
shared=$REPO_ROOT/../shared/captures
if [[ -d $shared ]]; then shared=$(cd "$shared" && pwd); fi
scan "$shared" 0
for d in ${EXTRA_CAPTURES:-}; do
  if [[ -e $d ]]; then d=$(realpath -- "$d"); fi
  scan "$d" 0
done
[[ ${#captures[@]} -gt 0 ]] || { echo "compare-outputs: no captures found" >&2; exit 2; }

# ---- Jobs: one file per run: label NUL stdin-file NUL arguments... ----------------------------

n=0
add_job() { # label, stdin file (or empty), arguments...
  local label=$1 stdin=$2
  shift 2
  n=$((n + 1))
  local id
  printf -v id '%06d' "$n"
  printf '%s\0' "$label" "$stdin" "$@" >"$WORK/jobs/$id"
}
for c in "${captures[@]}"; do
  for m in "${modes[@]}"; do
    read -ra words <<<"$m"
    [[ ${words[0]} == default ]] && words=("${words[@]:1}")
    if [[ ${words[0]:-} == @stdin ]]; then
      add_job "$m"$'\t'"$c" "$c" -q "${words[@]:1}" -
    else
      add_job "$m"$'\t'"$c" "" -q "${words[@]}" "$c"
    fi
  done
done
if [[ ${#project_captures[@]} -gt 0 ]]; then
  for m in "${multi_modes[@]}"; do
    read -ra words <<<"$m"
    add_job "multi $m"$'\t'"all ${#project_captures[@]} captures of captures/" "" \
      -q "${words[@]}" "${project_captures[@]}"
  done
elif [[ ${#multi_modes[@]} -gt 0 ]]; then
  echo "compare-outputs: note: no captures in captures/, multi-capture runs skipped" >&2
fi
total=$n
used=${#captures[@]} # captures that some run reads
[[ ${#modes[@]} -gt 0 ]] || used=${#project_captures[@]}

# ---- Running one job (in a child bash, from xargs) ------------------------------------------

run_job() {
  local id=$1 dir=$WORK/runs/$1 side bin rc stream label stdin
  local -a spec args
  mkdir -p "$dir"
  mapfile -d '' -t spec <"$WORK/jobs/$id"
  label=${spec[0]} stdin=${spec[1]:-/dev/null}
  args=("${spec[@]:2}")
  for side in old new; do
    if [[ $side == old ]]; then bin=$OLD_BIN; else bin=$NEW_BIN; fi
    rc=0
    if [[ $stdin == /dev/null ]]; then
      (cd "$WORK/cwd" && exec timeout -k 10 "$TIMEOUT" "$bin" "${args[@]}") \
        </dev/null >"$dir/$side.out" 2>"$dir/$side.err" || rc=$?
    else # through a pipe, as from `tcpdump -w -`
      cat -- "$stdin" | (cd "$WORK/cwd" && exec timeout -k 10 "$TIMEOUT" "$bin" "${args[@]}") \
        >"$dir/$side.out" 2>"$dir/$side.err"
      rc=${PIPESTATUS[1]}
    fi
    printf '%s\n' "$rc" >"$dir/$side.rc"
  done

  local -a differ=()
  cmp -s "$dir/old.out" "$dir/new.out" || differ+=(stdout)
  cmp -s "$dir/old.err" "$dir/new.err" || differ+=(stderr)
  cmp -s "$dir/old.rc" "$dir/new.rc" || differ+=(exit)

  local old_rc new_rc
  old_rc=$(<"$dir/old.rc") new_rc=$(<"$dir/new.rc")
  if [[ $old_rc == 124 || $old_rc == 137 || $new_rc == 124 || $new_rc == 137 ]]; then
    printf 'note: timed out after %ss (exit old %s, new %s): %s\n' \
      "$TIMEOUT" "$old_rc" "$new_rc" "${label//$'\t'/ on }" >"$dir/timeout"
  fi

  if [[ ${#differ[@]} -eq 0 ]]; then
    printf 'same\t%s\n' "$label" >"$dir/status"
    [[ $KEEP == 1 ]] || rm -f "$dir/old.out" "$dir/new.out" "$dir/old.err" "$dir/new.err"
    return 0
  fi
  {
    printf 'DIFFERENT [run %d] mode: %s; capture: %s\n' "$((10#$id))" "${label%%$'\t'*}" "${label#*$'\t'}"
    printf '  differs: %s\n' "${differ[*]}"
    printf '  command: BIN'
    printf ' %q' "${args[@]}"
    [[ $stdin == /dev/null ]] || printf ' < %q' "$stdin"
    printf '\n'
    for stream in "${differ[@]}"; do
      case $stream in
        exit)
          printf '  exit code: old %s, new %s\n' "$old_rc" "$new_rc"
          ;;
        *)
          local ext=out
          [[ $stream == stderr ]] && ext=err
          printf '  %s: old %s bytes, new %s bytes; %s\n' "$stream" \
            "$(stat -c %s "$dir/old.$ext")" "$(stat -c %s "$dir/new.$ext")" \
            "$(cmp "$dir/old.$ext" "$dir/new.$ext" 2>&1 | sed "s|$dir/||g" | head -n 1)"
          diff -a -u --label "old $stream" --label "new $stream" "$dir/old.$ext" "$dir/new.$ext" \
            | head -n 20 | cut -c 1-300 | sed 's/^/    | /'
          ;;
      esac
    done
  } >"$dir/report"
  printf 'diff\t%s\n' "$label" >"$dir/status"
  return 0
}
export -f run_job
export WORK OLD_BIN NEW_BIN TIMEOUT KEEP

echo "compare-outputs: $total runs (${#captures[@]} captures x ${#modes[@]} modes" \
  "+ ${#multi_modes[@]} multi-capture) of $OLD_BIN and $NEW_BIN, $JOBS at once" >&2
[[ $OLD_BIN == "$NEW_BIN" ]] && echo "compare-outputs: note: the same binary twice (a determinism check)" >&2
# shellcheck disable=SC2016 # $1 is for the child bash
(cd "$WORK/jobs" && printf '%s\0' *) | xargs -0 -n 1 -P "$JOBS" bash -c 'run_job "$1"' run_job ||
  echo "compare-outputs: warning: xargs failed ($?); runs without a result count as different" >&2

# ---- Report ----------------------------------------------------------------------------------

identical=0 different=0 missing=0
declare -A mode_diffs=()
mode_order=()
timeouts=()
for ((i = 1; i <= total; i++)); do
  printf -v id '%06d' "$i"
  dir=$WORK/runs/$id
  if [[ -f $dir/timeout ]]; then timeouts+=("$(<"$dir/timeout")"); fi
  if [[ ! -f $dir/status ]]; then
    missing=$((missing + 1))
    echo "DIFFERENT [run $i]: no result (the run did not finish)"
    continue
  fi
  IFS=$'\t' read -r status mode _ <"$dir/status"
  if [[ $status == same ]]; then
    identical=$((identical + 1))
  else
    different=$((different + 1))
    cat "$dir/report"
    [[ -n ${mode_diffs[$mode]:-} ]] || mode_order+=("$mode")
    mode_diffs[$mode]=$((${mode_diffs[$mode]:-0} + 1))
  fi
done
for t in "${timeouts[@]}"; do echo "$t"; done
if [[ ${#mode_order[@]} -gt 0 ]]; then
  echo "differences per mode:"
  for m in "${mode_order[@]}"; do printf '  %5d  %s\n' "${mode_diffs[$m]}" "$m"; done
fi
different=$((different + missing))
echo "compare-outputs: took $((SECONDS - start))s" >&2
echo "compared $total runs over $used captures: $identical identical, $different different"
[[ $different -eq 0 ]]
