#!/bin/bash
# tests/data/nccl/validate.sh BIN_DIR: the collectives validation of docs/validation.md. For each compared log, fits
# the system's profile from other logs of the same system (trainsim-calibrate import + fit on the system's base profile)
# and prints `trainsim-calibrate compare` of the compared log with that profile.
set -euo pipefail
bin=${1:?usage: validate.sh BIN_DIR (e.g. build/release/bin)}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Leave one log out: each compared log is predicted with the profile fitted from every other log of its system run with
# the same NCCL settings (system a's defaults and its tuned runs are two settings).
# name | compared log | calibration logs (same system, not the compared one) | the compared log's NCCL_ALGO | the
# calibration logs' NCCL_ALGO, each as trainsim's --algorithm (empty: auto, NCCL's defaults; README.md's table says
# which log ran what) | the base profile (empty: h100-sxm5-80gb)
pairs=(
  "a-default-64|h100-ib-8x400g-a/all_reduce_64ranks.txt|h100-ib-8x400g-a/all_reduce_32ranks.txt h100-ib-8x400g-a/all_reduce_16ranks.txt"
  "a-default-32|h100-ib-8x400g-a/all_reduce_32ranks.txt|h100-ib-8x400g-a/all_reduce_64ranks.txt h100-ib-8x400g-a/all_reduce_16ranks.txt"
  "a-default-16|h100-ib-8x400g-a/all_reduce_16ranks.txt|h100-ib-8x400g-a/all_reduce_64ranks.txt h100-ib-8x400g-a/all_reduce_32ranks.txt"
  "a-tuned-64|h100-ib-8x400g-a/all_reduce_64ranks_tuned.txt|h100-ib-8x400g-a/all_reduce_16ranks_ring_tuned.txt||ring"
  "a-tuned-16|h100-ib-8x400g-a/all_reduce_16ranks_ring_tuned.txt|h100-ib-8x400g-a/all_reduce_64ranks_tuned.txt|ring"
  "b-32|h100-ib-8x400g-b/all_reduce_32ranks.txt|h100-ib-8x400g-b/all_reduce_16ranks.txt"
  "b-16|h100-ib-8x400g-b/all_reduce_16ranks.txt|h100-ib-8x400g-b/all_reduce_32ranks.txt"
  "c-ring-16|h100-ib-8x400g-c/all_reduce_16ranks_ring.txt|h100-ib-8x400g-c/all_reduce_16ranks.txt|ring"
  "c-default-16|h100-ib-8x400g-c/all_reduce_16ranks.txt|h100-ib-8x400g-c/all_reduce_16ranks_ring.txt||ring"
  "d-all-reduce-4|h100-nvswitch-4gpu-d/all_reduce_4ranks.txt|h100-nvswitch-4gpu-d/all_reduce_4ranks_quiet.txt h100-nvswitch-4gpu-d/all_gather_4ranks.txt h100-nvswitch-4gpu-d/reduce_scatter_4ranks.txt"
  "d-all-reduce-4-quiet|h100-nvswitch-4gpu-d/all_reduce_4ranks_quiet.txt|h100-nvswitch-4gpu-d/all_reduce_4ranks.txt h100-nvswitch-4gpu-d/all_gather_4ranks.txt h100-nvswitch-4gpu-d/reduce_scatter_4ranks.txt"
  "d-all-gather-4|h100-nvswitch-4gpu-d/all_gather_4ranks.txt|h100-nvswitch-4gpu-d/all_reduce_4ranks.txt h100-nvswitch-4gpu-d/all_reduce_4ranks_quiet.txt h100-nvswitch-4gpu-d/reduce_scatter_4ranks.txt"
  "d-reduce-scatter-4|h100-nvswitch-4gpu-d/reduce_scatter_4ranks.txt|h100-nvswitch-4gpu-d/all_reduce_4ranks.txt h100-nvswitch-4gpu-d/all_reduce_4ranks_quiet.txt h100-nvswitch-4gpu-d/all_gather_4ranks.txt"
  "e-1node-8|a100-40gb-roce-16x100g-e/all_reduce_8ranks_1node.txt|a100-40gb-roce-16x100g-e/all_reduce_16ranks.txt|||a100-sxm4-40gb"
  "e-2nodes-16|a100-40gb-roce-16x100g-e/all_reduce_16ranks.txt|a100-40gb-roce-16x100g-e/all_reduce_8ranks_1node.txt|||a100-sxm4-40gb"
)
for p in "${pairs[@]}"; do
  IFS='|' read -r name compared calibration algorithm calibration_algorithm base <<<"$p"
  records=()
  for log in $calibration; do
    out="$work/$(echo "$log" | tr / _).jsonl"
    "$bin/trainsim-calibrate" import nccl-tests "$here/$log" --out "$out" 2>/dev/null
    records+=("$out")
  done
  if ! "$bin/trainsim-calibrate" fit "${records[@]}" --base "${base:-h100-sxm5-80gb}" --out "$work/$name.json" \
      --algorithm "${calibration_algorithm:-auto}" > "$work/$name.fit" 2>&1; then
    echo "## $name: fit failed"; cat "$work/$name.fit"; continue
  fi
  echo "## $name: $compared, profile fitted from: $calibration"
  grep -E "^(efficiency|latency)\." "$work/$name.fit" || true
  "$bin/trainsim-calibrate" compare "$here/$compared" --hardware "$work/$name.json" --algorithm "${algorithm:-auto}" \
    "${@:2}" 2>/dev/null
done
