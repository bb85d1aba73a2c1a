#!/bin/bash
# tests/data/nccl/validate.sh BIN_DIR: the collectives validation of docs/validation.md. For each compared log, fits
# the system's profile from other logs of the same system (trainsim-calibrate import + fit on the h100-sxm5-80gb base)
# and prints `trainsim-calibrate compare` of the compared log with that profile.
set -euo pipefail
bin=${1:?usage: validate.sh BIN_DIR (e.g. build/release/bin)}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name | compared log | calibration logs (same system, not the compared one)
pairs=(
  "a-default-64|h100-ib-8x400g-a/all_reduce_64ranks.txt|h100-ib-8x400g-a/all_reduce_32ranks.txt"
  "a-default-32|h100-ib-8x400g-a/all_reduce_32ranks.txt|h100-ib-8x400g-a/all_reduce_64ranks.txt"
  "a-default-16|h100-ib-8x400g-a/all_reduce_16ranks.txt|h100-ib-8x400g-a/all_reduce_32ranks.txt"
  "a-tuned-64|h100-ib-8x400g-a/all_reduce_64ranks_tuned.txt|h100-ib-8x400g-a/all_reduce_16ranks_ring_tuned.txt"
  "a-tuned-16|h100-ib-8x400g-a/all_reduce_16ranks_ring_tuned.txt|h100-ib-8x400g-a/all_reduce_64ranks_tuned.txt"
  "b-32|h100-ib-8x400g-b/all_reduce_32ranks.txt|h100-ib-8x400g-b/all_reduce_16ranks.txt"
  "b-16|h100-ib-8x400g-b/all_reduce_16ranks.txt|h100-ib-8x400g-b/all_reduce_32ranks.txt"
  "c-ring-16|h100-ib-8x400g-c/all_reduce_16ranks_ring.txt|h100-ib-8x400g-c/all_reduce_16ranks.txt"
  "c-default-16|h100-ib-8x400g-c/all_reduce_16ranks.txt|h100-ib-8x400g-c/all_reduce_16ranks_ring.txt"
)
for p in "${pairs[@]}"; do
  IFS='|' read -r name compared calibration <<<"$p"
  records=()
  for log in $calibration; do
    out="$work/$(echo "$log" | tr / _).jsonl"
    "$bin/trainsim-calibrate" import nccl-tests "$here/$log" --out "$out" 2>/dev/null
    records+=("$out")
  done
  if ! "$bin/trainsim-calibrate" fit "${records[@]}" --base h100-sxm5-80gb --out "$work/$name.json" > "$work/$name.fit" 2>&1; then
    echo "## $name: fit failed"; cat "$work/$name.fit"; continue
  fi
  echo "## $name: $compared, profile fitted from: $calibration"
  grep -E "^(efficiency|latency)\." "$work/$name.fit" || true
  "$bin/trainsim-calibrate" compare "$here/$compared" --hardware "$work/$name.json" "${@:2}" 2>/dev/null
done
