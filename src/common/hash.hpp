// FNV-1a, 64 bits: a stable, dependency-free hash for identifiers that must not change between
// runs and machines (report fingerprints, the GPU UUID's hash). Not for security.
#pragma once
#include <cstdint>
#include <string_view>

namespace specprobe {

inline uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace specprobe
