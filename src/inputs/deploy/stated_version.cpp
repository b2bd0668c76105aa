// The engine version where a deploy file states it: the container image tag, a pip line, pins in
// requirements / lock files next to it (and start-up logs, in log/startup_log.cpp). Only the file's
// own words count: `latest`, nightly tags and vendor container releases name no engine version.
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include "common/ascii.hpp"
#include "common/excerpt.hpp"
#include "common/paths.hpp"
#include "inputs/forms.hpp"
#include "inputs/versions/installed_libs.hpp"

namespace fs = std::filesystem;

namespace specprobe::serving {
namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

// The longest PEP 440-looking version at the start of S ("0.4.9.post6", "0.11.0rc2.dev98+g96e"):
// N.N[.N...] then rcN / aN / bN / .postN / postN / .devN / +local. Empty when S does not start
// with N.N, or when the version runs into more word characters (a model name "4b").
std::string version_prefix(std::string_view s) {
  size_t i = 0;
  auto number = [&] {
    const size_t b = i;
    while (i < s.size() && digit(s[i])) ++i;
    return i > b;
  };
  if (!number() || i >= s.size() || s[i] != '.') return {};
  ++i;
  if (!number()) return {};
  while (i + 1 < s.size() && s[i] == '.' && digit(s[i + 1])) {
    ++i;
    number();
  }
  for (bool more = true; more;) {
    more = false;
    for (std::string_view suffix : {"rc", "a", "b", ".post", "post", ".dev", "dev"}) {
      if (s.substr(i, suffix.size()) == suffix && i + suffix.size() < s.size() && digit(s[i + suffix.size()])) {
        i += suffix.size();
        number();
        more = true;
        break;
      }
    }
  }
  if (i < s.size() && s[i] == '+') {
    const size_t b = i++;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == b + 1) i = b;
  }
  if (i < s.size() && std::isalnum(static_cast<unsigned char>(s[i]))) return {};
  return std::string(s.substr(0, i));
}

std::string engine_of_repository(const std::string& repo) {
  const std::string last = repo.substr(repo.rfind('/') == std::string::npos ? 0 : repo.rfind('/') + 1);
  if (last.find("sglang") != std::string::npos || last.rfind("sgl-", 0) == 0) return "sglang";
  if (last.find("vllm") != std::string::npos) return "vllm";
  return {};
}

// Pins NAME==VERSION in TEXT (requirement lines or quoted TOML strings) for the tracked names.
void requirement_pins(const std::string& text, const std::string& file,
                      std::map<std::string, std::pair<std::string, std::string>>& out) {
  size_t i = 0;
  while ((i = text.find("==", i)) != std::string::npos) {
    size_t b = i;
    while (b > 0 && (std::isalnum(static_cast<unsigned char>(text[b - 1])) ||
                     std::string_view("-_.[],").find(text[b - 1]) != std::string_view::npos))
      --b;
    std::string name = text.substr(b, i - b);
    if (const size_t br = name.find('['); br != std::string::npos) name.resize(br);
    const std::string version = version_prefix(std::string_view(text).substr(i + 2));
    i += 2;
    if (name.empty() || version.empty()) continue;
    std::string key = ascii_lower(name) == "vllm" ? "vllm" : ascii_lower(name) == "sglang" ? "sglang" : lib_key(name);
    if (key.empty() || out.count(key)) continue;
    out[key] = {version, fmt::format("{}: {}=={}", file, name, version)};
  }
}

// [[package]] name = "x" / version = "y" blocks (uv.lock, poetry.lock).
void lock_pins(const std::string& text, const std::string& file,
               std::map<std::string, std::pair<std::string, std::string>>& out) {
  std::string name;
  size_t start = 0;
  while (start < text.size()) {
    const std::string line{next_line(text, start)};
    if (line.rfind("[[package]]", 0) == 0) name.clear();
    auto quoted = [&](const char* key) -> std::string {
      if (line.rfind(key, 0) != 0) return {};
      const size_t q = line.find('"');
      const size_t r = q == std::string::npos ? q : line.find('"', q + 1);
      return r == std::string::npos ? std::string() : line.substr(q + 1, r - q - 1);
    };
    if (auto n = quoted("name = "); !n.empty()) name = n;
    if (auto v = quoted("version = "); !v.empty() && !name.empty()) {
      const std::string key = ascii_lower(name) == "vllm"     ? "vllm"
                              : ascii_lower(name) == "sglang" ? "sglang"
                                                              : lib_key(name);
      if (!key.empty() && !out.count(key) && !version_prefix(v).empty())
        out[key] = {version_prefix(v), fmt::format("{}: {} {}", file, name, version_prefix(v))};
      name.clear();
    }
  }
}

}  // namespace

EngineVersion image_engine_version(std::string_view image_ref) {
  EngineVersion out;
  std::string image(image_ref);
  if (const size_t at = image.find('@'); at != std::string::npos) image.resize(at);
  const size_t slash = image.rfind('/');
  const size_t colon = image.rfind(':');
  const bool tagged = colon != std::string::npos && (slash == std::string::npos || colon > slash);
  const std::string repo = ascii_lower(tagged ? image.substr(0, colon) : image);
  const std::string tag = tagged ? image.substr(colon + 1) : "latest";
  out.engine = engine_of_repository(repo);
  const std::string shown = show_unresolved(image);
  if (out.engine.empty()) {
    out.why = fmt::format("image {} is not a vLLM or SGLang image", shown);
    return out;
  }
  if (has_unresolved(image)) {
    out.why = fmt::format("image {} has no value here", shown);
    return out;
  }
  if (repo.rfind("nvcr.io/", 0) == 0) {
    out.why = fmt::format("image {} is an NVIDIA NGC container: its tag is a container release, not a {} version",
                          shown, out.engine);
    return out;
  }
  if (repo.find("redhat") != std::string::npos || repo.find("rhaiis") != std::string::npos) {
    out.why = fmt::format("image {} is a Red Hat AI Inference Server container: its tag is not a {} version", shown,
                          out.engine);
    return out;
  }
  std::string version = version_prefix(tag[0] == 'v' ? std::string_view(tag).substr(1) : std::string_view(tag));
  for (const char* marker : {"vllm_", "vllm-", "sglang_", "sglang-"}) {  // rocm/vllm:..._vllm_0.6.4
    if (!version.empty()) break;
    const size_t m = ascii_lower(tag).find(marker);
    if (m == std::string::npos) continue;
    std::string_view rest = std::string_view(tag).substr(m + std::string_view(marker).size());
    if (!rest.empty() && rest[0] == 'v') rest.remove_prefix(1);
    version = version_prefix(rest);
  }
  if (version.empty()) {
    const std::string l = ascii_lower(tag);
    const char* kind = l == "latest" || l.rfind("latest-", 0) == 0 ? "names no version"
                       : l.find("nightly") != std::string::npos || l.find("dev") != std::string::npos
                           ? "is a nightly / development build, not a release"
                           : "names no release version";
    out.why = fmt::format("image tag '{}' ({}) {}", excerpt(tag), shown, kind);
    return out;
  }
  out.version = version;
  out.why = fmt::format("image tag {}", shown);
  return out;
}

std::optional<EngineVersion> pip_engine_version(const std::vector<ShellWord>& words) {
  size_t i = 0;
  for (; i < words.size(); ++i) {
    const std::string& t = words[i].text;
    const std::string b = t.substr(t.rfind('/') == std::string::npos ? 0 : t.rfind('/') + 1);
    if ((b == "pip" || b == "pip3") && i + 1 < words.size() && words[i + 1].text == "install") break;
  }
  if (i >= words.size()) return std::nullopt;
  for (size_t j = i + 2; j < words.size(); ++j) {
    const std::string& t = words[j].text;
    const size_t eq = t.find("==");
    if (eq == std::string::npos) continue;
    std::string name = ascii_lower(t.substr(0, eq));
    if (const size_t br = name.find('['); br != std::string::npos) name.resize(br);
    if (name != "vllm" && name != "sglang") continue;
    const std::string v = version_prefix(std::string_view(t).substr(eq + 2));
    if (v.empty()) continue;
    std::string line;
    for (size_t k = 0; k < words.size(); ++k) line += (k ? " " : "") + words[k].text;
    return EngineVersion{name, v, fmt::format("pip line `{}`", line.size() > 80 ? line.substr(0, 77) + "..." : line)};
  }
  return std::nullopt;
}

namespace {

// The requirement and lock files in DIR, sorted. A many-file run lists each directory once
// (issue 49: a thousand deploy files in one directory listed it a thousand times, a tenth of the
// run): the listing is kept while the directory's modification time (which an added, removed or
// renamed entry changes) stays the same. The files themselves are read every time.
std::vector<fs::path> pin_files(const std::string& dir) {
  static std::mutex mu;
  static std::map<std::string, std::pair<fs::file_time_type, std::vector<fs::path>>> listed;
  std::error_code ec;
  const fs::file_time_type mtime = fs::last_write_time(dir, ec);
  if (!ec) {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = listed.find(dir); it != listed.end() && it->second.first == mtime) return it->second.second;
  }
  std::vector<fs::path> files;
  size_t seen = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (++seen > 10000) break;
    const std::string n = e.path().filename().string();
    if ((n.rfind("requirements", 0) == 0 && n.size() > 4 && n.substr(n.size() - 4) == ".txt") ||
        n == "pyproject.toml" || n == "uv.lock" || n == "poetry.lock")
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::error_code again;
  if (fs::last_write_time(dir, again) == mtime && !again) {
    std::lock_guard<std::mutex> lock(mu);
    if (listed.size() > 4096) listed.clear();
    listed[dir] = {mtime, files};
  }
  return files;
}

}  // namespace

std::map<std::string, std::pair<std::string, std::string>> pinned_versions(const std::string& dir) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return out;
  for (const auto& p : pin_files(dir)) {
    if (fs::file_size(p, ec) > kMaxInputBytes) continue;
    if (!inside_tree(p, dir)) continue;  // a link out of the deploy file's directory (SECURITY.md)
    std::ifstream in(p, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string name = p.filename().string();
    if (name.size() > 5 && name.substr(name.size() - 5) == ".lock")
      lock_pins(text, name, out);
    else
      requirement_pins(text, name, out);
  }
  return out;
}

void write_engine_version(PlanWriter& w, const DeployInfo& info, const std::string& engine) {
  const std::string name = engine == "sglang" ? "SGLang" : "vLLM";
  if (!info.engine_version.empty() && info.engine_version_engine == engine) {
    w.set("deploy.engine_version", info.engine_version, info.engine_version_where);
    w.set("deploy.engine_version_source", info.engine_version_source, info.engine_version_where);
    w.note("info",
           fmt::format("{} {} from the {}; used as the installed {} version unless --python, --site-packages or "
                       "--lib gives one",
                       name, info.engine_version, info.engine_version_source, name),
           info.engine_version_where);
  } else if (!info.engine_version_source.empty() &&
             (info.engine_version_engine.empty() || info.engine_version_engine == engine)) {
    w.note("info", fmt::format("no {} version stated in the file: {}", name, info.engine_version_source),
           info.engine_version_where);
  }
}

}  // namespace specprobe::serving
