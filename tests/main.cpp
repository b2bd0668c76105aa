// Catch2 entry point for the CPU test binary.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
