#!/usr/bin/env bash
# ctest "release_script" (label package): tools/release/release.sh, the script the release
# workflow runs, on the test build: it writes the tarball, the .deb and the wheel with their
# SHA256SUMS (which verify); the wheel installs into a fresh venv with nothing from an index and
# its `specprobe` runs; pre-commit (BUILD/tools/pre-commit, tests/package/setup_tools.sh) installs
# the hooks of .pre-commit-hooks.yaml from a throwaway hook repository with the wheel as the only
# package source (PIP_NO_INDEX) and runs them on a throwaway repository, all files in one process;
# the workflow runs release.sh and publishes SHA256SUMS; every mention of the repository agrees.
# usage: release_test.sh BUILD SRC
set -uo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
tmp=$(mktemp -d /tmp/specprobe-release-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }
version=$(sed -n 's/^project(specprobe VERSION \([0-9][0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
arch=$(uname -m); [ "$arch" = arm64 ] && arch=aarch64

bash "$src/tools/release/release.sh" --build "$build" --out "$tmp/dist" >"$tmp/release.log" 2>&1
rc=$?
tail -8 "$tmp/release.log" | sed 's/^/  | /'
check "release.sh exits 0" '[ $rc = 0 ]'
check "a tag that is not the version is refused" \
  '! bash "$src/tools/release/release.sh" --tag v0.0.0-nope --build "$build" --out "$tmp/x" >/dev/null 2>&1'
for a in "specprobe-$version-linux-$arch.tar.gz" "specprobe-$version-py3-none-manylinux_2_28_$arch.whl"; do
  check "asset $a" '[ -s "$tmp/dist/$a" ]'
done
check "a .deb" 'ls "$tmp"/dist/specprobe_"$version"_*.deb >/dev/null'
check "SHA256SUMS lists the three assets and verifies" \
  '[ "$(wc -l <"$tmp/dist/SHA256SUMS")" = 3 ] && (cd "$tmp/dist" && sha256sum -c --quiet SHA256SUMS)'

# The wheel: a fresh venv, no index.
python3 -m venv "$tmp/venv" >/dev/null
"$tmp/venv/bin/python" -m pip install -q --no-index --disable-pip-version-check "$tmp"/dist/*.whl
check "the wheel installs with no index and its specprobe runs" \
  '[ "$("$tmp/venv/bin/specprobe" --version | awk "{print \$2}")" = "$version" ]'
check "the wheel carries the licence and the manylinux_2_28 tag" \
  'python3 -c "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); n = z.namelist(); assert any(p.endswith(\"licenses/LICENSE\") for p in n), n; assert \"Tag: py3-none-manylinux_2_28_\" in z.read([p for p in n if p.endswith(\"/WHEEL\")][0]).decode()" "$tmp"/dist/*.whl'
ex="$src/docs/examples"
"$tmp/venv/bin/specprobe" check "$ex/seeds/dsv4-mtp.yaml" --model "$ex/checkpoints/deepseek-v4-flash" --gpu H100 \
  --lib vllm=0.25.1 --quiet >/dev/null 2>&1
check "the wheel's specprobe checks the example" '[ $? -le 1 ]'

# pre-commit, installing the hooks from the wheel.
pc="$build/tools/pre-commit/bin/pre-commit"
if [ ! -x "$pc" ]; then
  echo "skip: pre-commit not set up (bash tests/package/setup_tools.sh $build)"
else
  hooks="$tmp/hook-repo" user="$tmp/user-repo"
  mkdir -p "$hooks/tools/release" "$user/deploy"
  cp "$src/pyproject.toml" "$src/.pre-commit-hooks.yaml" "$src/CMakeLists.txt" "$hooks/"
  cp "$src/tools/release/hooks_backend.py" "$hooks/tools/release/"
  git_q() { git -C "$1" -c user.email=t@example.com -c user.name=test "${@:2}" >/dev/null 2>&1; }
  git_q "$hooks" init -q && git_q "$hooks" add -A && git_q "$hooks" commit -qm hooks
  rev=$(git -C "$hooks" rev-parse HEAD)
  cp "$ex/seeds/dsv4-mtp.yaml" "$user/deploy/serve.yaml"
  cp "$ex/seeds/dsv4-mtp.yaml" "$user/deploy/serve-b.yaml"
  cp -r "$ex/checkpoints/deepseek-v4-flash" "$user/deploy/model-config"
  cat >"$user/.pre-commit-config.yaml" <<YAML
repos:
  - repo: $hooks
    rev: $rev
    hooks:
      - id: specprobe-config
        args: [--gpu=H100, --model=deploy/model-config, --lib=vllm=0.25.1]
YAML
  git_q "$user" init -q && git_q "$user" add -A && git_q "$user" commit -qm configs
  run_pc() {
    (cd "$user" && env PIP_NO_INDEX=1 PIP_FIND_LINKS="$tmp/dist" PRE_COMMIT_HOME="$tmp/pc-home" \
       "$pc" run --all-files --verbose) >"$tmp/pc.log" 2>&1
  }
  run_pc; rc=$?
  tail -12 "$tmp/pc.log" | sed 's/^/  | /'
  check "pre-commit installs the hooks from the wheel and they pass (exit $rc)" '[ $rc = 0 ]'
  check "both configs checked by one process" 'grep -q "server 2 of 2" "$tmp/pc.log"'
  cp "$ex/seeds/turboquant-ngram.yaml" "$user/deploy/serve-tq.yaml"
  git_q "$user" add -A
  run_pc; rc=$?
  check "a config with findings fails the hook (exit $rc)" '[ $rc = 1 ]'
fi

check "the workflow runs release.sh and publishes the sums" \
  'grep -q "tools/release/release.sh" "$src/.github/workflows/release.yml" && grep -q "SHA256SUMS" "$src/.github/workflows/release.yml"'
check "every mention of the repository agrees" 'python3 "$src/tools/release/repository.py" --check'
[ $fail = 0 ] && echo "release_script: ok"
exit $fail
