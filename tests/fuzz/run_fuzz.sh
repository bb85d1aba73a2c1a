#!/usr/bin/env bash
# tests/fuzz/run_fuzz.sh: runs one libFuzzer target for a bounded time on a scratch copy of its seed corpus (the
# source tree is never written). A crash fails the test; its input is kept in ARTIFACTS and printed (Base64) here.
#   run_fuzz.sh FUZZER SEED_CORPUS DICT SECONDS ARTIFACTS
set -euo pipefail
fuzzer=$1 seeds=$2 dict=$3 seconds=$4 artifacts=$5
work=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-fuzz-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$artifacts"
cp "$seeds"/* "$work/corpus/"
dict_arg=()
[ -f "$dict" ] && dict_arg=(-dict="$dict")
cd "$work"
exec "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$artifacts/" "${dict_arg[@]}" corpus
