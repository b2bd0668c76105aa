// Answer caches of the child-process checks (see answer_cache.hpp).
#include "probes/answer_cache.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "common/output_file.hpp"

namespace fs = std::filesystem;

namespace specprobe::probes {

uint64_t fnv1a64(std::string_view s, uint64_t basis) {
  uint64_t h = basis;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

void CacheKey::add(std::string_view field) {
  a_ = fnv1a64(field, a_);
  b_ = fnv1a64(field, b_ ^ 0x5bd1e995u);
  a_ = fnv1a64(std::string_view("\x1f", 1), a_);  // separates fields
  b_ = fnv1a64(std::string_view("\x1e", 1), b_);
}

void CacheKey::add_stat(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    add("missing:" + path);
    return;
  }
  add(fmt::format("{}:{}:{}.{}", path, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec));
}

void CacheKey::add_file(const std::string& path) {
  add_stat(path);
  add(read_small_file(path, 32u << 20));
}

std::string CacheKey::hex() const { return fmt::format("{:016x}{:016x}", a_, b_); }

std::string read_small_file(const std::string& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  // Sized by the file, not the limit: zero-filling a 32 MiB buffer per file cost 40 ms each.
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  std::string s;
  s.resize(ec ? std::min<size_t>(limit, 1u << 20) : std::min<size_t>(limit, static_cast<size_t>(size) + 1));
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<size_t>(in.gcount()));
  return s;
}

namespace {

std::string normalised(std::string s) {
  for (auto& c : s) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c == '-' || c == '.') c = '_';
  }
  return s;
}

}  // namespace

std::string find_dist_record(const std::vector<std::string>& names, const std::vector<std::string>& site_packages) {
  for (const auto& sp : site_packages) {
    std::error_code ec;
    for (fs::directory_iterator it(sp, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string file = it->path().filename().string();
      constexpr std::string_view kSuffix = ".dist-info";
      if (file.size() <= kSuffix.size() || file.compare(file.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
        continue;
      // NAME-VERSION.dist-info: the name is everything before the first '-' (names use '_').
      const std::string stem = file.substr(0, file.size() - kSuffix.size());
      const std::string dist = normalised(stem.substr(0, stem.find('-')));
      if (std::none_of(names.begin(), names.end(), [&](const std::string& n) { return normalised(n) == dist; }))
        continue;
      const std::string record = it->path().string() + "/RECORD";
      if (fs::is_regular_file(record, ec)) return record;
    }
  }
  return "";
}

bool editable_install(const std::string& record) {
  const std::string url = read_small_file((fs::path(record).parent_path() / "direct_url.json").string(), 1u << 16);
  if (url.empty()) return false;
  const Json j = Json::parse(url, nullptr, false);
  if (!j.is_object()) return true;  // unreadable: not trusted
  const Json dir_info = j.value("dir_info", Json::object());
  return dir_info.is_object() && dir_info.value("editable", false) == true;
}

std::string user_cache_dir(const std::string& sub, const std::string& override_dir) {
  if (!override_dir.empty()) return override_dir;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg == '/') return std::string(xdg) + "/specprobe/" + sub;
  const char* home = std::getenv("HOME");
  if (home && *home == '/') return std::string(home) + "/.cache/specprobe/" + sub;
  return "";
}

std::optional<Json> read_cached_answer(const std::string& file, const std::string& schema, const std::string& key) {
  const std::string text = read_small_file(file, 16u << 20);
  if (text.empty()) return std::nullopt;
  Json entry = Json::parse(text, nullptr, false);
  if (!entry.is_object() || entry.value("schema", Json()) != schema || entry.value("key", Json()) != key ||
      !entry.contains("raw"))
    return std::nullopt;
  return entry["raw"];
}

bool write_cached_answer(const std::string& file, const std::string& schema, const std::string& key, const Json& raw) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char written[32];
  std::strftime(written, sizeof written, "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::error_code ec;
  fs::create_directories(fs::path(file).parent_path(), ec);
  const Json entry = {{"schema", schema}, {"key", key}, {"raw", raw}, {"written", written}};
  return static_cast<bool>(write_file_atomic(file, entry.dump()));
}

}  // namespace specprobe::probes
