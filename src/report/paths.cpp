// Report paths relative to the source root (see printers.hpp).
#include <filesystem>

#include "report/printers.hpp"

namespace fs = std::filesystem;

namespace specprobe {

std::string root_relative(const std::string& path, const PathBase& base) {
  if (path.empty() || path == kCommandLineInput || base.root.empty()) return path;
  auto without_slash = [](std::string s) {
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return fs::path(s).lexically_normal();
  };
  const fs::path root = without_slash(base.root);
  fs::path p(path);
  if (p.is_relative()) p = without_slash(base.working_dir.empty() ? base.root : base.working_dir) / p;
  p = p.lexically_normal();
  const fs::path rel = p.lexically_relative(root);
  if (rel.empty() || rel == "." || *rel.begin() == "..") return p.generic_string();  // outside the root
  return rel.generic_string();
}

}  // namespace specprobe
