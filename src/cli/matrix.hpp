// `specprobe matrix --model DIR --gpu H100,H200,B200,GB10 [--config FILE]`: the support matrix
// (k x attention backend x kv-cache dtype) for each GPU, for dashboards and fleet placement.
// Runs run_check once per GPU (each a declared GPU from the table, or `auto` for this node's);
// prints a table, JSON, or a Node Feature Discovery feature file (--format nfd, one GPU).
#pragma once
#include <string>

#include "cli/check.hpp"
#include "common/error.hpp"

namespace CLI {
class App;
}

namespace specprobe {

struct MatrixOptions {
  CheckOptions check;                 // model, engine, libs, probes, rules_dir, quiet (gpu/file set per run)
  std::string config;                 // --config FILE: the serving config whose other options hold
  std::string gpus = "auto";          // --gpu H100,H200,...: comma-separated
  std::string format = "text";        // text | json | nfd
  std::string output;                 // --output FILE
  std::string junit_file;             // --junit FILE: one testsuite per GPU
  std::string model_name;             // --model-name: the model's name in NFD labels (default: DIR's basename)
  std::string nfd_expiry = "24h";     // --nfd-expiry: how long NFD keeps the labels ("0": no expiry)
  bool nfd_include_warnings = false;  // --nfd-include-warnings: "ok with warnings" cells count as working
};

CLI::App* add_matrix_command(CLI::App& app, MatrixOptions& o);

// 0 when the plan is supported on every GPU; 1 when it is not-supported on one (the matrix is
// still printed or written); 2 usage/input errors; 3 environment errors; 5 an output (stdout,
// --output, --junit) could not be written.
int run_matrix_command(const MatrixOptions& o);

// "24h", "90m", "3600s", "2d" -> seconds; "0" -> 0 (no expiry); an error message otherwise.
Expected<long> parse_duration(const std::string& text);
// An RFC 3339 UTC time ("2026-11-26T09:00:00Z") SECONDS after the Unix epoch.
std::string rfc3339_utc(long long seconds_since_epoch);

}  // namespace specprobe
