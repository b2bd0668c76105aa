#!/bin/bash
# Copy what one device call needs out of a build dir into DEST (under the git-ignored .dev/, so `run`
# can carry it): the binary, the GPU test binary and ctest's files. The whole build dir is over
# `run`'s 64 MiB carry limit. ctest's files name the build dir by absolute path;
# probe_run_device.sh points them at wherever DEST lies on the device.
# Usage: bash bench/pack_device_build.sh build-dev .dev/h   (then carry .dev)
set -euo pipefail
src=${1:?build dir}; dest=${2:?destination}
[ -x "$src/specprobe" ] && [ -x "$src/tests/specprobe_gpu_tests" ] || { echo "pack_device_build.sh: $src has no specprobe or tests/specprobe_gpu_tests; build it first" >&2; exit 2; }
# Only a directory this script made (it leaves a marker) or an empty one is replaced.
if [ -e "$dest" ] && [ ! -e "$dest/.pack_device_build" ] && [ -n "$(ls -A "$dest" 2>/dev/null)" ]; then
  echo "pack_device_build.sh: $dest exists and was not made by this script; not replacing it" >&2; exit 2
fi
rm -rf "$dest"; mkdir -p "$dest/tests"; : > "$dest/.pack_device_build"
cp "$src/specprobe" "$dest/"
cp "$src/tests/specprobe_gpu_tests" "$dest/tests/"
(cd "$src" && find . -name 'CTestTestfile.cmake' -o -name '*_include-*.cmake' -o -name '*_tests-*.cmake') | while read -r f; do
  mkdir -p "$dest/$(dirname "$f")"; cp "$src/$f" "$dest/$f"
done
du -sh "$dest"
