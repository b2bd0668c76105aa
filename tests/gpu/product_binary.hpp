// The product binary for GPU tests that run `specprobe` as a child: next to this test binary's
// directory (the build tree, or its copy on the device machine), else the build's; SPECPROBE_BIN
// overrides.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <string>

namespace specprobe::test {

inline std::string product_binary() {
  if (const char* bin = std::getenv("SPECPROBE_BIN")) return bin;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto next = self.parent_path().parent_path() / "specprobe";
    if (std::filesystem::exists(next)) return next.string();
  }
  return SPECPROBE_BINARY;
}

}  // namespace specprobe::test
