// `specprobe check`: inputs -> facts -> rules (+ probes) -> verdict and support matrix -> report.
// run_check is also used by `matrix` and `exec`.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "report/report.hpp"

namespace CLI {
class App;
}

namespace specprobe {

struct CheckOptions {
  std::string file;                   // serving config / script; empty when argv is used
  std::vector<std::string> argv;      // command line after `--`
  std::string model;                  // --model DIR
  std::string gpu = "auto";           // --gpu auto|NAME|sm_XY
  std::string python;                 // --python PATH
  std::vector<std::string> site_packages;  // --site-packages DIR
  std::vector<std::string> libs;      // --lib NAME=VERSION
  std::string engine;                 // --engine vllm|sglang (override detection)
  std::string rules_dir;              // --rules-dir (development)
  std::string probes = "auto";        // --probes auto|off|all
  bool no_matrix = false;             // --no-matrix
  std::string stack_probes = "auto";  // --stack-probes auto|off: ask --python's libraries (probes/stack_probes.hpp)
  double stack_timeout_s = 600;       // --stack-timeout, per library
  // Output
  std::string format = "text";        // text | json
  std::string output;                 // --output FILE (the --format output)
  std::string fail_on = "error";      // error | warning | info | none
  std::string color = "auto";         // auto | always | never
  bool quiet = false;
  bool verbose = false;
  std::vector<std::string> full_argv; // for the report
  // Further reports written next to the --format output (see docs/ci.md).
  std::string sarif_file;             // --sarif FILE
  std::string junit_file;             // --junit FILE
  std::string json_file;              // --json FILE
  bool github = false;                // --github: workflow annotations on stdout + $GITHUB_STEP_SUMMARY
  // Gating
  bool exit_zero = false;             // --exit-zero: findings never make the exit code 1
  std::vector<std::string> ignore;    // --ignore SPnnnn (repeatable)
  bool no_suppressions = false;       // --no-suppressions: ignore .specprobe.yaml
};

// Adds the `check` subcommand's options to APP.
void add_check_options(CLI::App& app, CheckOptions& o);

// Runs the whole pipeline. Input and usage problems are errors (exit 2); a missing GPU or driver
// is not (the report says what it fell back to).
Expected<Report> run_check(const CheckOptions& o);

// check: run, print, decide the exit code.
int run_check_command(const CheckOptions& o);

// 1 when an unsuppressed failed rule is at or above FAIL_ON ("none": never), else 0.
int exit_code_for(const Report& report, const std::string& fail_on);

// Renders REPORT in the --format to TEXT_OUT (or --output) and writes --sarif/--junit/--json
// files and --github annotations (stdout) and job summary ($GITHUB_STEP_SUMMARY). Returns 0, or
// 3 when a file cannot be written. Used by check and exec.
int emit_report(const CheckOptions& o, const Report& report, std::FILE* text_out);

}  // namespace specprobe
