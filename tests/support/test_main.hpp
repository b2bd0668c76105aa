// The test binaries' entry point (tests/main.cpp, tests/main_gpu.cxx). A test binary is also a
// probe front end that knows the test-only probes (test_faults.hpp), so tests and benchmarks can
// prove the runner's isolation without those probes in the product:
//   <test binary> __probe-child --specs JSON   the probe child, product + test probes
//   <test binary> probe ARGS...                `specprobe probe ARGS...` with the same table; its
//                                              children re-execute this binary (/proc/self/exe)
// Anything else runs the Catch2 session.
#pragma once

namespace specprobe::testing {

int test_main(int argc, char** argv);

}  // namespace specprobe::testing
