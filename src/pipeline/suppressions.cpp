// Suppressions from `.specprobe.yaml` and --ignore (see suppressions.hpp).
#include "pipeline/suppressions.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>

#include "common/ascii.hpp"
#include "common/clock.hpp"
#include "pipeline/project_settings.hpp"
#include "rules/ids.hpp"

namespace fs = std::filesystem;

namespace specprobe {

std::string suppression_file_for(const std::string& config_path) {
  if (config_path.empty() || config_path == "<command line>") return kSuppressionFile;
  const fs::path dir = fs::path(config_path).parent_path();
  return dir.empty() ? std::string(kSuppressionFile) : (dir / kSuppressionFile).string();
}

Expected<std::vector<IgnoreEntry>> read_suppression_file(const std::string& path) {
  auto settings = read_settings_file(path);
  if (!settings) return settings.error();
  return std::move(settings->ignore);
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

void apply_suppressions(Report& report, const std::vector<IgnoreEntry>& entries, const std::string& today, int line,
                        int end_line) {
  end_line = std::max(end_line, line);
  for (const auto& e : entries) {
    const bool expired = !e.until.empty() && e.until < today;
    for (auto& r : report.results) {
      if (!id_matches(e.id, ascii_upper(r.id)) || r.status != ResultStatus::fail || r.suppressed) continue;
      // An inline suppression on a line: the findings located there, in the config itself.
      if (line > 0 && (r.location.line < line || r.location.line > end_line || r.location.file != report.input_path))
        continue;
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

std::string today_iso() { return local_date_iso(); }

}  // namespace specprobe
