#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this):
#   1. set up (Debian packages),
#   2. release build with the probe kernels (when nvcc exists) + every CPU test (ctest -LE gpu),
#      the packaging tests (label package) included,
#   3. ASan+UBSan build of the whole test suite (second build dir, no kernels; the labels that
#      check data or run minutes of the same code, property / advisories / style / engines, run in
#      step 2 only),
#   4. a short smoke pass of each fuzz harness (when clang's libFuzzer is available).
# GPU tests (ctest -L gpu) run on a GPU machine: see README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/setup.sh
JOBS=$(nproc)

echo "== build (release)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$JOBS"
echo "== tests (release)"
# package-root / package-slow (old-glibc chroot, Dockerfile stages): bash tests/package/run_heavy.sh
ctest --test-dir build --output-on-failure -LE "gpu|package-root|package-slow" -j "$JOBS"

echo "== build (ASan+UBSan)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSPECPROBE_SANITIZE=ON -DSPECPROBE_KERNELS=OFF >/dev/null
cmake --build build-asan -j "$JOBS" --target specprobe specprobe_tests
echo "== tests (ASan+UBSan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -LE "gpu|fuzz|package|property|advisories|style|engines|load" -j "$JOBS"

if [ -f tests/fuzz/CMakeLists.txt ] && command -v clang++ >/dev/null; then
  echo "== fuzz smoke"
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSPECPROBE_FUZZ=ON -DSPECPROBE_KERNELS=OFF >/dev/null
  cmake --build build-fuzz -j "$JOBS" --target fuzz_harnesses
  ctest --test-dir build-fuzz --output-on-failure -L fuzz -j "$JOBS"
fi
echo "run_all: all passed"
