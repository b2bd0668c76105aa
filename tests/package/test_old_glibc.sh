#!/usr/bin/env bash
# ctest "old_glibc" (label package-root): installs specprobe into an old-glibc root and runs it
# there with chroot: the .deb when the root's glibc meets its Depends (libc6 >= 2.28), else the
# release tarball (Ubuntu 18.04's glibc 2.27 is below the floor the .deb states: the binary
# running there shows the floor holds with a margin). Needs root and a prepared root directory in
# SPECPROBE_OLD_ROOT; without it the test is skipped (exit 77). Make the root once with
#   bash tests/package/make_old_root.sh /work/scratch/bionic [bionic|bullseye|buster]
# then
#   SPECPROBE_OLD_ROOT=/work/scratch/bionic ctest --test-dir build -L package-root --output-on-failure
# usage: test_old_glibc.sh BUILD SRC
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
root=${SPECPROBE_OLD_ROOT:-}
if [ -z "$root" ]; then echo "SPECPROBE_OLD_ROOT is not set: skipped"; exit 77; fi
[ -x "$root/bin/sh" ] || { echo "FAIL: $root is not a Debian root (no bin/sh)"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "old_glibc needs root (chroot): skipped"; exit 77; }

tmp=$(mktemp -d /tmp/specprobe-oldroot.XXXXXX)
trap 'rm -rf "$tmp"; rm -rf "$root/tmp/specprobe-test"' EXIT
(cd "$tmp" && cpack -G "DEB;TGZ" --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1) ||
  { cat "$tmp/cpack.log"; echo "FAIL: cpack"; exit 1; }
deb=$(ls "$tmp"/out/*.deb) tgz=$(ls "$tmp"/out/*.tar.gz)
mkdir -p "$root/tmp/specprobe-test"
cp "$deb" "$root/tmp/specprobe-test/specprobe.deb"
tar -xzf "$tgz" -C "$root/tmp/specprobe-test"
# Inputs beyond the bundled examples: a checkpoint with safetensors headers (the scan runs
# threads) and a malformed config (the error path throws and unwinds).
ck="$root/tmp/specprobe-test/checkpoint"
mkdir -p "$ck"
cp "$src/docs/examples/checkpoints/deepseek-v4-flash/config.json" "$ck/"
python3 - "$ck" <<'PY'
import json, struct, sys
for i in (1, 2):  # two header-only shards (no tensor data: offsets 0..0)
    hdr = json.dumps({f"model.layers.{i}.mlp.gate.weight": {"dtype": "BF16", "shape": [0], "data_offsets": [0, 0]},
                      "__metadata__": {"format": "pt"}}).encode()
    with open(f"{sys.argv[1]}/model-0000{i}-of-00002.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(hdr)) + hdr)
PY
printf 'speculative_config: {method: mtp, num_speculative_tokens: [\n' >"$root/tmp/specprobe-test/bad.yaml"

in_root() { echo "+ $*"; chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
fail=0
expect() {  # expect "ALLOWED EXIT CODES" CMD...
  local ok=$1 rc; shift
  set +e; in_root "$@" >"$tmp/out.txt" 2>&1; rc=$?; set -e
  head -n "${LINES_SHOWN:-15}" "$tmp/out.txt" | sed 's/^/  | /'
  [ "$(wc -l <"$tmp/out.txt")" -le "${LINES_SHOWN:-15}" ] || echo "  | ... ($(wc -l <"$tmp/out.txt") lines)"
  echo "  exit $rc"
  [[ " $ok " == *" $rc "* ]] || { echo "FAIL: exit $rc, expected one of: $ok"; fail=1; }
}

echo "== root: $root"
in_root sh -c '. /etc/os-release; echo "$PRETTY_NAME"; ldd --version | head -1'
root_glibc=$(chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin ldd --version | head -1 | grep -o '[0-9]\+\.[0-9]\+$')
need=$(dpkg-deb -f "$deb" Depends | grep -o '[0-9]\+\.[0-9]\+')
if [ "$(printf '%s\n%s\n' "$need" "$root_glibc" | sort -V | head -1)" = "$need" ]; then
  in_root dpkg -i /tmp/specprobe-test/specprobe.deb
  in_root dpkg -s specprobe | grep -E '^(Status|Version|Depends):'
  ex=/usr/share/doc/specprobe/examples
  installed=deb
else
  echo "== glibc $root_glibc is below the .deb's libc6 >= $need: the release tarball instead"
  top=$(basename "$tgz" .tar.gz)
  ln -sf "/tmp/specprobe-test/$top/bin/specprobe" "$root/usr/bin/specprobe"
  ex=/tmp/specprobe-test/$top/share/doc/specprobe/examples
  installed=tarball
fi
expect "0" specprobe --version
expect "0 1" specprobe check $ex/seeds/dsv4-mtp.yaml --model $ex/checkpoints/deepseek-v4-flash --gpu H100 --lib vllm=0.25.1
LINES_SHOWN=8 expect "0" specprobe rules list
LINES_SHOWN=5 expect "0 1" specprobe check $ex/seeds/gb10-flashinfer-gqa16.sh --model $ex/checkpoints/gqa16-mtp --gpu GB10 --format json
LINES_SHOWN=5 expect "0" specprobe explain SP3001
expect "2" specprobe check /tmp/specprobe-test/bad.yaml --gpu H100
expect "0 1" specprobe check $ex/seeds/dsv4-mtp.yaml --model /tmp/specprobe-test/checkpoint --gpu H100 --lib vllm=0.25.1 --quiet --no-matrix
expect "0 1 3" specprobe gpu
if [ $installed = deb ]; then in_root dpkg -r specprobe >/dev/null; else rm -f "$root/usr/bin/specprobe"; fi
[ $fail = 0 ] && echo "old_glibc: ok (glibc $root_glibc, $installed)"
exit $fail
