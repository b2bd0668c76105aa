#!/usr/bin/env bash
# Builds the release assets of specprobe into OUT and their SHA-256 sums; what
# .github/workflows/release.yml runs on a tag, and what ctest "release_script" runs locally.
#
#   bash tools/release/release.sh [--tag vX.Y.Z] [--build DIR] [--out DIR] [--kernels auto|ON|OFF]
#
#   --tag      the tag being released; must be v<project(VERSION) of CMakeLists.txt> (default: that)
#   --build    build directory (default build-release); an existing configured build is reused
#              (ctest passes the test build), a new one is configured Release without tests
#   --out      where the assets go (default dist/); emptied first
#   --kernels  build the probe kernels: auto (when nvcc is found), ON, OFF
#
# Assets, for ARCH x86_64 or aarch64:
#   specprobe-<v>-linux-<ARCH>.tar.gz             bin/, share/ (man page, completions, docs, schema)
#   specprobe_<v>_<amd64|arm64>.deb               the same under /usr; lintian-clean of errors
#   specprobe-<v>-py3-none-manylinux_2_28_<ARCH>.whl  the binary as a Python wheel (pip, uv, pre-commit)
#   SHA256SUMS                                     `sha256sum -c` format, one line per asset
# The binary must need glibc 2.28 at most and no libstdc++ (tests/package/check_glibc_symbols.sh):
# the release fails otherwise. lintian, when installed, must report no error on the .deb.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
tag="" build="$src/build-release" out="$src/dist" kernels=auto
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --kernels) kernels=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "release: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
say() { echo "release: $*" >&2; }
die() { echo "release: error: $*" >&2; exit 1; }

version=$(sed -n 's/^project(specprobe VERSION \([0-9][0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || die "CMakeLists.txt: no project(specprobe VERSION X.Y.Z)"
if [ -n "$tag" ] && [ "$tag" != "v$version" ]; then
  die "tag $tag does not match project(VERSION $version) in CMakeLists.txt: tag v$version, or bump the version"
fi
case "$(uname -m)" in x86_64|amd64) arch=x86_64 ;; aarch64|arm64) arch=aarch64 ;; *) die "no release for $(uname -m)" ;; esac

if [ ! -f "$build/CMakeCache.txt" ]; then
  if [ "$kernels" = auto ]; then
    if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then kernels=ON; else kernels=OFF; fi
  fi
  say "configuring $build (Release, kernels $kernels)"
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPECPROBE_TESTS=OFF \
    -DSPECPROBE_KERNELS="$kernels" >&2
fi
build=$(cd "$build" && pwd)
say "building specprobe $version"
cmake --build "$build" --target specprobe specprobe_package_docs >&2
bin="$build/specprobe"
[ "$("$bin" --version | awk '{print $2}')" = "$version" ] || die "$bin --version is not $version"
bash "$src/tests/package/check_glibc_symbols.sh" "$bin" 2.28 >&2 || die "the binary needs a glibc newer than 2.28"

rm -rf "$out" && mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/specprobe-release.XXXXXX")
trap 'rm -rf "$work"' EXIT
say "packaging (cpack: .deb and .tar.gz)"
(cd "$work" && cpack -G "DEB;TGZ" --config "$build/CPackConfig.cmake" -B "$work/cpack" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log" >&2; die "cpack failed"; }
cp "$work"/cpack/*.deb "$work"/cpack/*.tar.gz "$out/"
tarball="$out/specprobe-$version-linux-$arch.tar.gz"
[ -f "$tarball" ] || die "cpack wrote no $(basename "$tarball")"

# The wheel carries the stripped binary of the tarball.
mkdir -p "$work/tgz" && tar -xzf "$tarball" -C "$work/tgz"
say "wheel"
url=$(sed -n "s/^SPECPROBE_PROJECT_URL:STRING=//p" "$build/CMakeCache.txt")
python3 "$src/tools/release/build_wheel.py" --binary "$work/tgz/specprobe-$version-linux-$arch/bin/specprobe" \
  --version "$version" --out "$out" --license "$src/LICENSE" --readme "$src/README.md" --project-url "$url" >/dev/null

if command -v lintian >/dev/null; then
  say "lintian"
  # Errors fail the release; warnings are printed. (Run as root lintian wants --allow-root.)
  lint=$(lintian --allow-root --tag-display-limit 0 "$out"/*.deb 2>&1 || true)
  [ -z "$lint" ] || echo "$lint" | sed 's/^/  lintian: /' >&2
  if grep -q '^E:' <<<"$lint"; then die "lintian reports errors on the .deb"; fi
else
  say "lintian not installed: the .deb is not linted (apt-get install lintian)"
fi

(cd "$out" && sha256sum -- *.tar.gz *.deb *.whl >SHA256SUMS)
say "assets in $out:"
(cd "$out" && ls -l) >&2
