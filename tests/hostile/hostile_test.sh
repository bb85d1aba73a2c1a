#!/usr/bin/env bash
# tests/hostile/hostile_test.sh: ctest -L hostile (issue 22). A corpus of hostile invocations of trainsim and
# trainsim-calibrate, each checked for what must never happen, whatever the input:
#   - exit 4 (an internal error) or death by a signal;
#   - a run past 20 s (a hang: a FIFO, /dev/zero, a runaway trial);
#   - an output path replaced that must not be (a device node, a symbolic link and what it points to);
#   - a write outside the requested place (a scenario named "..", a planted link);
#   - exit 0 after a failed write (/dev/full, a full file system, a closed stdout).
# Each case also has an expected class: ok (exit 0), bad (exit 2 or 3), fail (any non-zero but 4), any (0 to 3).
# Usage: hostile_test.sh --trainsim BIN --calibrate BIN --source DIR --work DIR
set -uo pipefail

while [ $# -gt 0 ]; do
  case $1 in
    --trainsim) trainsim=$2 ;;
    --calibrate) calibrate=$2 ;;
    --source) source_dir=$2 ;;
    --work) work=$2 ;;
    *) echo "hostile_test.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
trainsim=$(realpath "$trainsim") calibrate=$(realpath "$calibrate") source_dir=$(realpath "$source_dir")
rm -rf "$work"
mkdir -p "$work"/{cwd,outside,special,in}
work=$(cd "$work" && pwd)
cwd=$work/cwd sp=$work/special in=$work/in
cd "$cwd"

# ---- fixtures -------------------------------------------------------------------------------------------------
good=$in/good.json  # a small scenario: a step takes milliseconds
cp "$source_dir/scenarios/ci/llama3-8b-16-h100.json" "$good"
cp "$source_dir/tests/data/import/llama3-8b-launch.sh" "$in/launch.sh"
cp "$source_dir/tests/data/calibrate/all_reduce_perf_8xh100.log" "$in/nccl.log"
"$calibrate" import nccl-tests "$in/nccl.log" --out "$in/measurements.jsonl" 2>/dev/null
"$trainsim" run "$good" --trials 4 --shard-index 0 --shard-count 2 --out "$in/shard0.jsonl" -q 2>/dev/null
"$trainsim" run "$good" --trials 4 --shard-index 1 --shard-count 2 --out "$in/shard1.jsonl" -q 2>/dev/null
echo "do not touch" > "$work/outside/sentinel"

# Special inputs: every input path option gets each of these.
mkdir -p "$sp/dir"
mkfifo "$sp/fifo"
: > "$sp/empty"
printf '{"schema": "trainsim.scenario/1"\0, "x": 1}' > "$sp/nul"
printf '\xff\xfe{\0}\0' > "$sp/utf16"
truncate -s 17M "$sp/huge"
ln -s "$sp/missing-target" "$sp/dangling"
ln -s "$sp/loop-b" "$sp/loop-a"
ln -s "$sp/loop-a" "$sp/loop-b"
printf '\x80\x81\xfe\xff\xc0\xaf\xed\xa0\x80' > "$sp/binary"
head -c 200000 /dev/zero | tr '\0' '[' > "$sp/deep"
head -c 1048576 /dev/zero | tr '\0' 'a' > "$sp/longline"
echo "hello world" > "$sp/text"
special_inputs=(missing dir fifo /dev/zero /dev/null /dev/urandom empty nul utf16 huge dangling loop-a binary deep
                longline text)

# Device nodes to write to: private copies where mknod works (root with CAP_MKNOD), else the real ones (the writer
# takes the same path for both; the check after each case makes sure they are still devices).
null_dev=/dev/null full_dev=/dev/full
if mknod "$sp/null-dev" c 1 3 2>/dev/null && mknod "$sp/full-dev" c 1 7 2>/dev/null; then
  null_dev=$sp/null-dev full_dev=$sp/full-dev
fi

# A small full file system for --out folders, where mount works.
full_fs=""
mkdir -p "$work/fullfs"
if mount -t tmpfs -o size=64k tmpfs "$work/fullfs" 2>/dev/null; then
  full_fs=$work/fullfs
  head -c 100000 /dev/zero > "$full_fs/filler" 2>/dev/null  # fills it: the write stops at the size
  trap 'umount "$work/fullfs" 2>/dev/null' EXIT
fi

# ---- the runner -------------------------------------------------------------------------------------------------
cases=0 failures=0
snapshot() {
  (cd "$work" && find outside special cwd -maxdepth 1 ! -name 'out*' ! -name trainsim-out ! -name cwd \
     -printf '%p %y %s %l\n' | sort && cat outside/sentinel)
}
before=$(snapshot)
stdout_to=$work/last.out  # where a case's stdout goes: a file, a device, or "closed"

fail() {
  failures=$((failures + 1))
  local shown="${case_cmd[*]}"
  echo "FAIL [${case_name:0:80}] $*: ${shown:0:300}" >&2
  head -c 600 "$work/last.err" | sed 's/^/    stderr: /' >&2
}

# t NAME EXPECT COMMAND...: one case.
t() {
  case_name=$1
  local expect=$2
  shift 2
  case_cmd=("$@")
  cases=$((cases + 1))
  local rc
  if [ "$stdout_to" = closed ]; then
    timeout -s KILL 20 "$@" >&- 2>"$work/last.err" </dev/null
  else
    timeout -s KILL 20 "$@" >"$stdout_to" 2>"$work/last.err" </dev/null
  fi
  rc=$?
  if [ $rc -eq 137 ]; then fail "still running after 20 s (killed)"
  elif [ $rc -gt 128 ]; then fail "killed by signal $((rc - 128))"
  elif [ $rc -eq 4 ]; then fail "exit 4 (internal error)"
  else
    case $expect in
      ok) [ $rc -eq 0 ] || fail "exit $rc, expected 0" ;;
      bad) [ $rc -eq 2 ] || [ $rc -eq 3 ] || fail "exit $rc, expected 2 or 3" ;;
      fail) [ $rc -ne 0 ] || fail "exit 0 after a failed write" ;;
      any) [ $rc -le 3 ] || fail "exit $rc" ;;
    esac
  fi
  [ -c "$null_dev" ] && [ -c "$full_dev" ] && [ -c /dev/null ] || fail "a device node was replaced"
  local now
  now=$(snapshot)
  if [ "$now" != "$before" ]; then
    fail "something outside the requested output changed:"
    diff <(echo "$before") <(echo "$now") | head -5 >&2
    before=$now
  fi
  if grep -q $'\e' "$work/last.err" 2>/dev/null; then fail "an escape byte reached stderr"; fi
  return 0
}

# ---- 1. every input path x every special file (16 x 20) ------------------------------------------------------
out=$cwd/out
mkdir -p "$out"
for s in "${special_inputs[@]}"; do
  p=$s
  [ "${s#/}" = "$s" ] && p=$sp/$s
  t "run:$s" bad "$trainsim" run "$p" --trials 2
  t "step:$s" bad "$trainsim" step "$p"
  t "validate:$s" bad "$trainsim" validate "$p"
  t "main:$s" bad "$trainsim" "$p" --set reliability.trials=2
  t "check:$s" bad "$trainsim" check "$p"
  t "compare:$s" bad "$trainsim" compare "$p" "$good" --trials 2
  t "merge:$s" bad "$trainsim" merge "$p"
  t "import-megatron:$s" bad "$trainsim" import megatron "$p"
  t "import-deepspeed:$s" bad "$trainsim" import deepspeed "$p"
  t "import-torchtitan:$s" bad "$trainsim" import torchtitan "$p"
  t "import-hf:$s" bad "$trainsim" import hf-config "$p"
  t "import-model:$s" bad "$trainsim" import megatron "$in/launch.sh" --model "$p"
  t "import-model-config:$s" bad "$trainsim" import megatron "$in/launch.sh" --model-config "$p"
  t "calibrate-import:$s" bad "$calibrate" import nccl-tests "$p"
  t "calibrate-fit:$s" bad "$calibrate" fit "$p" --base h100-sxm5-80gb --out "$out/fit.json"
  t "calibrate-fit-base:$s" bad "$calibrate" fit "$in/measurements.jsonl" --base "$p" --out "$out/fit.json"
  t "model:$s" bad "$trainsim" step "$good" --set "model=$p"
  t "hardware:$s" bad "$trainsim" step "$good" --set "hardware=$p"
  t "failures:$s" bad "$trainsim" run "$good" --trials 2 --set "reliability.failures=$p"
  t "merge-scenario:$s" bad "$trainsim" merge "$in/shard0.jsonl" "$in/shard1.jsonl" --scenario "$p"
done

# ---- 2. every output path x every special target ----------------------------------------------------------------
ln -s "$work/outside/sentinel" "$sp/link-to-sentinel"
ln -s "$work/outside/new-file" "$sp/link-to-new"
ln -s "$work/outside" "$sp/link-to-outside-dir"
before=$(snapshot)
# name EXPECT(file option) EXPECT(folder option) path
special_outputs=(
  "devnull ok bad $null_dev"
  "devfull fail bad $full_dev"
  "stdout ok bad /dev/stdout"
  "link bad bad $sp/link-to-sentinel"
  "link-new bad bad $sp/link-to-new"
  "link-dir bad bad $sp/link-to-outside-dir"
  "dir bad any $sp/dir"
  "fifo bad bad $sp/fifo"
  "no-parent bad any $cwd/out-noparent/such/x"
  "trailing-slash bad any $cwd/out-slash/"
  "regular ok ok $cwd/out-regular"
)
for entry in "${special_outputs[@]}"; do
  read -r name file_expect dir_expect o <<<"$entry"
  # step prints its result on stdout: a trace there too is refused (two documents in one stream).
  t "step-trace>$name" "$( [ "$name" = stdout ] && echo bad || echo "$file_expect")" \
    "$trainsim" step "$good" --trace "$o" -q
  t "check-junit>$name" "$( [ "$name" = stdout ] && echo bad || ([ "$file_expect" = ok ] && echo any || echo "$file_expect"))" \
    "$trainsim" check "$good" --junit "$o" --threads 1
  t "import-o>$name" "$file_expect" "$trainsim" import megatron "$in/launch.sh" -o "$o" --partial -q
  t "shard-out>$name" "$file_expect" "$trainsim" run "$good" --trials 2 --shard-index 0 --shard-count 2 --out "$o"
  t "plan-shard-out>$name" "$file_expect" \
    "$trainsim" plan "$good" --trials 2 --shard-index 0 --shard-count 4 --out "$o" -q
  t "calibrate-import-out>$name" "$file_expect" "$calibrate" import nccl-tests "$in/nccl.log" --out "$o"
  t "calibrate-fit-out>$name" "$file_expect" \
    "$calibrate" fit "$in/measurements.jsonl" --base h100-sxm5-80gb --out "$o"
  rm -rf "$cwd/out-regular" "$cwd/out-slash"
  t "run-out>$name" "$dir_expect" "$trainsim" run "$good" --trials 2 --out "$o" -q
  t "merge-out>$name" "$dir_expect" "$trainsim" merge "$in/shard0.jsonl" "$in/shard1.jsonl" --out "$o" -q
  rm -rf "$cwd/out-regular" "$cwd/out-slash" "$cwd/out-noparent"  # a missing parent of an --out folder is created
  before=$(snapshot)
done
[ -e "$work/outside/new-file" ] && fail "a link was followed: outside/new-file exists"

# A full file system under a --out folder, an output file and a shard.
if [ -n "$full_fs" ]; then
  t "run-out>fullfs" fail "$trainsim" run "$good" --trials 2 --out "$full_fs/report" -q
  t "step-trace>fullfs" fail "$trainsim" step "$good" --trace "$full_fs/trace.json" -q
  t "import-o>fullfs" fail "$trainsim" import megatron "$in/launch.sh" -o "$full_fs/s.json" --partial -q
  t "shard>fullfs" fail "$trainsim" run "$good" --trials 2 --shard-index 0 --shard-count 2 --out "$full_fs/s0"
  t "calibrate>fullfs" fail "$calibrate" import nccl-tests "$in/nccl.log" --out "$full_fs/m.jsonl"
  stdout_to=$full_fs/stdout
  t "stdout>fullfs:run-json" fail "$trainsim" run "$good" --trials 2 --json
  t "stdout>fullfs:shard" fail "$trainsim" run "$good" --trials 2 --shard-index 0 --shard-count 2
  stdout_to=$work/last.out
  rm -f "$full_fs/stdout"
  # (an empty --out folder may stay: it is taken, and locked, before the run)
  left=$(find "$full_fs" -mindepth 1 ! -name filler ! -type d)
  [ -z "$left" ] || fail "files left on the full file system: $left"
fi

# ---- 3. stdout that cannot be written: /dev/full, closed ---------------------------------------------------------
for target in "$full_dev" closed; do
  stdout_to=$target
  tag=$([ "$target" = closed ] && echo closed || echo full)
  t "stdout-$tag:step" fail "$trainsim" step "$good"
  t "stdout-$tag:step-json" fail "$trainsim" step "$good" --json
  t "stdout-$tag:run" fail "$trainsim" run "$good" --trials 2
  t "stdout-$tag:run-json" fail "$trainsim" run "$good" --trials 2 --json
  t "stdout-$tag:shard" fail "$trainsim" run "$good" --trials 2 --shard-index 1 --shard-count 2
  t "stdout-$tag:validate" fail "$trainsim" validate "$good"
  t "stdout-$tag:describe" fail "$trainsim" describe models
  t "stdout-$tag:import" fail "$trainsim" import megatron "$in/launch.sh" --partial -q
  t "stdout-$tag:calibrate-import" fail "$calibrate" import nccl-tests "$in/nccl.log"
  t "stdout-$tag:merge" fail "$trainsim" merge "$in/shard0.jsonl" "$in/shard1.jsonl"
  t "stdout-$tag:compare" fail "$trainsim" compare "$good" "$good" --trials 2
  t "stdout-$tag:explain" fail "$trainsim" step "$good" --explain
done
stdout_to=$work/last.out
# A reader that closes the pipe early (`| head -c 1`) under a megabyte of JSON: exit 2 with a message, not killed by
# SIGPIPE (exit 141, nothing said; a user trial).
cases=$((cases + 1))
case_name=stdout-pipe-closed-early case_cmd=("$trainsim" plan "$good" --free all --top 1000 --json)
{ timeout -s KILL 20 "${case_cmd[@]}" --trials 2 2>"$work/last.err"; echo $? >"$work/pipe.rc"; } | head -c 1 >/dev/null
pipe_rc=$(cat "$work/pipe.rc")
[ "$pipe_rc" -eq 2 ] && grep -q "cannot write to standard output" "$work/last.err" || fail "exit $pipe_rc"

# ---- 4. names that try to leave trainsim-out/ or reach the terminal ----------------------------------------------
names=(".." "." "../../outside" "/tmp" "a/../../b" "" "...." $'\e[31mred\e[0m' $'::add-mask::x' $'two\nlines'
       $'cr\rreturn' $'\x7f\x01\x02' $'\xc2\x9b31m' $'bidi\xe2\x80\xaeevil')
i=0
for n in "${names[@]}"; do
  i=$((i + 1))
  t "name-$i" any "$trainsim" "$good" --set "name=$n" --set reliability.trials=2 -q
  t "name-$i:run" any "$trainsim" run "$good" --trials 2 --set "name=$n"
  t "name-$i:check" any "$trainsim" check "$good" --set "name=$n" --threads 1
done
[ -z "$(ls -A "$cwd" | grep -v -e '^out' -e '^trainsim-out$')" ] || fail "the main job wrote beside trainsim-out/"

# ---- 5. inputs that overflow the arithmetic or the parsers -------------------------------------------------------
profile=$source_dir/hardware_profiles/h100-sxm5-80gb.json
variant() {  # variant NAME SED-EXPRESSION: a profile copy with one field changed
  sed -e "$2" "$profile" > "$in/hw-$1.json"
  echo "$in/hw-$1.json"
}
hw_cases=(
  "peak1 s/\"989.4 TFLOP\/s\"/\"1 FLOP\/s\"/g"
  "peak-tiny s/\"989.4 TFLOP\/s\"/\"1e-300 FLOP\/s\"/g"
  "peak-huge s/\"989.4 TFLOP\/s\"/\"1e300 FLOP\/s\"/g"
  "hbmbw1 s/\"3.35 TB\/s\"/\"1 B\/s\"/"
  "hbmbw-denormal s/\"3.35 TB\/s\"/\"4e-320 B\/s\"/"
  "hbmbw-huge s/\"3.35 TB\/s\"/\"1e300 B\/s\"/"
  "nvlink1 s/\"450 GB\/s\"/\"1 B\/s\"/"
  "nvlink-denormal s/\"450 GB\/s\"/\"5e-324 B\/s\"/"
  "nic1 s/\"400 Gbit\/s\"/\"1 bit\/s\"/"
  "hbm-tiny s/\"81559 MiB\"/\"1 B\"/"
  "hbm-huge s/\"81559 MiB\"/\"1e30 B\"/"
  "tdp-huge s/\"700 W\"/\"1e300 W\"/"
  "price-huge s/\"3.99 USD\"/\"1e300 USD\"/"
)
for entry in "${hw_cases[@]}"; do
  read -r name expr <<<"$entry"
  f=$(variant "$name" "$expr")
  for fid in analytic replica; do
    t "hw-$name:step-$fid" any "$trainsim" step "$good" --set "hardware=$f" --fidelity "$fid"
  done
  t "hw-$name:run" any "$trainsim" run "$good" --set "hardware=$f" --trials 2
  t "hw-$name:validate" any "$trainsim" validate "$good" --set "hardware=$f"
done
sets=(
  "cluster.network.nic_bandwidth=1 bit/s"
  "cluster.network.nic_bandwidth=5e-324 bit/s"
  "cluster.network.nic_bandwidth=1e300 bit/s"
  "training.tokens=1e30"
  "training.tokens=1"
  "training.seq_len=1"
  "training.seq_len=100000000"
  "reliability.trials=10000000"
  "reliability.seed=18446744073709551615"
  "reliability.checkpoint.write=1e-300 s"
  "reliability.checkpoint.write=1e300 s"
  "reliability.restart=1e300 s"
  "reliability.hang_timeout=0 s"
  "cost.gpu_hour=1e300 USD"
  "cost.deadline=1e300 d"
  "cost.budget=1e-300 USD"
  "cluster.gpus=0"
  "cluster.gpus=-16"
  "cluster.gpus=1e20"
  "parallel.tp=0"
  "parallel.micro_batch=0"
  "parallel.layers_per_stage=[]"
  "parallel.global_batch=1000000000"
  "parallel.global_batch=2147483647"
  "parallel.global_batch=65536"
  "expect.no_such_metric={\"max\": 1}"
  "expect.interruptions.by_cause.no_such_cause={\"max\": 1}"
  "expect={\"step_time\": {\"max\": \"1e300 s\"}, \"memory_gib.totl\": {\"max\": 1}}"
  "expect.step_time={\"max\": \"1e300 s\"}"
)
for kv in "${sets[@]}"; do
  t "set:$kv:step" any "$trainsim" step "$good" --set "$kv"
  t "set:$kv:validate" any "$trainsim" validate "$good" --set "$kv"
  t "set:$kv:run" any "$trainsim" run "$good" --trials 2 --set "$kv"
done
# Failure rates that would make one trial run for minutes (the run must stop or be refused, within 20 s).
for mtbf in "1 ns" "1 us" "1 ms" "1 s"; do
  for scope in gpu node job; do
    fj="{\"components\": [{\"name\": \"fast\", \"scope\": \"$scope\", \"mtbf\": \"$mtbf\", \"effect\": \"crash\", \"repair\": \"0 s\"}], \"replace\": true}"
    t "mtbf-$scope-$mtbf" any "$trainsim" run "$good" --trials 2 --set "reliability.failures=$fj"
  done
done

# Deep and long inputs to the parsers.
deep_key=$(printf 'a.%.0s' $(seq 1 50000))a
t "set-deep-key" bad "$trainsim" step "$good" --set "$deep_key=1"
t "set-deep-value" bad "$trainsim" step "$good" --set "name=$(head -c 35000 /dev/zero | tr '\0' '[')"
t "set-deep-value-validate" bad "$trainsim" validate "$good" --set "x=$(head -c 35000 /dev/zero | tr '\0' '{')"
{ printf 'a = '; head -c 35000 /dev/zero | tr '\0' '['; echo; } > "$in/deep.toml"
t "toml-deep-array" bad "$trainsim" import torchtitan "$in/deep.toml"
{ printf 'a = '; head -c 35000 /dev/zero | tr '\0' '{'; echo; } > "$in/deep-table.toml"
t "toml-deep-table" bad "$trainsim" import torchtitan "$in/deep-table.toml"
{ printf '%s' "$(printf 'k%.0s.' $(seq 1 40000))k = 1"; echo; } > "$in/deep-key.toml"
t "toml-deep-key" bad "$trainsim" import torchtitan "$in/deep-key.toml"
{ printf '{"a": '; head -c 35000 /dev/zero | tr '\0' '['; } > "$in/deep.json"
t "json-deep" bad "$trainsim" validate "$in/deep.json"
# An object of 50,000 objects (nlohmann's callback parser took O(n^2): minutes) as expect metrics and as a section.
{ printf '{"schema": "trainsim.scenario/1", "name": "n", "model": "llama3-8b", "hardware": "h100-sxm5-80gb",'
  printf ' "cluster": {"gpus": 16}, "parallel": {"global_batch": 64}, "training": {"seq_len": 8192}, "expect": {'
  for i in $(seq 1 50000); do printf '"m%d": {"max": 1}, ' "$i"; done
  printf '"mfu": {"min": 0.1}}}'; } > "$in/many-expect.json"
t "many-expect:validate" bad "$trainsim" validate "$in/many-expect.json"
t "many-expect:step" bad "$trainsim" step "$in/many-expect.json"
sed -e 's/"expect": {/"cost": {/' "$in/many-expect.json" > "$in/many-keys.json"
t "many-keys:validate" bad "$trainsim" validate "$in/many-keys.json"
# Unknown keys of 1.5 MB: the did-you-mean hint compared each with every accepted name (O(n*m): a minute and more).
long_key=$(head -c 1500000 /dev/zero | tr '\0' k)
for section in expect parallel; do
  { printf '{"schema": "trainsim.scenario/1", "name": "n", "model": "llama3-8b", "hardware": "h100-sxm5-80gb",'
    printf ' "cluster": {"gpus": 16}, "training": {"seq_len": 8192}, "parallel": {"global_batch": 64'
    [ $section = parallel ] && for i in 1 2 3 4 5 6; do printf ', "%s%d": 1' "$long_key" "$i"; done
    printf '}, "expect": {"mfu": {"min": 0.1}'
    [ $section = expect ] && for i in 1 2 3 4 5 6; do printf ', "%s%d": {"max": 1}' "$long_key" "$i"; done
    printf '}}'; } > "$in/long-keys.json"
  t "long-keys-$section:validate" bad "$trainsim" validate "$in/long-keys.json"
done
unset long_key
t "seed-2^63" any "$trainsim" run "$good" --trials 2 --seed 9223372036854775808
t "seed-2^64" any "$trainsim" run "$good" --trials 2 --seed 18446744073709551616
t "trials-0" bad "$trainsim" run "$good" --trials 0
import_full=("$trainsim" import megatron "$in/launch.sh" --model llama3-8b --hardware h100-sxm5-80gb --tokens 1T)
t "import-tmpdir-missing" bad env TMPDIR="$work/no-such-dir" "${import_full[@]}"
t "import-tmpdir-file" bad env TMPDIR="$sp/text" "${import_full[@]}"
mkdir -p "$work/tmpdir"
t "import-tmpdir-ok" ok env TMPDIR="$work/tmpdir" "${import_full[@]}" -q
[ -z "$(ls -A "$work/tmpdir")" ] || fail "trainsim import left its temporary file in TMPDIR"

# nccl-tests logs no run produces, and a --date that is no date (trainsim-calibrate import refuses them).
calibrate_cases=(
  "negative-size s/^( +)1048576 /\1-1048576 /"
  "nan-time s/^( +1048576 +[0-9]+ +[a-z0-9]+ +[a-z]+ +-?[0-9]+ +)[0-9.]+/\1nan/"
  "zero-time s/^( +1048576 +[0-9]+ +[a-z0-9]+ +[a-z]+ +-?[0-9]+ +)[0-9.]+/\10.00/"
  "huge-time s/^( +1048576 +[0-9]+ +[a-z0-9]+ +[a-z]+ +-?[0-9]+ +)[0-9.]+/\11e308/"
  "huge-rank s/^(# +Rank +)1 /\14611686018427387904 /"
  "mixed-gpus 0,/^# +Rank +1 .*H100/s/H100/A100/"
)
for entry in "${calibrate_cases[@]}"; do
  read -r name expr <<<"$entry"
  sed -E -e "$expr" "$in/nccl.log" > "$in/nccl-$name.log"
  t "calibrate-import-$name" bad "$calibrate" import nccl-tests "$in/nccl-$name.log"
done
for d in yesterday 2025-13-01 "2025-01-12 10:00"; do
  t "calibrate-date:$d" bad "$calibrate" import nccl-tests "$in/nccl.log" --date "$d"
done
t "calibrate-date-ok" ok "$calibrate" import nccl-tests "$in/nccl.log" --date 2025-01-12T10:11:12Z

# Baselines and result files no run produces (check and compare refuse them).
mkdir -p "$in/baselines"
good_name=$(basename "$good" .json)
baseline_cases=(
  'other-scenario {"schema": "trainsim.baseline/1", "scenario": "another", "metrics": {"mfu": {"value": 0.5, "unit": "", "rtol": 0.01, "atol": 0, "direction": "higher_is_better"}}}'
  'other-unit {"schema": "trainsim.baseline/1", "scenario": "ci-llama3-8b-16-h100", "metrics": {"step_time_s": {"value": 900, "unit": "ms", "rtol": 0.01, "atol": 0, "direction": "lower_is_better"}}}'
  'negative {"schema": "trainsim.baseline/1", "scenario": "ci-llama3-8b-16-h100", "metrics": {"step_time_s": {"value": -1, "unit": "s", "rtol": 0.01, "atol": 0, "direction": "lower_is_better"}}}'
)
for entry in "${baseline_cases[@]}"; do
  read -r name text <<<"$entry"
  echo "$text" > "$in/baselines/$good_name.json"
  t "check-baseline-$name" bad "$trainsim" check "$good" --baseline "$in/baselines" --threads 1
done
rm -rf "$in/baselines"
"$trainsim" run "$good" --trials 2 --json > "$in/result.json" 2>/dev/null
for patch in 's/"p50": [0-9.e+-]*/"p50": -1/' 's/"p50": [0-9.e+-]*/"p50": 1e300/' 's/"mean": [0-9.e+-]*/"mean": 1e20/'; do
  sed -e "0,/\"time_to_train_days\"/b" -e "$patch" "$in/result.json" > "$in/result-bad.json"
  t "compare-result:$patch" bad "$trainsim" compare "$in/result.json" "$in/result-bad.json"
done

echo "hostile corpus: $cases cases, $failures failed"
[ "$cases" -ge 300 ] || { echo "hostile corpus: fewer than 300 cases" >&2; exit 1; }
[ "$failures" -eq 0 ]
