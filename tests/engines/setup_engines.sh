#!/usr/bin/env bash
# Creates the engine venvs the engine-adapter tests run against (engines/README.md):
#   BUILD_DIR/engines/<name>/   one venv per pinned engine release, from PyPI
# Usage: tests/engines/setup_engines.sh BUILD_DIR [name...]
#   names: vllm-0.33.0 vllm-0.25.1 vllm-0.15.1 sglang-0.5.23 sglang-0.5.17 (default: all five)
# Idempotent: each venv holds a stamp file (.specprobe-stamp) with the pinned requirement set it was
# built from; a venv whose stamp matches is left alone. A venv without a matching stamp (absent,
# half-built, other pins) is removed and built again. Install time and size go into the venv's
# .specprobe-install.json and are printed.
#
# Full dependency sets (CUDA torch wheels included): the adapters validate configurations with the
# engine's own code paths, and its attention-backend checks import the kernel packages (FlashInfer,
# flash-attn, CUTLASS DSL); a trimmed set would turn those into ImportError refusals that the real
# deployment would not see. Installs use uv (pinned, bootstrapped into BUILD_DIR/engines/.tools)
# with a shared cache in BUILD_DIR/engines/.uv-cache, hard-linked into the venvs, and compile
# bytecode at install time (the adapters run with -B, so imports read but never write .pyc).
#
# Environment: SPECPROBE_ENGINE_PYTHON (interpreter the venvs are made from; default python3.11,
# else python3 when it is 3.11-3.13), SPECPROBE_UV (an existing uv binary to use instead).
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 BUILD_DIR [vllm-0.33.0|vllm-0.25.1|vllm-0.15.1|sglang-0.5.23|sglang-0.5.17 ...]" >&2
  exit 2
fi
BUILD_DIR=$1
shift
ROOT="$(mkdir -p "$BUILD_DIR/engines" && cd "$BUILD_DIR/engines" && pwd)"
NAMES=("$@")
[[ ${#NAMES[@]} -gt 0 ]] || NAMES=(vllm-0.33.0 vllm-0.25.1 vllm-0.15.1 sglang-0.5.23 sglang-0.5.17)
UV_VERSION=0.13.9

# Pinned requirement sets, one line each (the stamp is this text).
#  - vllm 0.33.0: cuda-python>=13. flashinfer-python asks for cuda-python>=12.0; the resolver
#    otherwise settles on cuda-python 12.6.2.post1 (no dependencies), whose monolithic wheel
#    overwrites cuda-bindings 13.x's files, and nvidia-cutlass-dsl then fails at import with
#    "module 'cuda.bindings.runtime' has no attribute 'cudaLibrary_t'" (so FlashInfer, which vLLM
#    imports while building the compilation config, is unusable).
#  - vllm 0.25.1 (2026-07-14): the mid-2026 release (the bundled DeepSeek-V4 example names it).
#  - vllm 0.15.1 (2026-02): the early-2026 release (0.14.1 installs too; 0.15.1 was picked as the
#    later one of the two); torch 2.9.1 from its own pins.
#  - sglang 0.5.23: as published.
#  - sglang 0.5.17 (2026-08-08): as published. (0.5.18 and 0.5.20 pin cuda-tile==1.6.0rc5, a
#    placeholder sdist on PyPI that refuses to build outside pypi.nvidia.com, so they do not
#    install from PyPI alone.)
requirements() {
  case "$1" in
    vllm-0.33.0) printf '%s\n' "vllm==0.33.0" "cuda-python>=13" ;;
    vllm-0.15.1) printf '%s\n' "vllm==0.15.1" ;;
    vllm-0.25.1) printf '%s\n' "vllm==0.25.1" ;;
    vllm-0.14.1) printf '%s\n' "vllm==0.14.1" ;;
    sglang-0.5.23) printf '%s\n' "sglang==0.5.23" ;;
    sglang-0.5.17) printf '%s\n' "sglang==0.5.17" ;;
    *) return 1 ;;
  esac
}

pick_python() {
  if [[ -n "${SPECPROBE_ENGINE_PYTHON:-}" ]]; then echo "$SPECPROBE_ENGINE_PYTHON"; return; fi
  for p in python3.11 python3.12 python3.13 python3; do
    if command -v "$p" >/dev/null 2>&1 &&
       "$p" -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] <= (3, 13) else 1)' 2>/dev/null; then
      "$p" -c 'import sys; print(sys.executable)'
      return
    fi
  done
  echo "setup_engines: no Python 3.11-3.13 found (set SPECPROBE_ENGINE_PYTHON)" >&2
  return 1
}

get_uv() {
  if [[ -n "${SPECPROBE_UV:-}" ]]; then echo "$SPECPROBE_UV"; return; fi
  local tools="$ROOT/.tools"
  if [[ ! -x "$tools/bin/uv" ]] || [[ "$("$tools/bin/uv" --version 2>/dev/null)" != "uv $UV_VERSION"* ]]; then
    rm -rf "$tools"
    "$PY" -m venv "$tools" >&2
    "$tools/bin/python" -m pip install -q --disable-pip-version-check "uv==$UV_VERSION" >&2
  fi
  echo "$tools/bin/uv"
}

# The stamp of specprobe's engine environments (probes/engine_envs.hpp), so that BUILD_DIR/engines
# is also an engines dir `check --engine-env auto` can pick from (XDG_CACHE_HOME/specprobe/engines
# pointing here, as tests/tools/engine_rate.py does).
engine_stamp() {
  local name=$1 venv=$2 reqs=$3
  local engine=${name%%-*} version=${name#*-}
  printf '{"schema": "specprobe-engine-env/1", "engine": "%s", "version": "%s", "requirements": [%s], "installer": "uv", "made_by": "tests/engines/setup_engines.sh"}\n' \
    "$engine" "$version" "$(echo "$reqs" | sed 's/.*/"&"/' | paste -sd, -)" >"$venv/.specprobe-engine.json"
}

PY=$(pick_python)
for name in "${NAMES[@]}"; do
  if ! reqs=$(requirements "$name"); then
    echo "setup_engines: unknown engine venv '$name' (known: vllm-0.33.0 vllm-0.25.1 vllm-0.15.1 vllm-0.14.1 sglang-0.5.23 sglang-0.5.17)" >&2
    exit 2
  fi
  venv="$ROOT/$name"
  stamp="$venv/.specprobe-stamp"
  if [[ -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$reqs" ]] && [[ -x "$venv/bin/python" ]]; then
    echo "setup_engines: $name is up to date ($stamp)"
    [[ -f "$venv/.specprobe-engine.json" ]] || engine_stamp "$name" "$venv" "$reqs"
    continue
  fi
  UV=$(get_uv)
  export UV_CACHE_DIR="$ROOT/.uv-cache" UV_LINK_MODE=hardlink UV_NO_PROGRESS=1
  echo "setup_engines: building $name from PyPI: $(echo "$reqs" | tr '\n' ' ')"
  rm -rf "$venv"
  start=$(date +%s)
  "$UV" venv -q -p "$PY" "$venv"
  mapfile -t req_array <<<"$reqs"
  if ! "$UV" pip install -p "$venv/bin/python" --compile-bytecode "${req_array[@]}" >"$ROOT/$name.install.log" 2>&1; then
    tail -20 "$ROOT/$name.install.log" >&2
    echo "setup_engines: installing $name failed (log: $ROOT/$name.install.log)" >&2
    exit 1
  fi
  secs=$(($(date +%s) - start))
  size=$(du -sm "$venv" | cut -f1)
  "$UV" pip freeze -p "$venv/bin/python" >"$venv/.specprobe-freeze.txt" 2>/dev/null || true
  printf '{"name": "%s", "install_s": %d, "venv_mib": %d, "python": "%s", "uv": "%s"}\n' \
    "$name" "$secs" "$size" "$PY" "$("$UV" --version)" >"$venv/.specprobe-install.json"
  echo "$reqs" >"$stamp"
  engine_stamp "$name" "$venv" "$reqs"
  echo "setup_engines: $name installed in ${secs}s, ${size} MiB ($venv)"
done
