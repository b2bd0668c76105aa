// Suppressions: `ignore:` in the `.specprobe.yaml` files that apply to the config
// (pipeline/project_settings.hpp), `# specprobe: ignore ID -- reason` comments in the config, and
// `--ignore SPnnnn` on the command line. Every file entry carries a reason; an optional `until` date makes it expire.
// Suppressed findings stay in every report (RuleResult.suppressed) and stop counting for the verdict and the exit code;
// an expired entry brings its finding back with a warning note.
//
//   ignore:
//     - id: SP3010
//       reason: "tracked in INFRA-1234; we pin topk=1 at runtime"
//       until: 2026-12-31        # optional, YYYY-MM-DD, inclusive
//
// Pure functions over files and the report; no GPU.
#pragma once
#include <string>
#include <vector>

#include "common/error.hpp"
#include "pipeline/report.hpp"

namespace specprobe {

inline constexpr const char* kSuppressionFile = ".specprobe.yaml";

struct IgnoreEntry {
  std::string id;  // upper-cased
  std::string reason;
  std::string until;     // "YYYY-MM-DD" or empty
  std::string source;    // ".specprobe.yaml:3" or "--ignore"
  SourceLocation where;  // of the entry's id, for error messages
};

// The suppression file that belongs to CONFIG_PATH: `.specprobe.yaml` in the config's directory,
// or in the current directory when the plan came from a command line.
std::string suppression_file_for(const std::string& config_path);

// The `ignore:` entries of the settings file PATH when it exists (no file: no entries). Input errors (exit 2) name the
// file and line: malformed YAML, an entry without id or reason, a bad `until` date. Ids are checked against the catalog
// by the caller (unknown ones get a "did you mean").
Expected<std::vector<IgnoreEntry>> read_suppression_file(const std::string& path);

// `--ignore SP3010` entries (reason "--ignore on the command line"); ids are upper-cased.
Expected<std::vector<IgnoreEntry>> ignore_args(const std::vector<std::string>& ids);

// Marks every failed result matched by a live entry as suppressed. An entry whose `until` is
// before TODAY ("YYYY-MM-DD") does not suppress; its finding is reported with a warning note.
// LINE > 0: only the findings located on lines LINE..END_LINE of the config (an inline suppression;
// END_LINE < LINE: LINE alone).
void apply_suppressions(Report& report, const std::vector<IgnoreEntry>& entries, const std::string& today, int line = 0,
                        int end_line = 0);

// The local date as "YYYY-MM-DD".
std::string today_iso();

}  // namespace specprobe
