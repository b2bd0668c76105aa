# bash completion for specprobe                                   -*- shell-script -*-
# Installed as share/bash-completion/completions/specprobe. Flags are kept in step with
# `specprobe <sub> --help` by ctest "docs_flags" (tests/package/check_docs_flags.py).

# Rule ids (SPnnnn) and advisory ids (SPA-ENGINE-nnnn), from the binary's own catalog.
_specprobe_ids() {
  specprobe rules list --format json 2>/dev/null | grep -o '"id": *"SP[0-9]*"' | grep -o 'SP[0-9]*'
  specprobe advisories --format json 2>/dev/null | grep -o '"id": *"SPA-[A-Z0-9-]*"' | grep -o 'SPA-[A-Z0-9-]*'
}

_specprobe() {
  local cur prev words cword
  if declare -F _init_completion >/dev/null 2>&1; then
    _init_completion || return
  else
    COMPREPLY=()
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  fi

  local gpus="auto H100 H200 B200 GB10 RTX5090 A100 L4 sm_80 sm_86 sm_89 sm_90 sm_100 sm_120 sm_121"
  local check_opts="--model --model-dir --offline --no-resolve --network-timeout --gpu --python --site-packages --lib --env --engine --probes --no-matrix
    --stack-probes --stack-timeout --no-engine --no-cache --engine-timeout --format --output -o --fail-on --results --color --quiet -q --verbose -v --explain-memory --jobs -j
    --rules-dir --advisories-dir --advisories-before --sarif --junit --codequality --json --github --exit-zero --unknown-ok
    --ignore --no-suppressions --progress --source-root --sarif-category --engine-mismatch --require --engine-env --install-engines --help -h"
  local exec_opts="$check_opts --dry-run"
  local matrix_opts="--model --gpu --config --engine --python --no-engine --no-cache --site-packages --lib --probes --format
    --output -o --junit --model-name --nfd-expiry --nfd-include-warnings --rules-dir --quiet -q --progress
    --help -h"
  local probe_opts="--probe --next-n --heads --head-dim --block-kv --gqa --kv-dtype --k --sv-head-dim
    --block-size --mla-heads --mla-latent-dim --mla-rope-dim --mla-v-dim --mla-topk --heads-kv --batch --context --seed --bench --tiles-per-cta --lengths --splits
    --timeout --format --in-process --stack --python --stack-lib --stack-timeout --help -h"

  # The subcommand (and rules' sub-subcommand); stop at `--` (a serving command line follows).
  local sub="" subsub="" i
  for ((i = 1; i < cword; i++)); do
    case "${words[i]}" in
      --) return 0 ;;
      -*) ;;
      *)
        if [[ -z $sub ]]; then sub="${words[i]}"
        elif [[ ( $sub == rules || $sub == engines ) && -z $subsub ]]; then subsub="${words[i]}"; fi ;;
    esac
  done

  case "$prev" in
    --site-packages|--rules-dir|--advisories-dir|--source-root) COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
    --model) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;  # a directory or a config.json
    --python|--output|-o|--sarif|--junit|--codequality|--json|--config)
      COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
    --gpu) COMPREPLY=($(compgen -W "$gpus" -- "$cur")); return 0 ;;
    --engine) COMPREPLY=($(compgen -W "vllm sglang" -- "$cur")); return 0 ;;
    --probes) COMPREPLY=($(compgen -W "auto off all" -- "$cur")); return 0 ;;
    --stack-probes) COMPREPLY=($(compgen -W "auto off" -- "$cur")); return 0 ;;
    --fail-on) COMPREPLY=($(compgen -W "error risk warning info none" -- "$cur")); return 0 ;;
    --results) COMPREPLY=($(compgen -W "failing all" -- "$cur")); return 0 ;;
    --color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return 0 ;;
    --lengths) COMPREPLY=($(compgen -W "random full" -- "$cur")); return 0 ;;
    --probe) COMPREPLY=($(compgen -W "mqa_logits spec_verify graph_replay all" -- "$cur")); return 0 ;;
    --stack-lib) COMPREPLY=($(compgen -W "deep_gemm flashinfer triton" -- "$cur")); return 0 ;;
    --kv-dtype) COMPREPLY=($(compgen -W "bf16 fp8" -- "$cur")); return 0 ;;
    --lib) COMPREPLY=($(compgen -W "vllm= sglang= torch= triton= flashinfer= deep_gemm= flash_attn=" -- "$cur"))
      compopt -o nospace 2>/dev/null; return 0 ;;
    --format)
      case "$sub" in
        check|exec) COMPREPLY=($(compgen -W "text json sarif junit codequality github" -- "$cur")) ;;
        matrix) COMPREPLY=($(compgen -W "text json nfd" -- "$cur")) ;;
        facts) COMPREPLY=($(compgen -W "text json markdown" -- "$cur")) ;;
        *) COMPREPLY=($(compgen -W "text json" -- "$cur")) ;;
      esac
      return 0 ;;
    --stack-timeout|--engine-timeout|--timeout|--heads|--head-dim|--block-kv|--gqa|--k|--sv-head-dim|--block-size|\
    --mla-heads|--mla-latent-dim|--mla-rope-dim|--mla-v-dim|--mla-topk|\
    --heads-kv|--batch|--context|--seed|--tiles-per-cta|--splits|--next-n|--model-name|\
    --sarif-category)
      return 0 ;;
    --engine-env) COMPREPLY=($(compgen -W "auto" -- "$cur") $(compgen -d -- "$cur")); return 0 ;;
    --installer) COMPREPLY=($(compgen -W "auto uv pip" -- "$cur")); return 0 ;;
    --engine-mismatch) COMPREPLY=($(compgen -W "skip ask" -- "$cur")); return 0 ;;
    --require) COMPREPLY=($(compgen -W "engine probes stack engine,probes,stack" -- "$cur")); return 0 ;;
    --ignore) COMPREPLY=($(compgen -W "$(_specprobe_ids)" -- "${cur^^}")); return 0 ;;
    --nfd-expiry) COMPREPLY=($(compgen -W "24h 1h 90m 2d 0" -- "$cur")); return 0 ;;
  esac

  case "$sub" in
    "")
      COMPREPLY=($(compgen -W "check exec matrix gpu rules explain advisories facts engines probe help --help -h --version -V" -- "$cur")) ;;
    check)
      if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "$check_opts" -- "$cur"))
      else COMPREPLY=($(compgen -f -- "$cur")); fi ;;
    exec) COMPREPLY=($(compgen -W "$exec_opts --" -- "$cur")) ;;
    matrix) COMPREPLY=($(compgen -W "$matrix_opts" -- "$cur")) ;;
    gpu) COMPREPLY=($(compgen -W "--format --help -h" -- "$cur")) ;;
    rules)
      if [[ -z $subsub ]]; then COMPREPLY=($(compgen -W "list --help -h" -- "$cur"))
      else COMPREPLY=($(compgen -W "--format --rules-dir --help -h" -- "$cur")); fi ;;
    explain)
      if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "--rules-dir --help -h" -- "$cur"))
      elif [[ ${cur^^} == SP* || -z $cur ]]; then
        COMPREPLY=($(compgen -W "$(_specprobe_ids)" -- "${cur^^}"))
      fi ;;
    facts) COMPREPLY=($(compgen -W "--format --help -h" -- "$cur")) ;;
    engines)
      case "$subsub" in
        "") COMPREPLY=($(compgen -W "list install remove --dir --help -h" -- "$cur")) ;;
        list) COMPREPLY=($(compgen -W "--format --help -h" -- "$cur")) ;;
        install)
          if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--python --find-links --index-url --no-index --installer --timeout --help -h" -- "$cur"))
          else COMPREPLY=($(compgen -W "vllm== sglang==" -- "$cur")); fi ;;
        remove) COMPREPLY=($(compgen -W "$(specprobe engines list --format json 2>/dev/null |
          grep -o '"name": *"[a-z]*-[^"]*"' | sed 's/.*"\([^"]*\)"$/\1/')" -- "$cur")) ;;
      esac ;;
    advisories) COMPREPLY=($(compgen -W "--engine --lib --gpu --format --advisories-dir --help -h" -- "$cur")) ;;
    probe) COMPREPLY=($(compgen -W "$probe_opts" -- "$cur")) ;;
  esac
  return 0
}
complete -F _specprobe specprobe
