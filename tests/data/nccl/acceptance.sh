#!/bin/bash
# tests/data/nccl/acceptance.sh BIN_DIR: issue 23's acceptance over validate.sh's comparisons (docs/validation.md,
# "Collectives"): a compared log passes when its bus bandwidth is within 15% at every size >= 64 MiB and its time
# within 25% at every size <= 1 MiB (a log without such sizes does not pass). Prints one verdict per log; exits non-zero
# unless at least 6 logs pass, at least 2 of them over several hosts. ctest runs it (label validation).
set -euo pipefail
bin=${1:?usage: acceptance.sh BIN_DIR (e.g. build/release/bin)}
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/validate.sh" "$bin" | awk '
  /^## / { name = $2; sub(":", "", name); hosts[name] = 0; bw[name] = 0; small[name] = 0; order[++n] = name }
  / ranks on [0-9]+ hosts/ { for (i = 1; i <= NF; ++i) if ($i == "hosts;" || $i == "hosts") hosts[name] = $(i - 1) }
  /^busbw within 15% at >= 64 MiB: / { bw[name] = ($8 == $10) }
  /^time within 25% at <= 1 MiB: [0-9]/ { small[name] = ($8 == $10) }
  END {
    pass = 0; multi = 0
    for (k = 1; k <= n; ++k) {
      m = order[k]; ok = bw[m] && small[m]
      printf "%-24s hosts %-3s bandwidth %-4s small sizes %-4s %s\n", m, hosts[m], bw[m] ? "ok" : "miss", small[m] ? "ok" : "miss", ok ? "PASS" : "-"
      if (ok) { ++pass; if (hosts[m] > 1) ++multi }
    }
    printf "%d of %d logs pass, %d of them multi-node (acceptance: 6, 2)\n", pass, n, multi
    exit !(pass >= 6 && multi >= 2)
  }'
