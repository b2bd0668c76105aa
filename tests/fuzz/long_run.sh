#!/usr/bin/env bash
# Long fuzz runs outside CI: every harness for SECONDS, JOBS processes per harness sharing one
# corpus, then a table of executions, execs/s and coverage (cov/ft from each process's last status
# line; executions summed over the processes). Usage:
#   tests/fuzz/long_run.sh BIN_DIR OUT_DIR SECONDS [JOBS] [harness...]
# BIN_DIR holds the fuzz_* binaries and dict/ (build-fuzz/tests/fuzz); seeds are read from the
# source tree; corpora, logs and crash artifacts go to OUT_DIR.
set -uo pipefail
bin=$1 out=$2 secs=$3 jobs=${4:-1}
shift $(( $# < 4 ? $# : 4 ))
src=$(cd "$(dirname "$0")/../.." && pwd)
declare -A seeds=(
  [safetensors_header]="tests/fuzz/seeds/safetensors" [checkpoint]="tests/fuzz/seeds/checkpoint tests/data/checkpoint docs/examples/checkpoints"
  [model_config]="tests/data/checkpoint docs/examples/checkpoints" [serving_config]="tests/data/serving docs/examples/seeds"
  [command_line]="tests/fuzz/seeds/command tests/data/serving docs/examples/seeds" [rule_file]="rules"
  [jsonlogic]="$bin/seeds/jsonlogic" [version]="tests/fuzz/seeds/version" [stack_result]="tests/fuzz/seeds/stack")
declare -A dicts=([safetensors_header]=safetensors [checkpoint]=checkpoint [model_config]=model_config
  [serving_config]=serving_config [command_line]=command_line [rule_file]=rule_file [jsonlogic]=jsonlogic
  [version]=version [stack_result]=stack_result)
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(safetensors_header checkpoint model_config serving_config command_line rule_file jsonlogic version stack_result)
mkdir -p "$out"
for n in "${names[@]}"; do
  mkdir -p "$out/corpus/$n" "$out/artifacts/$n"
  s=()
  for d in ${seeds[$n]}; do [[ $d = /* ]] && s+=("$d") || s+=("$src/$d"); done
  for j in $(seq 1 "$jobs"); do
    TMPDIR=$(mktemp -d) nice "$bin/fuzz_$n" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -dict="$bin/dict/${dicts[$n]}.dict" -artifact_prefix="$out/artifacts/$n/" \
      "$out/corpus/$n" "${s[@]}" >"$out/$n.$j.log" 2>&1 &
  done
done
wait
printf '%-20s %14s %10s %8s %8s %s\n' harness execs execs/s cov ft problems
for n in "${names[@]}"; do
  execs=0 rate=0 cov=0 ft=0
  for log in "$out/$n".*.log; do
    e=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{print $2}')
    r=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | awk '{print $2}')
    c=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
    f=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | awk '{print $2}')
    execs=$((execs + ${e:-0})) rate=$((rate + ${r:-0}))
    [ "${c:-0}" -gt "$cov" ] && cov=$c
    [ "${f:-0}" -gt "$ft" ] && ft=$f
  done
  probs=$(ls "$out/artifacts/$n" | wc -l)
  printf '%-20s %14s %10s %8s %8s %s\n' "$n" "$execs" "$rate" "$cov" "$ft" "$probs"
done
