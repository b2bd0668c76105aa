#!/usr/bin/env bash
# ctest "tests_off_configure" (label package): -DSPECPROBE_TESTS=OFF must configure without
# Catch2 (find_package(Catch2) is made to fail) and define no test, bench or fuzz target.
# usage: tests_off_configure.sh SRC BUILD_DIR
set -euo pipefail
src=$1 dir=$2
rm -rf "$dir"
cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPECPROBE_TESTS=OFF -DSPECPROBE_KERNELS=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON >"$dir.log" 2>&1 || { cat "$dir.log"; echo "FAIL: configure"; exit 1; }
# No tests/, bench/ or fuzz subdirectory is configured; the executable and CPack's target are.
for d in tests bench tests/fuzz; do
  if [ -e "$dir/$d" ]; then echo "FAIL: $d is configured with SPECPROBE_TESTS=OFF"; exit 1; fi
done
[ -d "$dir/CMakeFiles/specprobe.dir" ] || { echo "FAIL: no specprobe target"; exit 1; }
cmake --build "$dir" --target help | grep -q '^package: ' || { echo "FAIL: no package target (CPack)"; exit 1; }
# The guard must really be what keeps Catch2 out: with tests on, the same configure must fail.
if cmake -S "$src" -B "$dir-on" -G Ninja -DSPECPROBE_KERNELS=OFF -DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON \
    >"$dir-on.log" 2>&1; then
  echo "FAIL: CMAKE_DISABLE_FIND_PACKAGE_Catch2 did not make the tests-on configure fail"; rm -rf "$dir-on"; exit 1
fi
rm -rf "$dir" "$dir-on" "$dir.log" "$dir-on.log"
echo "tests_off_configure: ok"
