#!/usr/bin/env bash
# tests/bench/callgrind.sh: instruction counts (valgrind's callgrind) of trainsim-bench benchmarks, which unlike wall
# times do not depend on what else the machine runs, so a regression shows on a loaded machine too.
#
#   tests/bench/callgrind.sh [-b BENCH_BINARY] [-o OUT_DIR] [-t MIN_TIME_S] [NAME...]
#
# NAME is a benchmark's exact name as trainsim-bench --benchmark_list_tests prints it (default: the speed targets of
# DESIGN.md's quality bars that run in minutes under callgrind; the 131k-GPU step takes hours there, name it
# explicitly). Only the timed loop is counted: callgrind zeroes its counters when Google Benchmark enters
# State::StartKeepRunning() and dumps them when it enters State::FinishKeepRunning(), so scenario loading and
# warm-up are left out. Google Benchmark grows the iteration count until min time is reached; the last dump is the
# run it reports. Each row: instructions (Ir) per iteration, and per item where the benchmark counts items
# ("events" of a step, "evaluated" configurations of a plan, else one item per iteration).
# Needs valgrind (a development tool, not a quickstart dependency):
#   apt-get install -y -qq --no-install-recommends valgrind
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bench="$here/../../build/release/bin/trainsim-bench"
out=""
min_time=0.05
while getopts "b:o:t:h" opt; do
  case "$opt" in
    b) bench=$OPTARG ;;
    o) out=$OPTARG ;;
    t) min_time=$OPTARG ;;
    *) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(BM_EngineHoldModel/1000000 BM_EngineHoldModelReference/1000000
                                 BM_PlanAnalyticScreen70B1024 BM_PlanFullSearch70B1024
                                 BM_ScaleFull405B16k BM_ScaleFull405B32k)

command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind not found; apt-get install valgrind" >&2; exit 2; }
[ -x "$bench" ] || { echo "callgrind.sh: $bench is not built (cmake --build --preset release --target trainsim-bench)" >&2; exit 2; }
if [ -z "$out" ]; then out=$(mktemp -d); fi
mkdir -p "$out"

printf '%-36s %12s %18s %14s %s\n' benchmark iterations Ir/iteration Ir/item item
for name in "${names[@]}"; do
  safe=${name//[^A-Za-z0-9_]/_}
  filter="^${name}(/iterations:[0-9]+)?(/real_time)?\$"  # the suffixes of Iterations() and UseRealTime()
  rm -f "$out/$safe".cg.*
  valgrind --tool=callgrind --callgrind-out-file="$out/$safe.cg" \
    --zero-before='benchmark::State::StartKeepRunning*' --dump-before='benchmark::State::FinishKeepRunning*' \
    "$bench" --benchmark_filter="$filter" --benchmark_min_time="$min_time" --benchmark_repetitions=1 \
    --benchmark_out="$out/$safe.json" --benchmark_out_format=json >"$out/$safe.log" 2>&1 ||
    { echo "callgrind.sh: $name failed; see $out/$safe.log" >&2; exit 1; }
  dumps=("$out/$safe".cg.*)
  last=""
  [ -e "${dumps[0]}" ] && last=$(printf '%s\n' "${dumps[@]}" | awk -F. '{ print $NF, $0 }' | sort -n | tail -1 | cut -d' ' -f2-)
  [ -n "$last" ] || { echo "callgrind.sh: $name: no benchmark of that name ran (see $out/$safe.log)" >&2; exit 1; }
  ir=$(awk '/^(summary|totals):/ { print $2; exit }' "$last")
  # The benchmark's own row of the JSON output: iterations and the item counters.
  read -r iterations items item < <(awk -F': ' '
    /"iterations"/ { gsub(/[ ,]/, "", $2); it = $2 }
    /"events"/     { gsub(/[ ,]/, "", $2); ev = $2 }
    /"evaluated"/  { gsub(/[ ,]/, "", $2); cf = $2 }
    END {
      if (ev != "") printf "%s %s events\n", it, ev * it;
      else if (cf != "") printf "%s %s configurations\n", it, cf * it;
      else printf "%s %s iterations\n", it, it;
    }' "$out/$safe.json")
  awk -v n="$name" -v ir="$ir" -v it="$iterations" -v items="$items" -v item="$item" 'BEGIN {
    printf "%-36s %12d %18.0f %14.1f %s\n", n, it, ir / it, ir / items, item }'
done
echo "callgrind output and benchmark JSON in $out" >&2
