// Suppressions from `.specprobe.yaml` and --ignore (see suppressions.hpp).
#include "pipeline/suppressions.hpp"

#include <cctype>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "common/excerpt.hpp"
#include "common/paths.hpp"
#include "common/ascii.hpp"
#include "rules/ids.hpp"

namespace fs = std::filesystem;

namespace specprobe {
namespace {

SourceLocation at(const std::string& file, const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return SourceLocation{file, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0};
}

std::string scalar(const YAML::Node& n) { return n && n.IsScalar() ? n.Scalar() : std::string(); }

}  // namespace

std::string suppression_file_for(const std::string& config_path) {
  if (config_path.empty() || config_path == "<command line>") return kSuppressionFile;
  const fs::path dir = fs::path(config_path).parent_path();
  return dir.empty() ? std::string(kSuppressionFile) : (dir / kSuppressionFile).string();
}

Expected<std::vector<IgnoreEntry>> read_suppression_file(const std::string& path) {
  std::vector<IgnoreEntry> out;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return out;
  // The file sits next to a config under review: a link out of that directory (to a secret file,
  // /dev/zero) or anything but a small regular file is refused, not read (SECURITY.md).
  const fs::path dir = fs::path(path).parent_path();
  if (!inside_tree(path, dir))
    return input_error("the suppression file is a link out of its directory; not read", SourceLocation{path});
  if (!fs::is_regular_file(path, ec))
    return input_error("the suppression file is not a regular file", SourceLocation{path});
  constexpr uintmax_t kMaxBytes = 1u << 20;
  if (const uintmax_t size = fs::file_size(path, ec); ec || size > kMaxBytes)
    return input_error("the suppression file is larger than 1 MiB; not read", SourceLocation{path});
  std::ifstream f(path, std::ios::binary);
  if (!f) return input_error("cannot read the suppression file", SourceLocation{path});
  std::stringstream ss;
  ss << f.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(ss.str());
  } catch (const YAML::Exception& e) {
    return input_error(fmt::format("invalid YAML: {}", e.msg),
                       SourceLocation{path, e.mark.line >= 0 ? e.mark.line + 1 : 0, e.mark.column >= 0 ? e.mark.column + 1 : 0});
  }
  if (!root || root.IsNull()) return out;
  if (!root.IsMap()) return input_error("expected a mapping with an `ignore:` list", at(path, root));
  for (const auto& kv : root) {
    const std::string key = scalar(kv.first);
    if (key != "ignore")
      return input_error(fmt::format("unknown key '{}' (the file holds `ignore:` only)", excerpt(key)), at(path, kv.first));
  }
  const YAML::Node list = root["ignore"];
  if (!list || list.IsNull()) return out;
  if (!list.IsSequence()) return input_error("`ignore:` must be a list of {id, reason, until?}", at(path, list));
  for (const auto& item : list) {
    if (!item.IsMap()) return input_error("an ignore entry must be a mapping {id, reason, until?}", at(path, item));
    for (const auto& kv : item) {
      const std::string key = scalar(kv.first);
      if (key != "id" && key != "reason" && key != "until")
        return input_error(fmt::format("unknown key '{}' in an ignore entry (id, reason, until)", excerpt(key)), at(path, kv.first));
    }
    IgnoreEntry e;
    const YAML::Node id = item["id"];
    if (!id || scalar(id).empty()) return input_error("an ignore entry needs an `id` (SPnnnn)", at(path, item));
    e.id = ascii_upper(scalar(id));
    e.where = at(path, id);
    const YAML::Node reason = item["reason"];
    e.reason = scalar(reason);
    while (!e.reason.empty() && std::isspace(static_cast<unsigned char>(e.reason.back()))) e.reason.pop_back();
    if (e.reason.empty())
      return input_error(fmt::format("the ignore entry for {} needs a `reason` (why it is safe to ignore here)", e.id),
                         at(path, item));
    if (const YAML::Node until = item["until"]) {
      e.until = scalar(until);
      if (!is_iso_date(e.until))
        return input_error(fmt::format("`until` must be a date YYYY-MM-DD, not '{}'", excerpt(e.until)), at(path, until));
    }
    e.source = fmt::format("{}:{}", path, e.where.line);
    out.push_back(std::move(e));
  }
  return out;
}

Expected<std::vector<IgnoreEntry>> ignore_args(const std::vector<std::string>& ids) {
  std::vector<IgnoreEntry> out;
  for (const auto& raw : ids) {
    IgnoreEntry e;
    e.id = ascii_upper(raw);
    if (e.id.empty()) return usage_error("--ignore needs a rule id (SPnnnn)");
    e.reason = "--ignore on the command line";
    e.source = "--ignore";
    out.push_back(std::move(e));
  }
  return out;
}

void apply_suppressions(Report& report, const std::vector<IgnoreEntry>& entries, const std::string& today) {
  for (const auto& e : entries) {
    const bool expired = !e.until.empty() && e.until < today;
    for (auto& r : report.results) {
      if (!id_matches(e.id, ascii_upper(r.id)) || r.status != ResultStatus::fail || r.suppressed) continue;
      if (expired) {
        report.notes.push_back({"warning",
                                fmt::format("the suppression of {} expired on {} ({}); the finding counts again — "
                                            "fix it or renew the entry with a new `until`",
                                            e.id, e.until, e.reason),
                                e.where});
        continue;
      }
      r.suppressed = Suppression{e.reason, e.source};
    }
  }
}

std::string today_iso() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

}  // namespace specprobe
