// Catch2 entry point for the CPU test binary; also a probe front end and probe child with the
// test-only probes (support/test_main.hpp).
#include "support/test_main.hpp"

int main(int argc, char** argv) { return specprobe::testing::test_main(argc, argv); }
