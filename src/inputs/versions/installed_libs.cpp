// Reading installed distributions' versions from metadata files (no Python is run).
#include "inputs/versions/installed_libs.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/version.hpp"

namespace fs = std::filesystem;

namespace specprobe {
namespace {

struct Tracked {
  const char* dist;  // normalized distribution name (PEP 503: lower, runs of -_. -> -)
  const char* key;
};
const Tracked kTracked[] = {
    {"vllm", "vllm"},
    {"sglang", "sglang"},
    {"torch", "torch"},
    {"triton", "triton"},
    {"flashinfer-python", "flashinfer"},
    {"flashinfer", "flashinfer"},
    {"deep-gemm", "deep_gemm"},
    {"deepgemm", "deep_gemm"},
    {"flash-attn", "flash_attn"},
    {"vllm-flash-attn", "flash_attn"},
};

std::string normalize_dist(std::string_view name) {
  std::string out;
  bool sep = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      sep = true;
      continue;
    }
    if (sep && !out.empty()) out += '-';
    sep = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// Reads "Name:" and "Version:" from the header block of METADATA / PKG-INFO (bounded read).
bool read_metadata(const fs::path& file, std::string& name, std::string& version) {
  std::ifstream in(file);
  if (!in) return false;
  std::string line;
  int lines = 0;
  while (std::getline(in, line) && lines++ < 200) {
    if (line.empty() || line == "\r") break;  // end of headers
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("Name:", 0) == 0)
      name = line.substr(5);
    else if (line.rfind("Version:", 0) == 0)
      version = line.substr(8);
  }
  auto trim = [](std::string& s) {
    s.erase(0, s.find_first_not_of(" \t"));
    s.erase(s.find_last_not_of(" \t") + 1);
  };
  trim(name);
  trim(version);
  return !name.empty() && !version.empty();
}

}  // namespace

std::string lib_key(std::string_view distribution) {
  const std::string n = normalize_dist(distribution);
  for (const auto& t : kTracked)
    if (n == t.dist) return t.key;
  // Accept the fact keys themselves (--lib deep_gemm=...).
  for (const auto& t : kTracked)
    if (n == normalize_dist(t.key)) return t.key;
  return {};
}

Expected<std::vector<LibVersion>> read_site_packages(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return input_error(fmt::format("{}: not a directory", dir));
  std::vector<LibVersion> out;
  size_t seen = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (++seen > 100000) break;  // bound the walk
    const std::string name = e.path().filename().string();
    fs::path meta;
    if (name.size() > 10 && name.ends_with(".dist-info"))
      meta = e.path() / "METADATA";
    else if (name.size() > 9 && name.ends_with(".egg-info"))
      meta = fs::is_directory(e.path(), ec) ? e.path() / "PKG-INFO" : e.path();
    else
      continue;
    // Cheap filter on the directory name before opening the file.
    const std::string stem = name.substr(0, name.find('-') == std::string::npos ? name.size() : name.find('-'));
    if (lib_key(stem).empty() && lib_key(name.substr(0, name.rfind('.'))).empty()) {
      bool maybe = false;
      for (const auto& t : kTracked)
        if (normalize_dist(name).rfind(t.dist, 0) == 0) maybe = true;
      if (!maybe) continue;
    }
    std::string dist, version;
    if (!read_metadata(meta, dist, version)) continue;
    const std::string key = lib_key(dist);
    if (key.empty()) continue;
    out.push_back({key, version, "site-packages:" + dir});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return out;
}

Expected<LibVersion> parse_lib_arg(const std::string& arg) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
    return usage_error(fmt::format("--lib expects NAME=VERSION, got '{}'", arg));
  const std::string name = arg.substr(0, eq);
  const std::string key = lib_key(name);
  if (key.empty())
    return usage_error(fmt::format(
        "--lib: unknown library '{}' (tracked: vllm, sglang, torch, triton, flashinfer, deep_gemm, flash_attn)", name));
  const std::string version = arg.substr(eq + 1);
  if (!parse_version(version))
    return usage_error(
        fmt::format("--lib {}: '{}' is not a version (PEP 440, e.g. 0.25.1 or 2.5.0+a6b593d)", name, version));
  return LibVersion{key, version, "--lib"};
}

void add_lib_facts(Json& facts, const std::vector<LibVersion>& libs) {
  for (const auto& l : libs) {
    Json& j = facts["lib"][l.key];
    j["version"] = l.version;
    j["source"] = l.source;
    if (auto v = parse_version(l.version)) {
      j["public_version"] = v->public_version().str();
      if (!v->local.empty()) j["local"] = v->local;
      if (auto h = v->git_hash()) j["git_hash"] = *h;
    }
  }
}

}  // namespace specprobe
