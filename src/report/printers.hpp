// Report printers. Each renders the one Report model (pipeline/report.hpp, with the plan's summary
// typed in pipeline/plan_summary.hpp); none reaches back into earlier stages or reads a fact by
// its dotted name.
#pragma once
#include <string>
#include <vector>

#include "pipeline/report.hpp"

namespace specprobe {

struct TextStyle {
  bool color = false;
  bool verbose = false;         // facts and every rule's evaluation
  bool quiet = false;           // failures and the summary line only
  int width = 0;                // wrap lines at this many columns (0: no wrapping)
  bool explain_memory = false;  // the memory model's breakdown per GPU rank
};

// Human-readable report: `file:line:col: severity: message [SPnnnn]` lines, the verdict, the
// support matrix and notes.
// Lines longer than style.width are broken at spaces, continuation lines indented.
std::string render_text(const Report& report, const TextStyle& style);
std::string render_text_lines(const Report& report, const TextStyle& style);  // unwrapped
// TEXT with every line longer than WIDTH columns (UTF-8 code points, colour sequences not counted)
// broken at spaces; continuation lines are indented four more. WIDTH < 20: unchanged.
std::string wrap_text(std::string_view text, int width);

// The canonical JSON report (docs/schema/report-1.json), written in two parts: the HEAD (every
// member but the results: summary, matrix, notes, facts, ...) as a document a caller may amend,
// then the whole report, the results written straight from the report at DEPTH (start-up, issue
// 49: a report is mostly its results). ALL_RESULTS false: only the results that are not pass or
// skip (failures, undecided, suppressed failures) are listed; "results_listed" says which, and
// the summary counts every result.
Json report_head_json(const Report& report, bool all_results = true);
void write_report_json(const Json& head, const Report& report, bool all_results, std::string& out, int depth = 0);
inline constexpr int kReportIndent = 2;
// The support matrix as the JSON report gives it.
Json matrix_json(const SupportMatrix& matrix);
// {"name": "specprobe", "version", "git_sha"}: the tool block of every JSON document.
Json report_tool_json();
inline constexpr const char* kReportSchemaVersion = "1.2.0";

// The width text is wrapped at: $COLUMNS when set (0: no wrapping), else the terminal's on FD,
// else kDefaultTextWidth (a log, a file, a pipe).
inline constexpr int kDefaultTextWidth = 100;
int text_width(int fd);

// Whether colour is wanted: --color always/never, else FORCE_COLOR/CLICOLOR_FORCE, NO_COLOR,
// then isatty(stdout) && TERM != dumb.
bool want_color(const std::string& flag, int fd);

// Report paths as CI systems read them: relative to the repository root. The report holds paths
// as they were given (relative to the working directory, or absolute) and "<command line>" for a
// plan given after `check --`.
struct PathBase {
  std::string root;         // the source root (cli/source_root.hpp); empty: paths as given
  std::string working_dir;  // where the report's relative paths start; empty: the root
};
inline constexpr std::string_view kCommandLineInput = "<command line>";
// PATH relative to BASE.root when it lies under it ("deploy/serve.yaml"), lexically normalised;
// absolute when it lies outside; unchanged for the command line and without a root.
std::string root_relative(const std::string& path, const PathBase& base);

// SARIF 2.1.0 as GitHub code scanning reads it: one run for all REPORTS of an invocation (one per
// file and server; GitHub takes at most 20 runs an upload and no two of one category);
// driver.rules describes the rules of CATALOG and the advisories that have a result in this run
// (help text and markdown from the embedded docs/rules/SPnnnn.md, helpUri the page on the web);
// one result per failed rule, located at the option that set the offending fact (suppressed ones
// carry result.suppressions), its URI relative to the source root (%SRCROOT%); a plan given on the
// command line has no file: its results carry a logical location instead. An unknown verdict is
// a result too (rule "verdict-unknown", level error, one per missing fact, at the config's first
// line): code scanning is not green while the job fails. Skipped and errored checks go to
// invocations[0].toolExecutionNotifications; run.properties.reports holds each file's verdict and
// matrix. partialFingerprints hash the rule, the fact, the config path and the GPU (never the line).
struct SarifOptions {
  PathBase paths;
  std::string category;                               // --sarif-category; empty: specprobe/<gpu>
  const std::vector<Advisory>* advisories = nullptr;  // described after the rules (helpUri: the report)
};
Json reports_to_sarif(const std::vector<Report>& reports, const std::vector<Rule>& catalog,
                      const SarifOptions& options = {});
Json report_to_sarif(const Report& report, const std::vector<Rule>& catalog, const SarifOptions& options = {});
// The automationDetails.id of a run: "<category>/" with CATEGORY, else "specprobe/<gpu>/" (or
// "specprobe/" when the reports are for several GPUs): one category per job, not per file, so the
// alerts of a renamed file close.
std::string sarif_automation_id(const std::vector<Report>& reports, const std::string& category = {});

// GitLab Code Quality (the CodeClimate subset GitLab reads): a JSON array of issues, one per
// unsuppressed finding and one per missing fact of an unknown verdict, with description,
// check_name, fingerprint, severity (critical: an error; major: at risk or an unknown verdict;
// minor: a warning; info) and location.path (relative to the source root) and lines.begin. A plan
// given on the command line is in no file and has no issue here.
Json reports_to_codequality(const std::vector<Report>& reports, const PathBase& paths = {});

// Whether R counts against --fail-on FAIL_ON (error, risk, warning, info, none): an unsuppressed
// failed rule at or above it; a conditional (at-risk) finding counts from "risk" down, not for
// "error". What makes the exit code 1, and a JUnit <failure>.
bool fails_gate(const RuleResult& r, const std::string& fail_on);

// The findings as a user counts them: errors (deterministic, error severity), at risk
// (conditional, error severity), warnings, notes (info; older_only of them are about releases older
// than the newest, the engine version being unknown), passed, not applicable (skip), undecided
// (could not determine), suppressed. Suppressed findings are counted only there.
struct FindingCounts {
  int errors = 0, at_risk = 0, warnings = 0, notes = 0, older_only = 0;
  int passed = 0, not_applicable = 0, undecided = 0, suppressed = 0;
};
FindingCounts count_findings(const Report& r);
// "2 errors, 1 at risk, 3 notes; 170 passed, 157 not applicable" (zero counts left out, but passed).
std::string findings_line(const FindingCounts& c);

// JUnit XML (the Jenkins/GitLab dialect): one <testsuite> per report (config x GPU), one
// <testcase> per rule; a finding at or above the report's --fail-on -> <failure> (what makes the
// exit code 1), one below it -> a passing testcase that says so in <system-out>; skip ->
// <skipped>, error -> <error>, suppressed failure -> <skipped message="suppressed: ...">;
// remediation and evidence in <system-out>.
std::string reports_to_junit(const std::vector<Report>& reports);

// GitHub Actions: `::error file=..,line=..::msg` workflow commands for the unsuppressed
// findings, sorted by severity and capped at 10 per level (GitHub drops the rest silently;
// one notice says how many were left out), and a Markdown job summary for $GITHUB_STEP_SUMMARY.
struct GithubOutput {
  std::string commands;
  std::string summary_markdown;
};
GithubOutput render_github(const Report& report, const PathBase& paths = {});
inline constexpr int kGithubAnnotationCap = 10;
// Escaping of workflow commands (actions/toolkit command.ts): data escapes % CR LF; property
// values also escape : and ,.
std::string github_escape_data(std::string_view s);
std::string github_escape_property(std::string_view s);

// Node Feature Discovery feature file (local source, features.d/): `specprobe.io/<model>.<backend>.max-k=N`
// per attention backend for the plan's kv-cache dtype, for the one GPU of REPORT, after an
// optional `# +expiry-time=` directive. A cell counts as working when every rule passes (with
// include_warnings, also when only warnings fire). Every label name is checked with
// nfd_label_problem; a model name that has to be changed to fit is noted in the file.
struct NfdOptions {
  std::string model;              // the model's name; a path: its last component
  std::string expiry;             // RFC 3339 time for `# +expiry-time=`; empty: no directive
  bool include_warnings = false;  // count "ok with warnings" cells as working
};
struct NfdOutput {
  std::string text;
  std::vector<std::string> notes;  // what was changed to make valid label names (also in the file)
};
// Input error when the model name has nothing a label can be made of.
Expected<NfdOutput> render_nfd(const Report& report, const NfdOptions& options);
// A Kubernetes label name segment: [a-z0-9._-], alphanumeric at both ends, at most MAX chars.
std::string nfd_label_segment(std::string_view s, size_t max = 63);
// Why NAME is not a valid Kubernetes label key ("prefix/name": the prefix a DNS subdomain of at
// most 253 characters, the name at most 63 of [A-Za-z0-9._-], alphanumeric at both ends), or "".
std::string nfd_label_problem(std::string_view name);

// The support matrix: a cell as one token (ok, ok*, flat, x, ?); the rows of a matrix as a table
// (DEFAULT_BACKEND names the row of an engine without backend variants); the `matrix` command's
// table over several GPUs (WHAT names the model/config) and its JSON document.
std::string matrix_cell_token(const MatrixCell& c);
std::string render_matrix_rows(const SupportMatrix& m, const std::string& default_backend);
// The legend of the cell tokens (value, then how each is known).
const char* matrix_legend();
// The evidence lines of one row (BACKEND, KV) of M: "  k=2: probe: ..." (nothing for a cell
// known by the rules alone).
std::string render_cell_evidence(const SupportMatrix& m, const std::string& backend, const std::string& kv);
std::string render_matrix_table(const std::vector<std::string>& gpus, const std::vector<Report>& reports,
                                const std::string& what);
Json matrix_report_json(const std::vector<std::string>& gpus, const std::vector<Report>& reports, const Json& model,
                        const Json& config);

// "1, 2, 4": a list as the reports write it in a sentence; "none" when empty.
std::string list_text(const std::vector<int>& items);
std::string list_text(const std::vector<std::string>& items);

// "71 rules" or "71 rules and 220 advisories": what a report evaluated.
std::string evaluated_count(const Report& report);

// "h100", "h200", "gb10": a short, stable name of the report's GPU (for categories and labels).
std::string gpu_slug(const Report& report);

}  // namespace specprobe
