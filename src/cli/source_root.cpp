// The source root (see source_root.hpp).
#include "cli/source_root.hpp"

#include <filesystem>

namespace fs = std::filesystem;

namespace specprobe {
namespace {

std::string absolute_dir(const fs::path& p) {
  std::error_code ec;
  fs::path a = fs::weakly_canonical(fs::absolute(p, ec), ec);
  std::string s = (ec ? fs::absolute(p) : a).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

std::string find_source_root(const std::string& flag, const std::string& input_file,
                             const std::function<const char*(const char*)>& getenv) {
  if (!flag.empty()) return absolute_dir(flag);
  for (const char* var : {"GITHUB_WORKSPACE", "CI_PROJECT_DIR"})
    if (const char* v = getenv(var); v && *v) return absolute_dir(v);
  std::error_code ec;
  const std::string cwd = absolute_dir(fs::current_path(ec));
  fs::path dir = input_file.empty() ? fs::path(cwd) : fs::path(absolute_dir(input_file)).parent_path();
  for (int depth = 0; depth < 256 && !dir.empty(); ++depth) {
    if (fs::exists(dir / ".git", ec)) return dir.string();
    if (dir == dir.root_path()) break;
    dir = dir.parent_path();
  }
  return cwd;
}

}  // namespace specprobe
