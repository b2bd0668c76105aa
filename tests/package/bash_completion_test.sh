#!/usr/bin/env bash
# ctest "bash_completion" (label package): sources contrib/completions/specprobe.bash and asks it
# for completions the way bash would (COMP_WORDS / COMP_CWORD), without bash-completion installed.
# usage: bash_completion_test.sh SRC [BINDIR]   (BINDIR: where the built specprobe is, for the ids)
set -uo pipefail
[ -z "${2:-}" ] || export PATH="$2:$PATH"
# shellcheck source=/dev/null
source "$1/contrib/completions/specprobe.bash"
fail=0
complete_words() {  # complete_words "specprobe check --fa" -> COMPREPLY for the last word
  read -r -a COMP_WORDS <<<"$1"
  [[ $1 == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE=$1 COMP_POINT=${#1}
  COMPREPLY=()
  _specprobe specprobe "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
expect() {  # expect "LINE" "WORD..." : each WORD must be offered
  local got w
  got=$(complete_words "$1")
  for w in $2; do
    [[ " $got " == *" $w "* ]] || { echo "FAIL: '$1' -> [$got], missing $w"; fail=1; }
  done
  echo "ok: '$1' -> $got" | cut -c1-150
}
expect_not() {
  local got w
  got=$(complete_words "$1")
  for w in $2; do
    [[ " $got " != *" $w "* ]] || { echo "FAIL: '$1' -> [$got], should not offer $w"; fail=1; }
  done
}
expect "specprobe " "check exec matrix gpu rules explain probe"
expect "specprobe check --fa" "--fail-on"
expect "specprobe check --fail-on " "error warning info none"
expect "specprobe check --format " "text json sarif junit github"
expect "specprobe matrix --format " "text json nfd"
expect "specprobe check x.yaml --gpu H" "H100 H200"
expect "specprobe exec --dr" "--dry-run"
expect_not "specprobe check --dr" "--dry-run"
expect "specprobe rules " "list"
expect "specprobe engines " "list install remove"
expect "specprobe engines install --" "--find-links --no-index --installer"
expect "specprobe rules list --" "--format --rules-dir"
expect "specprobe probe --kv-dtype " "bf16 fp8"
expect "specprobe probe --st" "--stack --stack-lib --stack-timeout"
if command -v specprobe >/dev/null; then
  expect "specprobe explain SP300" "SP3001 SP3002"
  expect "specprobe explain SPA-VLLM-408" "SPA-VLLM-40831"
  expect "specprobe check x.yaml --ignore spa-sgl" "$(specprobe advisories --engine sglang --format json |
    grep -o '"id": *"SPA-SGLANG-[0-9]*"' | head -1 | grep -o 'SPA-[A-Z0-9-]*')"
fi
[ $fail = 0 ] && echo "bash_completion: ok"
exit $fail
