// Report printers. Each renders the one Report model; none reaches back into earlier stages.
#pragma once
#include <string>

#include "report/report.hpp"

namespace specprobe {

struct TextStyle {
  bool color = false;
  bool verbose = false;  // facts and every rule's evaluation
  bool quiet = false;    // failures and the summary line only
};

// Human-readable report: `file:line:col: severity: message [SPnnnn]` lines, the verdict, the
// support matrix and notes.
std::string render_text(const Report& report, const TextStyle& style);

// The canonical JSON report (docs/schema/report-1.json).
Json report_to_json(const Report& report);
inline constexpr const char* kReportSchemaVersion = "1.0.0";

// Whether colour is wanted: --color always/never, else FORCE_COLOR/CLICOLOR_FORCE, NO_COLOR,
// then isatty(stdout) && TERM != dumb.
bool want_color(const std::string& flag, int fd);

}  // namespace specprobe
