// `specprobe check`: flags -> CheckRequest -> run_check (pipeline/check.hpp) -> the report's
// outputs (report/emit.hpp) -> exit code. `exec` and `matrix` share the flag mapping below.
#pragma once
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "pipeline/check.hpp"
#include "report/emit.hpp"

namespace CLI {
class App;
class Option;
class Validator;
}  // namespace CLI

namespace specprobe {

struct CheckOptions {
  CheckRequest request;            // what to check (file/argv, model, gpu, libraries, evidence, gating)
  std::vector<std::string> files;  // FILE...: one report per server of each ("-": stdin)
  int jobs = 0;                    // -j/--jobs: files checked at once (0: one per core)
  std::string rules_dir;           // --rules-dir (development)
  std::string advisories_dir;      // --advisories-dir (development)
  std::string advisories_before;   // --advisories-before DATE: only advisories published before it
  // Output
  std::string format = "text";    // one of report_formats()
  std::string output;             // --output FILE (the --format output)
  std::string fail_on = "error";  // error | warning | info | none
  std::string color = "auto";     // auto | always | never
  std::string results;            // --results failing | all; empty: all for one file, failing for several
  bool quiet = false;
  bool verbose = false;
  bool explain_memory = false;  // --explain-memory: the memory model's breakdown per GPU rank
  bool progress = false;        // --progress: the progress line also when stderr is no terminal
  // Further reports written next to the --format output (see docs/ci.md).
  std::string sarif_file;        // --sarif FILE
  std::string junit_file;        // --junit FILE
  std::string codequality_file;  // --codequality FILE (GitLab Code Quality)
  std::string json_file;         // --json FILE
  bool github = false;           // --github: workflow annotations on stdout + $GITHUB_STEP_SUMMARY
  std::string source_root;       // --source-root DIR: report paths relative to it (cli/source_root.hpp)
  std::string sarif_category;    // --sarif-category: the code-scanning category
  bool exit_zero = false;        // --exit-zero: findings and an unknown verdict never fail the exit code
  bool unknown_ok = false;       // --unknown-ok: an unknown verdict exits 0 (still reported)
  bool no_suppressions = false;  // --no-suppressions: ignore .specprobe.yaml
  bool no_matrix = false;        // --no-matrix
  bool offline = false;          // --offline: the Hub only through specprobe's cache, no network
  // The options a project's .specprobe.yaml may set (pipeline/project_settings.hpp), to tell
  // whether the command line gave them: the command line wins. Set by add_check_options.
  const CLI::Option* gpu_option = nullptr;
  const CLI::Option* model_option = nullptr;
  const CLI::Option* fail_on_option = nullptr;
  const CLI::Option* unknown_ok_option = nullptr;
};

// The request for one FILE of a check: the flags, then the project settings of FILE's
// `.specprobe.yaml` files for what the command line left out (unless --no-suppressions). Their
// fail-on and unknown-ok go to FAIL_ON and UNKNOWN_OK; NOTES says which settings applied.
struct FileRequest {
  CheckRequest request;
  std::string fail_on;
  bool unknown_ok = false;
  std::vector<std::string> notes;
};
Expected<FileRequest> request_for_file(const CheckOptions& o, const std::string& file);

// Adds the `check` subcommand's options to APP.
void add_check_options(CLI::App& app, CheckOptions& o);

// check: run, print, decide the exit code.
int run_check_command(CheckOptions o);

// The request as the flags give it (fail_on, suppressions; file and argv as set by the caller).
CheckRequest check_request(const CheckOptions& o);

// The real services with the catalog the options name, and the progress line (cli/progress.hpp)
// unless --quiet. Prints the error and returns it when the catalog or the version tables do not
// load, or when --rules-dir holds no rule.
Expected<Services> cli_services(const CheckOptions& o);

// --lib NAME=VERSION: a tracked library name (did you mean ...? for a near miss). For the CLI11
// option's check; the version itself is checked where it is read.
CLI::Validator lib_name_validator();

// Renders the report in the --format (to STREAM or --output) and writes --sarif/--junit/--json
// files and --github annotations (stdout) and job summary ($GITHUB_STEP_SUMMARY). Returns 0, or
// 3 when a file cannot be written. Used by check and exec.
int emit_check_report(const CheckOptions& o, const Report& report, std::FILE* stream);

// An input error when a --rules-dir catalog holds no rule (a typo in the path must not read as
// "0 rules: supported").
Status require_rules(const Catalog& catalog);

// The exit code of a completed check: 1 when an unsuppressed finding is at or above FAIL_ON
// ("none": never), else kExitUnknown when the verdict is unknown (unless UNKNOWN_OK), else 0.
inline constexpr int kExitUnknown = 4;
int exit_code_for(const Report& report, const std::string& fail_on, bool unknown_ok = false);

// Several reports at once (emit_reports); same outputs and return as emit_check_report.
int emit_check_reports(const CheckOptions& o, const std::vector<Report>& reports, std::FILE* stream);

}  // namespace specprobe
