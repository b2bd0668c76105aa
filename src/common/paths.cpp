// Where a path lies (see paths.hpp).
#include "common/paths.hpp"

namespace specprobe {
namespace fs = std::filesystem;

bool path_under(const fs::path& p, const fs::path& base) {
  if (base.empty()) return false;
  auto pi = p.begin();
  for (auto bi = base.begin(); bi != base.end(); ++bi, ++pi)
    if (pi == p.end() || *pi != *bi) return false;
  return true;
}

bool inside_tree(const fs::path& path, const fs::path& dir) {
  std::error_code ec1, ec2;
  const fs::path p = fs::canonical(path, ec1);
  const fs::path base = fs::canonical(dir.empty() ? fs::path(".") : dir, ec2);
  return !ec1 && !ec2 && path_under(p, base);
}

}  // namespace specprobe
