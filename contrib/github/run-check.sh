#!/usr/bin/env bash
# The shell logic of action.yml (the composite GitHub Action at the repository root), kept here so
# it can be tested directly (tests/package/github_action_test.sh).
#
# 1. Gets specprobe:
#    - SPECPROBE_BIN set: use that binary (tests, self-hosted runners with specprobe installed);
#    - INPUT_VERSION=source: build it from the action's own checkout ($GITHUB_ACTION_PATH) with
#      Debian/Ubuntu packages (apt-get, via sudo when not root);
#    - otherwise download the release tarball
#        $SPECPROBE_RELEASE_URL/v<VERSION>/specprobe-<VERSION>-linux-<ARCH>.tar.gz
#      where SPECPROBE_RELEASE_URL defaults to https://github.com/<REPO>/releases/download, <REPO>
#      is INPUT_REPOSITORY or the action's repository, <ARCH> is x86_64 or aarch64, and
#      INPUT_VERSION=latest (default) is resolved through https://github.com/<REPO>/releases/latest;
#      the tarball's SHA-256 must match its line in the release's SHA256SUMS.
# 2. Runs `specprobe check` in $GITHUB_WORKSPACE with the inputs, writing SARIF and JSON, with
#    --github (annotations, and the Markdown summary appended to $GITHUB_STEP_SUMMARY).
# 3. Writes step outputs to $GITHUB_OUTPUT:
#      specprobe       path of the binary used
#      version         `specprobe --version`
#      exit-code       specprobe's exit code (0 pass, 1 findings, 2 usage/input, 3 environment, 4 verdict unknown, 5 report not written)
#      verdict         the plan's verdict from the JSON report (supported, supported-with-risks, not-supported, unknown)
#      sarif-file      the SARIF report (empty when none was written)
#      sarif-category  the code-scanning category (INPUT_SARIF_CATEGORY, default specprobe/<gpu>)
#      json-file       the JSON report
# Exits 0 when specprobe ran and wrote its SARIF (exit codes 0, 1 and 4: the action uploads the SARIF,
# then fails the job on exit-code != 0 in a later step); otherwise exits with specprobe's code.
#
# Inputs (env): INPUT_CONFIG INPUT_MODEL INPUT_GPU INPUT_PYTHON INPUT_LIB INPUT_FAIL_ON
# INPUT_SARIF_CATEGORY INPUT_ARGS INPUT_VERSION INPUT_REPOSITORY INPUT_ENGINE (vllm==VERSION: the
# engine environment of that release, made with `specprobe engines install` unless the cache has
# it, and check --engine-env auto). INPUT_LIB: NAME=VERSION entries
# separated by spaces, commas or newlines. INPUT_ARGS: more `specprobe check` arguments, split on
# whitespace (no quoting); they come last, so `-- vllm serve ...` works there (config empty).
set -euo pipefail

log() { echo "specprobe-action: $*" >&2; }
out() { echo "$1=$2" >>"${GITHUB_OUTPUT:-/dev/null}"; }
die() { log "error: $*"; echo "::error title=specprobe::$*" >&2; exit "${2:-2}"; }

workspace=${GITHUB_WORKSPACE:-$PWD}
tmp=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/specprobe-action
mkdir -p "$tmp"
version=${INPUT_VERSION:-latest}

# ---- 1. the binary --------------------------------------------------------------------------
repository() {
  if [ -n "${INPUT_REPOSITORY:-}" ]; then echo "$INPUT_REPOSITORY"; return; fi
  # Composite actions run from .../_actions/OWNER/REPO/REF; GITHUB_ACTION_REPOSITORY is not set
  # reliably inside them.
  if [[ ${GITHUB_ACTION_PATH:-} =~ /_actions/([^/]+)/([^/]+)/[^/]+/?$ ]]; then
    echo "${BASH_REMATCH[1]}/${BASH_REMATCH[2]}"; return
  fi
  if [ -n "${GITHUB_ACTION_REPOSITORY:-}" ]; then echo "$GITHUB_ACTION_REPOSITORY"; return; fi
  die "cannot tell which repository's releases to download: set the 'repository' input"
}

# verify_sum FILE SUMS_URL NAME: FILE's SHA-256 must be NAME's line of the release's SHA256SUMS
# (tools/release/release.sh writes it); a release without one, or a mismatch, is an error (3).
verify_sum() {
  local file=$1 sums_url=$2 name=$3 want got
  curl -fsSL --retry 3 -o "$tmp/SHA256SUMS" "$sums_url" || die "download failed: $sums_url (the release's checksums)" 3
  want=$(awk -v n="$name" '$2 == n || $2 == "*" n {print $1}' "$tmp/SHA256SUMS")
  [ -n "$want" ] || die "$sums_url has no line for $name" 3
  got=$(sha256sum "$file" | awk '{print $1}')
  [ "$got" = "$want" ] || die "checksum mismatch for $name: SHA256SUMS says $want, the download is $got" 3
  log "sha256 of $name verified ($got)"
}

install_release() {
  local repo base arch url dir
  case "$(uname -m)" in
    x86_64|amd64) arch=x86_64 ;;
    aarch64|arm64) arch=aarch64 ;;
    *) die "no release build for $(uname -m): use version: source" ;;
  esac
  if [ -n "${SPECPROBE_RELEASE_URL:-}" ]; then
    base=$SPECPROBE_RELEASE_URL
  else
    repo=$(repository)
    base="https://github.com/$repo/releases/download"
  fi
  if [ "$version" = latest ]; then
    [ -n "${repo:-}" ] || die "version: latest needs the GitHub release page; give a version"
    local tag
    tag=$(curl -fsSLI -o /dev/null -w '%{url_effective}' "https://github.com/$repo/releases/latest") ||
      die "cannot resolve the latest release of $repo" 3
    tag=${tag##*/}
    [[ $tag == v* ]] || die "the latest release of $repo has no vX.Y.Z tag (got '$tag')" 3
    version=${tag#v}
  fi
  version=${version#v}
  url="$base/v$version/specprobe-$version-linux-$arch.tar.gz"
  dir="$tmp/release-$version"
  if [ ! -x "$dir/bin/specprobe" ]; then
    log "downloading $url"
    rm -rf "$dir" && mkdir -p "$dir"
    curl -fsSL --retry 3 -o "$tmp/specprobe.tar.gz" "$url" || die "download failed: $url" 3
    verify_sum "$tmp/specprobe.tar.gz" "$base/v$version/SHA256SUMS" "$(basename "$url")"
    tar -xzf "$tmp/specprobe.tar.gz" -C "$dir" --strip-components=1 || die "bad archive: $url" 3
  fi
  [ -x "$dir/bin/specprobe" ] || die "$url has no bin/specprobe" 3
  echo "$dir/bin/specprobe"
}

install_source() {
  local srcdir=${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/../.." && pwd)} build="$tmp/build"
  if [ "${SPECPROBE_APT:-1}" = 1 ] && command -v apt-get >/dev/null; then
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    log "installing build dependencies (apt-get)"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      cmake ninja-build g++ libcli11-dev nlohmann-json3-dev libfmt-dev libyaml-cpp-dev libjemalloc-dev >&2
  fi
  log "building specprobe from $srcdir"
  cmake -S "$srcdir" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPECPROBE_TESTS=OFF \
    -DSPECPROBE_KERNELS=OFF >&2
  cmake --build "$build" --target specprobe >&2
  echo "$build/specprobe"
}

if [ -n "${SPECPROBE_BIN:-}" ]; then
  bin=$SPECPROBE_BIN
elif [ "$version" = source ]; then
  bin=$(install_source)
else
  bin=$(install_release)
fi
[ -x "$bin" ] || die "specprobe binary not found: $bin" 3
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
out specprobe "$bin"
out version "$("$bin" --version)"
log "$("$bin" --version)"

# ---- 2. the check ---------------------------------------------------------------------------
gpu=${INPUT_GPU:-}
category=${INPUT_SARIF_CATEGORY:-}
[ -n "$category" ] || category="specprobe${gpu:+/$gpu}"
slug=$(tr -c 'A-Za-z0-9._-' '_' <<<"$category" | sed 's/_$//')
sarif="$tmp/$slug.sarif"
json="$tmp/$slug.json"
rm -f "$sarif" "$json"

# The engine at the deploy's release (opt-in): its environment, cached by the action's
# actions/cache step under the same key, made once.
if [ -n "${INPUT_ENGINE:-}" ]; then
  if [[ ! ${INPUT_ENGINE} =~ ^(vllm|sglang)==([0-9][0-9A-Za-z.+-]*)$ ]]; then
    die "engine input '${INPUT_ENGINE}' is not vllm==VERSION or sglang==VERSION"
  fi
  engine_name=${BASH_REMATCH[1]} engine_version=${BASH_REMATCH[2]}
  if "$bin" engines list --format json | grep -q "\"name\": \"$engine_name-$engine_version\""; then
    log "engine environment $engine_name-$engine_version from the cache"
  else
    log "making the engine environment $engine_name-$engine_version (specprobe engines install)"
    "$bin" engines install "$INPUT_ENGINE" >&2 || die "specprobe engines install $INPUT_ENGINE failed" 3
  fi
fi

args=(check)
[ -n "${INPUT_CONFIG:-}" ] && args+=("$INPUT_CONFIG")
[ -n "${INPUT_MODEL:-}" ] && args+=(--model "$INPUT_MODEL")
[ -n "$gpu" ] && args+=(--gpu "$gpu")
[ -n "${INPUT_PYTHON:-}" ] && args+=(--python "$INPUT_PYTHON")
for lib in $(tr ',\n' '  ' <<<"${INPUT_LIB:-}"); do args+=(--lib "$lib"); done
[ -n "${INPUT_FAIL_ON:-}" ] && args+=(--fail-on "$INPUT_FAIL_ON")
if [ -n "${INPUT_ENGINE:-}" ]; then
  args+=(--engine-env auto)
  [[ ",${INPUT_LIB:-}" == *[\ ,]"$engine_name"=* || ${INPUT_LIB:-} == "$engine_name"=* ]] || args+=(--lib "$engine_name=$engine_version")
fi
args+=(--sarif "$sarif" --json "$json" --github)
# upload-sarif keeps the category a SARIF file names, so the category goes into the file.
[ -z "${INPUT_SARIF_CATEGORY:-}" ] || args+=(--sarif-category "$INPUT_SARIF_CATEGORY")
if [ -n "${INPUT_ARGS:-}" ]; then
  read -r -a extra <<<"$(tr '\n' ' ' <<<"$INPUT_ARGS")"
  args+=("${extra[@]}")
fi

cd "$workspace"
log "specprobe ${args[*]}"
set +e
"$bin" "${args[@]}"
rc=$?
set -e
out exit-code "$rc"
out sarif-category "$category"
verdict=""
if [ -s "$json" ]; then
  out json-file "$json"
  # The top-level key (the report is pretty-printed, two spaces per level; matrix cells have
  # their own "verdict" deeper down).
  verdict=$(sed -n 's/^  "verdict": *"\([a-z-]*\)".*/\1/p' "$json" | head -1)
fi
out verdict "$verdict"
if [ -s "$sarif" ]; then
  out sarif-file "$sarif"
else
  out sarif-file ""
fi
log "exit code $rc${verdict:+, verdict $verdict}"
if [ -s "$sarif" ] && { [ "$rc" -le 1 ] || [ "$rc" -eq 4 ]; }; then exit 0; fi
exit "$rc"
