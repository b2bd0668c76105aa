// Lookup in the embedded-file table.
#include "common/embedded.hpp"

namespace specprobe {

std::optional<std::string_view> embedded_file(std::string_view path) {
  for (const auto& f : embedded_files())
    if (f.path == path) return f.content;
  return std::nullopt;
}

}  // namespace specprobe
