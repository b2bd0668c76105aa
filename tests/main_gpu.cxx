// Catch2 entry point for the GPU test binary (ctest label "gpu"). It is also the probe child of
// the isolation tests: `specprobe_gpu_tests __probe-child --specs JSON` runs the product's probes
// and test_fault / test_hang, and `specprobe_gpu_tests probe ...` is `specprobe probe` with them
// (support/test_main.hpp; bench/probe_run_device.sh's isolation demo).
#include "support/test_main.hpp"

int main(int argc, char** argv) { return specprobe::testing::test_main(argc, argv); }
