#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this):
#   1. set up (Debian packages),
#   2. release build with the probe kernels (when nvcc exists) + every CPU test (ctest -LE gpu),
#      the packaging tests (label package) included, then the start-up benchmark's figures,
#   3. ASan+UBSan build of the whole test suite and the fuzz harnesses (second build dir, clang
#      -O1, no kernels; the labels that check data or run minutes of the same code, property /
#      advisories / style / engines / load, run in step 2 only),
#   4. a short smoke pass of each fuzz harness in that tree.
# Without clang, step 3 is a g++ ASan+UBSan build of the suite and step 4 is left out.
# GPU tests (ctest -L gpu) run on a GPU machine: see README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/setup.sh
JOBS=$(nproc)

echo "== build (release)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$JOBS"
bash tests/package/setup_tools.sh build   # pre-commit from PyPI, for ctest release_script
echo "== tests (release)"
# package-root / package-slow (old-glibc chroot, Dockerfile stages): bash tests/package/run_heavy.sh
ctest --test-dir build --output-on-failure -LE "gpu|package-root|package-slow" -j "$JOBS"
echo "== speed (a report, not a test: figures only; docs/perf/startup.md)"
python3 bench/speed_bench.py --runs 9 --files 300

SAN_TESTS="gpu|fuzz|package|property|advisories|style|engines|load|corpus|tools"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if [ -f tests/fuzz/CMakeLists.txt ] && command -v clang++ >/dev/null; then
  # One clang tree serves both sanitized passes: ASan+UBSan at -O1 with line tables (the library
  # also carries libFuzzer's coverage hooks, which the tests' binaries leave to the ASan runtime's
  # no-op defaults). At -O1 the suite runs several times faster than at -O0 (a 200,000-word
  # command line: 38.8 s at -O0, 1.9 s in the release build), with asserts kept (Debug); building
  # the harnesses in the same tree saves a third sanitized build of the library.
  echo "== build (ASan+UBSan, clang -O1, with the fuzz harnesses)"
  CC=clang CXX=clang++ cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DSPECPROBE_SANITIZE=ON -DSPECPROBE_FUZZ=ON \
    -DSPECPROBE_KERNELS=OFF >/dev/null
  cmake --build build-san -j "$JOBS" --target specprobe specprobe_tests fuzz_harnesses
  echo "== tests (ASan+UBSan)"
  ctest --test-dir build-san --output-on-failure -LE "$SAN_TESTS" -j "$JOBS"
  echo "== fuzz smoke"
  ctest --test-dir build-san --output-on-failure -L fuzz -j "$JOBS"
else
  echo "== build (ASan+UBSan, $(c++ --version | head -1); no clang: no fuzz smoke)"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSPECPROBE_SANITIZE=ON -DSPECPROBE_KERNELS=OFF >/dev/null
  cmake --build build-asan -j "$JOBS" --target specprobe specprobe_tests
  echo "== tests (ASan+UBSan)"
  ctest --test-dir build-asan --output-on-failure -LE "$SAN_TESTS" -j "$JOBS"
fi
echo "run_all: all passed"
