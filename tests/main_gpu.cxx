// Catch2 entry point for the GPU test binary (ctest label "gpu").
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
