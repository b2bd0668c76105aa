// Report printers. Each renders the one Report model; none reaches back into earlier stages.
#pragma once
#include <string>
#include <vector>

#include "pipeline/report.hpp"
#include "rules/advisory.hpp"
#include "rules/rule.hpp"
#include "rules/sweep.hpp"

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
// {"name": "specprobe", "version", "git_sha"}: the tool block of every JSON document.
Json report_tool_json();
inline constexpr const char* kReportSchemaVersion = "1.2.0";

// Whether colour is wanted: --color always/never, else FORCE_COLOR/CLICOLOR_FORCE, NO_COLOR,
// then isatty(stdout) && TERM != dumb.
bool want_color(const std::string& flag, int fd);

// SARIF 2.1.0 as GitHub code scanning reads it: one run; driver.rules from CATALOG (help text
// and markdown from the embedded docs/rules/SPnnnn.md); one result per failed rule, located at
// the option that set the offending fact (suppressed ones carry result.suppressions); skipped
// and errored checks as invocations[0].toolExecutionNotifications. SOURCE_ROOT (the repository
// checkout, e.g. $GITHUB_WORKSPACE or the cwd) turns absolute input paths into relative URIs.
struct SarifOptions {
  std::string source_root;
  const std::vector<Advisory>* advisories = nullptr;  // described after the rules (helpUri: the report)
};
Json report_to_sarif(const Report& report, const std::vector<Rule>& catalog, const SarifOptions& options = {});

// JUnit XML (the Jenkins/GitLab dialect): one <testsuite> per report (config x GPU), one
// <testcase> per rule; fail -> <failure>, skip -> <skipped>, error -> <error>, suppressed
// failure -> <skipped message="suppressed: ...">; remediation and evidence in <system-out>.
std::string reports_to_junit(const std::vector<Report>& reports);

// GitHub Actions: `::error file=..,line=..::msg` workflow commands for the unsuppressed
// findings, sorted by severity and capped at 10 per level (GitHub drops the rest silently;
// one notice says how many were left out), and a Markdown job summary for $GITHUB_STEP_SUMMARY.
struct GithubOutput {
  std::string commands;
  std::string summary_markdown;
};
GithubOutput render_github(const Report& report, const std::string& source_root = {});
inline constexpr int kGithubAnnotationCap = 10;
// Escaping of workflow commands (actions/toolkit command.ts): data escapes % CR LF; property
// values also escape : and ,.
std::string github_escape_data(std::string_view s);
std::string github_escape_property(std::string_view s);

// Node Feature Discovery feature file (local source, features.d/): `specprobe.io/<model>.<backend>.max-k=N`
// per attention backend for the plan's kv-cache dtype, for the one GPU of REPORT. MODEL is
// turned into a label-safe name.
std::string render_nfd(const Report& report, const std::string& model);
// A Kubernetes label name segment: [A-Za-z0-9._-], alphanumeric at both ends, at most MAX chars.
std::string nfd_label_segment(std::string_view s, size_t max = 63);

// The support matrix: a cell as one token (ok, ok*, flat, x, ?); the rows of a matrix as a table
// (DEFAULT_BACKEND names the row of an engine without backend variants); the `matrix` command's
// table over several GPUs (WHAT names the model/config) and its JSON document.
std::string matrix_cell_token(const MatrixCell& c);
std::string render_matrix_rows(const SupportMatrix& m, const std::string& default_backend);
std::string render_matrix_table(const std::vector<std::string>& gpus, const std::vector<Report>& reports,
                                const std::string& what);
Json matrix_report_json(const std::vector<std::string>& gpus, const std::vector<Report>& reports, const Json& model,
                        const Json& config);

// "71 rules" or "71 rules and 220 advisories": what a report evaluated.
std::string evaluated_count(const Report& report);

// "h100", "h200", "gb10": a short, stable name of the report's GPU (for categories and labels).
std::string gpu_slug(const Report& report);

}  // namespace specprobe
