#!/usr/bin/env bash
# ctest "github_action" (label package): runs contrib/github/run-check.sh, the shell logic of
# action.yml, with a fake GitHub Actions environment (GITHUB_WORKSPACE, GITHUB_STEP_SUMMARY,
# GITHUB_OUTPUT, RUNNER_TEMP in a temp dir) and checks what it promises: the outputs, the SARIF
# (2.1.0, repository-relative locations), the JSON report, the job summary and the exit codes.
# Also checks action.yml: every input reaches the script, SARIF is uploaded with `category`.
# Cases: the built binary (SPECPROBE_BIN), a release tarball "downloaded" from a file:// URL and
# from a server on 127.0.0.1 laid out like GitHub releases (v<version>/specprobe-<version>-linux-
# <arch>.tar.gz and SHA256SUMS; a tampered tarball and missing sums are refused), a config
# with findings (exit-code 1, SARIF still uploaded), and a missing config (exit 2, no SARIF).
# usage: github_action_test.sh BUILD SRC
set -uo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
script="$src/contrib/github/run-check.sh"
tmp=$(mktemp -d /tmp/specprobe-action.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }
output() { sed -n "s/^$1=//p" "$GITHUB_OUTPUT" | tail -1; }

# A workspace laid out like a user's repository.
ws="$tmp/ws"
mkdir -p "$ws/deploy"
cp "$src/docs/examples/seeds/dsv4-mtp.yaml" "$ws/deploy/serve.yaml"
cp "$src/docs/examples/seeds/turboquant-ngram.yaml" "$ws/deploy/ngram.yaml"
cp -r "$src/docs/examples/checkpoints/deepseek-v4-flash" "$ws/deploy/model-config"

run_action() {  # run_action NAME [VAR=VALUE...]: one step run in a fresh fake environment
  local name=$1; shift
  rm -rf "$tmp/run" && mkdir -p "$tmp/run/temp"
  export GITHUB_OUTPUT="$tmp/run/output" GITHUB_STEP_SUMMARY="$tmp/run/summary"
  : >"$GITHUB_OUTPUT"; : >"$GITHUB_STEP_SUMMARY"
  echo "== $name"
  (cd "$tmp" && env -u SPECPROBE_BIN GITHUB_WORKSPACE="$ws" RUNNER_TEMP="$tmp/run/temp" \
     GITHUB_ACTIONS=true GITHUB_ACTION_PATH="$src" "$@" bash "$script") >"$tmp/run/stdout" 2>"$tmp/run/stderr"
  rc=$?
  sed 's/^/  | /' "$tmp/run/stderr" | tail -4
  echo "  exit $rc; outputs: $(tr '\n' ' ' <"$GITHUB_OUTPUT")"
}

# 1. The built binary, a passing config.
run_action "built binary, passing config" SPECPROBE_BIN="$build/specprobe" \
  INPUT_CONFIG=deploy/serve.yaml INPUT_MODEL=deploy/model-config INPUT_GPU=H100 \
  INPUT_LIB="vllm=0.25.1, torch=2.9.0" INPUT_FAIL_ON=error INPUT_SARIF_CATEGORY="" INPUT_ARGS="--no-matrix" \
  INPUT_VERSION=latest
check "script exits 0" '[ $rc = 0 ]'
check "exit-code output is 0" '[ "$(output exit-code)" = 0 ]'
check "verdict output is supported" '[ "$(output verdict)" = supported ]'
check "sarif-category defaults to specprobe/H100" '[ "$(output sarif-category)" = specprobe/H100 ]'
check "specprobe output is the binary" '[ "$(output specprobe)" = "$build/specprobe" ]'
check "version output" '[[ "$(output version)" == "specprobe "* ]]'
# shellcheck disable=SC2034  # used in the check strings below
sarif=$(output sarif-file)
check "sarif-file exists under RUNNER_TEMP" '[[ $sarif == "$tmp/run/temp/"* && -s $sarif ]]'
check "SARIF 2.1.0 with repository-relative locations" \
  'python3 - "$sarif" <<PY
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == "2.1.0", d["version"]
uris = [l["physicalLocation"]["artifactLocation"]["uri"] for r in d["runs"][0]["results"] for l in r["locations"]]
assert uris and all(u == "deploy/serve.yaml" for u in uris), uris
PY'
check "json-file is the JSON report" '[ -s "$(output json-file)" ] && grep -q "\"schema_version\"" "$(output json-file)"'
check "job summary appended" 'grep -q "### specprobe: \`deploy/serve.yaml\`" "$GITHUB_STEP_SUMMARY"'
check "--lib entries passed (vllm=0.25.1)" 'grep -q "\"0.25.1\"" "$(output json-file)"'
check "annotations on stdout (--github)" 'grep -q "^::" "$tmp/run/stdout"'

# 2. A release tarball from a file:// "GitHub releases" tree, as the default install path does.
case "$(uname -m)" in aarch64|arm64) arch=aarch64 ;; *) arch=x86_64 ;; esac
ver=$(sed -n 's/^specprobe \([0-9.]*\).*/\1/p' <<<"$("$build/specprobe" --version)")
top="specprobe-$ver-linux-$arch"
cmake --install "$build" --prefix "$tmp/stage/$top" >/dev/null || { echo "FAIL: cmake --install"; fail=1; }
mkdir -p "$tmp/releases/v$ver"
tar -czf "$tmp/releases/v$ver/$top.tar.gz" -C "$tmp/stage" "$top"
(cd "$tmp/releases/v$ver" && sha256sum "$top.tar.gz" >SHA256SUMS)
run_action "release download (file://)" SPECPROBE_RELEASE_URL="file://$tmp/releases" INPUT_VERSION="v$ver" \
  INPUT_CONFIG=deploy/serve.yaml INPUT_GPU=GB10 INPUT_SARIF_CATEGORY=serving/gb10
check "script exits 0" '[ $rc = 0 ]'
check "binary from the extracted tarball" '[ "$(output specprobe)" = "$tmp/run/temp/specprobe-action/release-$ver/bin/specprobe" ]'
check "sarif-category input used" '[ "$(output sarif-category)" = serving/gb10 ] && [ -s "$(output sarif-file)" ]'
check "the tarball's sum verified" 'grep -q "sha256 of $top.tar.gz verified" "$tmp/run/stderr"'
# The same over HTTP from a server on 127.0.0.1 (as GitHub serves releases), then a tampered
# tarball and a release without SHA256SUMS: both refused with 3, nothing installed.
python3 "$src/tests/support/static_server.py" "$tmp/releases" "$tmp/port" & server=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
url="http://127.0.0.1:$(cat "$tmp/port")"
run_action "release download (http, verified)" SPECPROBE_RELEASE_URL="$url" INPUT_VERSION="$ver" \
  INPUT_CONFIG=deploy/serve.yaml INPUT_GPU=GB10
check "script exits 0 over http" '[ $rc = 0 ] && grep -q "verified" "$tmp/run/stderr"'
cp "$tmp/releases/v$ver/SHA256SUMS" "$tmp/sums.good"
sed -i 's/^\(.\)/0\1/; s/^\(.\{64\}\)./\1/' "$tmp/releases/v$ver/SHA256SUMS"
run_action "tampered release" SPECPROBE_RELEASE_URL="$url" INPUT_VERSION="$ver" INPUT_CONFIG=deploy/serve.yaml INPUT_GPU=GB10
check "checksum mismatch refused with 3" '[ $rc = 3 ] && grep -q "checksum mismatch" "$tmp/run/stderr" && [ -z "$(output specprobe)" ]'
rm "$tmp/releases/v$ver/SHA256SUMS"
run_action "release without sums" SPECPROBE_RELEASE_URL="$url" INPUT_VERSION="$ver" INPUT_CONFIG=deploy/serve.yaml INPUT_GPU=GB10
check "release without SHA256SUMS refused with 3" '[ $rc = 3 ] && grep -q "SHA256SUMS" "$tmp/run/stderr"'
cp "$tmp/sums.good" "$tmp/releases/v$ver/SHA256SUMS"
kill "$server" 2>/dev/null; wait "$server" 2>/dev/null
check "missing release fails with 3" \
  '(GITHUB_OUTPUT=/dev/null GITHUB_WORKSPACE="$ws" RUNNER_TEMP="$tmp/run/temp2" SPECPROBE_RELEASE_URL="file://$tmp/releases" INPUT_VERSION=9.9.9 INPUT_CONFIG=deploy/serve.yaml bash "$script" >/dev/null 2>&1); [ $? = 3 ]'

# 3. Findings: exit-code 1, the script still exits 0 so that the SARIF is uploaded, and the
#    action's last step fails the job.
run_action "config with findings" SPECPROBE_BIN="$build/specprobe" INPUT_CONFIG=deploy/ngram.yaml INPUT_GPU=H100
check "script exits 0 (upload still runs)" '[ $rc = 0 ]'
check "exit-code output is 1" '[ "$(output exit-code)" = 1 ]'
check "SARIF has results" 'grep -q "\"ruleId\"" "$(output sarif-file)"'
run_action "fail-on none" SPECPROBE_BIN="$build/specprobe" INPUT_CONFIG=deploy/ngram.yaml INPUT_GPU=H100 INPUT_FAIL_ON=none
check "exit-code output is 0 with fail-on none" '[ "$(output exit-code)" = 0 ]'

# 4. A command line in args (no config), and a missing config.
run_action "command line in args" SPECPROBE_BIN="$build/specprobe" INPUT_GPU=H100 \
  INPUT_ARGS='-- vllm serve deploy/model-config --speculative-config {"method":"mtp","num_speculative_tokens":1}'
check "args with -- checked" '[ $rc = 0 ] && [ "$(output exit-code)" = 0 ]'
run_action "missing config" SPECPROBE_BIN="$build/specprobe" INPUT_CONFIG=deploy/nope.yaml INPUT_GPU=H100
check "script exits 2" '[ $rc = 2 ] && [ "$(output exit-code)" = 2 ] && [ -z "$(output sarif-file)" ]'

# 5. The engine input: the environment of that release made once (here from a wheel directory,
#    no index), then found in the cache; the check runs with --engine-env auto.
mkdir -p "$tmp/wheels"
python3 "$src/tests/support/fake_wheel.py" "$tmp/wheels" vllm 0.29.0 >/dev/null
engine_env=(SPECPROBE_BIN="$build/specprobe" INPUT_CONFIG=deploy/serve.yaml INPUT_MODEL=deploy/model-config INPUT_GPU=H100
  INPUT_ENGINE=vllm==0.29.0 XDG_CACHE_HOME="$tmp/xdg" PIP_FIND_LINKS="$tmp/wheels" PIP_NO_INDEX=1
  UV_FIND_LINKS="$tmp/wheels" UV_NO_INDEX=1)
run_action "engine input, first run" "${engine_env[@]}"
check "engine environment made" '[ -x "$tmp/xdg/specprobe/engines/vllm-0.29.0/bin/python" ] && grep -q "making the engine environment" "$tmp/run/stderr"'
check "check ran with --engine-env auto and the engine's release" 'grep -q -- "--engine-env auto --lib vllm=0.29.0" "$tmp/run/stderr"'
run_action "engine input, second run" "${engine_env[@]}"
check "the environment comes from the cache" 'grep -q "vllm-0.29.0 from the cache" "$tmp/run/stderr"'
run_action "engine input not pinned" SPECPROBE_BIN="$build/specprobe" INPUT_CONFIG=deploy/serve.yaml INPUT_ENGINE=vllm
check "an engine input that is not pinned is refused (exit 2)" '[ $rc = 2 ]'

# 6. action.yml: inputs reach the script, SARIF upload with category, job fails on exit-code.
check "action.yml wiring" 'python3 - "$src/action.yml" "$script" <<PY
import re, sys, yaml
a = yaml.safe_load(open(sys.argv[1])); script = open(sys.argv[2]).read()
for k in ("config", "model", "gpu", "python", "lib", "fail-on", "sarif-category", "args", "version", "engine"):
    assert k in a["inputs"], "input " + k
assert a["runs"]["using"] == "composite"
steps = a["runs"]["steps"]; check = [s for s in steps if s.get("id") == "check"][0]; env = check["env"]
for k in a["inputs"]:
    if k == "upload-sarif": continue
    var = "INPUT_" + k.upper().replace("-", "_")
    assert env.get(var) == "\${{ inputs.%s }}" % k, var
    assert var in script, var + " unused by run-check.sh"
assert "contrib/github/run-check.sh" in check["run"]
cache = [s for s in steps if s.get("uses", "").startswith("actions/cache@")]
assert cache and "inputs.engine" in cache[0]["with"]["key"] and "inputs.engine" in cache[0]["if"], cache
up = [s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
assert up and up[0]["with"]["category"] == "\${{ steps.check.outputs.sarif-category }}", up
assert "always()" in up[0]["if"]
assert any("exit-code" in s.get("if", "") and "exit" in s.get("run", "") for s in steps[steps.index(check) + 2:])
for k, v in a["outputs"].items():
    m = re.search(r"steps\.check\.outputs\.([a-z-]+)", v["value"]); assert m
    assert re.search(r"\bout %s\b" % m.group(1), script), m.group(1)
PY'

[ $fail = 0 ] && echo "github_action: ok"
exit $fail
