#!/usr/bin/env bash
# Long fuzz runs outside CI: every harness (or the ones named) for SECONDS, each with its own
# number of processes sharing one corpus, then a table of executions, execs/s per process and
# coverage (cov/ft: the largest of the processes' last status lines; executions summed over the
# processes; "all runs" also sums the earlier calls with the same OUT_DIR, whose corpora this call
# continues from). Usage:
#   tests/fuzz/long_run.sh BIN_DIR OUT_DIR SECONDS [JOBS] [NAME[:JOBS[:MAX_LEN]]...]
# JOBS (default 1) is the process count for harnesses named without one; MAX_LEN defaults to the
# harness's bound below (the same as the smoke tests' in CMakeLists.txt). Example, 16 cores:
#   tests/fuzz/long_run.sh build-fuzz/tests/fuzz /tmp/fuzz-long 520 1 checkpoint:6 model_config:2 ...
# BIN_DIR holds the fuzz_* binaries and dict/ (build-fuzz/tests/fuzz); seeds are read from the
# source tree; corpora, crash artifacts and logs (OUT_DIR/logs/<start time>/) go to OUT_DIR. Each process gets its own TMPDIR
# (the harnesses that read files write every input there), on /dev/shm when it exists: on a disk
# file system each rewrite is flushed at close, which made those harnesses 2-3x slower.
# FUZZ_FLAGS (environment) is added to every process's libFuzzer flags, e.g. FUZZ_FLAGS=-entropic=0
# for the pipeline harness, whose executions touch so much code that the entropic schedule's
# per-execution feature bookkeeping was more than half its time (README "Long runs").
set -uo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,15p' "$0" >&2
  exit 2
fi
bin=$(cd "$1" && pwd) out=$2 secs=$3 jobs=1
shift 3
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then
  jobs=$1
  shift
fi
src=$(cd "$(dirname "$0")/../.." && pwd)
declare -A seeds=(
  [safetensors_header]="tests/fuzz/seeds/safetensors" [checkpoint]="tests/fuzz/seeds/checkpoint tests/data/checkpoint docs/examples/checkpoints"
  [model_config]="tests/fuzz/seeds/model_config tests/data/checkpoint docs/examples/checkpoints" [serving_config]="tests/data/serving docs/examples/seeds"
  [command_line]="tests/fuzz/seeds/command tests/data/serving docs/examples/seeds" [rule_file]="rules"
  [jsonlogic]="$bin/seeds/jsonlogic" [version]="tests/fuzz/seeds/version" [stack_result]="tests/fuzz/seeds/stack"
  [pipeline]="tests/fuzz/seeds/pipeline" [hub_answers]="tests/fuzz/seeds/hub")
declare -A dicts=([safetensors_header]=safetensors [checkpoint]=checkpoint [model_config]=model_config
  [serving_config]=serving_config [command_line]=command_line [rule_file]=rule_file [jsonlogic]=jsonlogic
  [version]=version [stack_result]=stack_result [pipeline]=pipeline [hub_answers]=hub_answers)
# Input bounds: why these, see tests/fuzz/CMakeLists.txt (SPECPROBE_FUZZERS).
declare -A max_lens=([safetensors_header]=4096 [checkpoint]=4096 [model_config]=8192 [serving_config]=4096
  [command_line]=4096 [rule_file]=4096 [jsonlogic]=4096 [version]=256 [stack_result]=4096 [pipeline]=8192 [hub_answers]=4096)
all=(safetensors_header checkpoint model_config serving_config command_line rule_file jsonlogic version stack_result pipeline
  hub_answers)
specs=("$@")
[ ${#specs[@]} -eq 0 ] && specs=("${all[@]}")
names=()
declare -A njobs=() maxlen=()
for spec in "${specs[@]}"; do
  IFS=: read -r n j m <<<"$spec"
  if [ -z "${dicts[$n]:-}" ]; then
    echo "long_run.sh: unknown harness '$n' (one of: ${all[*]})" >&2
    exit 2
  fi
  j=${j:-$jobs} m=${m:-${max_lens[$n]}}
  if ! [[ $j =~ ^[1-9][0-9]*$ && $m =~ ^[1-9][0-9]*$ ]]; then
    echo "long_run.sh: bad jobs or max_len in '$spec' (NAME[:JOBS[:MAX_LEN]])" >&2
    exit 2
  fi
  names+=("$n") njobs[$n]=$j maxlen[$n]=$m
done
total=0
for n in "${names[@]}"; do total=$((total + njobs[$n])); done
cores=$(nproc)
[ "$total" -gt "$cores" ] && echo "long_run.sh: warning: $total processes on $cores cores" >&2
tmproot=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && tmproot=/dev/shm
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
logs=$out/logs/$(date +%Y%m%d-%H%M%S)
mkdir -p "$logs"
tmps=()
for n in "${names[@]}"; do
  mkdir -p "$out/corpus/$n" "$out/artifacts/$n"
  s=()
  for d in ${seeds[$n]}; do [[ $d = /* ]] && s+=("$d") || s+=("$src/$d"); done
  echo "$n: ${njobs[$n]} process(es), -max_len=${maxlen[$n]}"
  for j in $(seq 1 "${njobs[$n]}"); do
    t=$(mktemp -d "$tmproot/specprobe-fuzz-run-XXXXXX")
    tmps+=("$t")
    # shellcheck disable=SC2086 # FUZZ_FLAGS is a list of flags
    TMPDIR=$t nice "$bin/fuzz_$n" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len="${maxlen[$n]}" ${FUZZ_FLAGS:-} \
      -print_final_stats=1 -dict="$bin/dict/${dicts[$n]}.dict" -artifact_prefix="$out/artifacts/$n/" \
      "$out/corpus/$n" "${s[@]}" >"$logs/$n.$j.log" 2>&1 &
  done
done
echo "$total processes on $cores cores, $secs s; logs in $logs"
wait
rm -rf "${tmps[@]}"
sum_execs() { cat "$@" 2>/dev/null | grep -o 'stat::number_of_executed_units: *[0-9]*' | awk '{s += $2} END {print s + 0}'; }
printf '%-20s %5s %7s %12s %12s %7s %7s %12s %5s %s\n' harness jobs max_len execs execs/s/proc cov ft "all runs" 10M problems
for n in "${names[@]}"; do
  execs=0 rate=0 cov=0 ft=0
  for log in "$logs/$n".*.log; do
    e=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{print $2}')
    r=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | awk '{print $2}')
    c=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
    f=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | awk '{print $2}')
    execs=$((execs + ${e:-0})) rate=$((rate + ${r:-0}))
    [ "${c:-0}" -gt "$cov" ] && cov=$c
    [ "${f:-0}" -gt "$ft" ] && ft=$f
  done
  probs=$(ls "$out/artifacts/$n" | wc -l)
  cum=$(sum_execs "$out"/logs/*/"$n".*.log)
  reached=no
  [ "$cum" -ge 10000000 ] && reached=yes
  printf '%-20s %5s %7s %12s %12s %7s %7s %12s %5s %s\n' "$n" "${njobs[$n]}" "${maxlen[$n]}" "$execs" \
    "$((rate / njobs[$n]))" "$cov" "$ft" "$cum" "$reached" "$probs"
done
