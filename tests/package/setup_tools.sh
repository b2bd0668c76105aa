#!/usr/bin/env bash
# The Python tools the packaging tests run (from PyPI, into a venv under the build directory):
#   BUILD_DIR/tools/pre-commit/   pre-commit, pinned: ctest "release_script" installs the hooks of
#                                 .pre-commit-hooks.yaml from the built wheel with it
# usage: tests/package/setup_tools.sh BUILD_DIR      (idempotent: a stamp holds the pins)
set -euo pipefail
root="$(mkdir -p "$1/tools" && cd "$1/tools" && pwd)"
pins="pre-commit==4.7.0"
venv="$root/pre-commit"
if [ -f "$venv/.specprobe-stamp" ] && [ "$(cat "$venv/.specprobe-stamp")" = "$pins" ] && [ -x "$venv/bin/pre-commit" ]; then
  echo "setup_tools: $venv is up to date"; exit 0
fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check $pins
echo "$pins" >"$venv/.specprobe-stamp"
echo "setup_tools: $("$venv/bin/pre-commit" --version) in $venv"
