#!/usr/bin/env bash
# tests/mpi/mpi_test.sh: ctest -L mpi (registered when TRAINSIM_WITH_MPI=ON). Each case runs trainsim under
# `mpirun --oversubscribe -np 2` and `-np 4` and compares what it prints with what one process prints, byte for byte
# (issue 9). Usage: mpi_test.sh CASE --trainsim BIN --farm-check BIN --mpiexec MPIRUN --source DIR --work DIR
# To add a case: write a function case_NAME below and add NAME to the foreach in tests/CMakeLists.txt.
set -euo pipefail

case_name=${1:?usage: mpi_test.sh CASE --trainsim BIN --farm-check BIN --mpiexec MPIRUN --source DIR --work DIR}
shift
while [ $# -gt 0 ]; do
  case $1 in
    --trainsim) trainsim=$2 ;;
    --farm-check) farm_check=$2 ;;
    --mpiexec) mpiexec=$2 ;;
    --source) source_dir=$2 ;;
    --work) work=$2 ;;
    *) echo "mpi_test.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
rm -rf "$work"
mkdir -p "$work"

# Open MPI refuses to start as root (containers, CI) unless told that it is meant.
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# mpirun with NP processes; --oversubscribe: more processes than cores (CI has two).
mpi() {
  local np=$1
  shift
  timeout 240 "$mpiexec" --oversubscribe -np "$np" "$@"
}

# same LABEL EXPECTED ACTUAL: byte-identical files, or the first differences and a failure.
same() {
  if cmp -s "$2" "$3"; then
    echo "ok: $1 ($(wc -c <"$2") bytes)"
  else
    echo "FAIL: $1: $3 differs from $2"
    diff <(head -c 4000 "$2") <(head -c 4000 "$3") | head -20
    exit 1
  fi
}

# shards_merged LABEL ARGS...: 3 shards of `trainsim ARGS...` (shard 1 computed by two MPI processes, the others
# alone), merged, against $work/one.json (what one process printed with --json).
shards_merged() {
  local label=$1
  shift
  for i in 0 1 2; do
    if [ "$i" -eq 1 ]; then
      mpi 2 "$trainsim" "$@" --shard-index "$i" --shard-count 3 --out "$work/$label-shard-$i.jsonl" -q
    else
      "$trainsim" "$@" --shard-index "$i" --shard-count 3 --out "$work/$label-shard-$i.jsonl" -q
    fi
  done
  "$trainsim" merge "$work/$label"-shard-*.jsonl --json >"$work/$label-merged.json"
  same "$label: 3 shards (one on 2 MPI processes) merged against one process" "$work/one.json" \
    "$work/$label-merged.json"
}

# ---- run: the Monte Carlo farmed in tasks of 64 trials ----------------------------------------------------------
case_run() {
  local scenario=$source_dir/scenarios/default.json
  local args=(run "$scenario" --trials 200 --seed 7)
  "$trainsim" "${args[@]}" --json >"$work/one.json"
  "$trainsim" "${args[@]}" >"$work/one.txt"
  for np in 2 4; do
    mpi "$np" "$trainsim" "${args[@]}" --json >"$work/np$np.json"
    same "run --json: mpirun -np $np against one process" "$work/one.json" "$work/np$np.json"
  done
  mpi 2 "$trainsim" "${args[@]}" >"$work/np2.txt"
  same "run summary: mpirun -np 2 against one process" "$work/one.txt" "$work/np2.txt"

  # With --out, the report's tornado reruns (nine Monte Carlos) are farmed like the trials: every file the same.
  "$trainsim" "${args[@]}" --out "$work/report-one" -q >/dev/null
  mpi 3 "$trainsim" "${args[@]}" --out "$work/report-np3" -q >/dev/null
  for f in result.json result.csv summary.md report.html; do
    same "run --out $f: mpirun -np 3 against one process" "$work/report-one/$f" "$work/report-np3/$f"
  done

  # Shards and MPI together: shard 1 of 3 computed by two processes, merged with two computed alone.
  shards_merged "run" "${args[@]}"

  # Bad input: every process fails the same way, the root prints the error once, no process waits for another.
  local code=0
  mpi 4 "$trainsim" run "$work/absent.json" --json >"$work/bad.out" 2>"$work/bad.err" || code=$?
  if [ "$code" -ne 2 ] || [ -s "$work/bad.out" ] || [ "$(grep -c '^error: .*absent.json' "$work/bad.err")" -ne 1 ]; then
    echo "FAIL: bad input under mpirun: exit $code (expected 2), stderr:"
    cat "$work/bad.err"
    exit 1
  fi
  echo "ok: bad input under mpirun -np 4: exit 2, one error message"

  # A command that does not share its work runs on the root alone.
  mpi 2 "$trainsim" describe models >"$work/describe-np2.txt"
  "$trainsim" describe models >"$work/describe-one.txt"
  same "describe under mpirun -np 2 prints once" "$work/describe-one.txt" "$work/describe-np2.txt"
}

# ---- plan: every process screens, the farm shares the replica simulations and the run level ----------------------
case_plan() {
  local scenario=$source_dir/scenarios/examples/llama3-8b-64-h100.json
  local args=(plan "$scenario" --free all --gpus 32,64 --objective cost --trials 50)
  "$trainsim" "${args[@]}" --json >"$work/one.json"
  "$trainsim" "${args[@]}" -q >"$work/one.txt"
  for np in 2 4; do
    mpi "$np" "$trainsim" "${args[@]}" --json >"$work/np$np.json"
    same "plan --json: mpirun -np $np against one process" "$work/one.json" "$work/np$np.json"
  done
  mpi 2 "$trainsim" "${args[@]}" -q >"$work/np2.txt"
  same "plan table: mpirun -np 2 against one process" "$work/one.txt" "$work/np2.txt"

  # Shards: 3, one of them computed by two MPI processes, merged.
  shards_merged "plan" "${args[@]}"
}

# ---- farm: the task farm itself (tests/mpi/farm_check.cpp) --------------------------------------------------------
case_farm() {
  for np in 2 4; do
    for mode in basic early-failure late-failure; do
      mpi "$np" "$farm_check" "$mode"
    done
  done
}

"case_$case_name"
