// `specprobe matrix --model DIR --gpu H100,H200,B200,GB10 [--config FILE]`: the support matrix
// (k x attention backend x kv-cache dtype) for each GPU, for dashboards and fleet placement.
// Runs run_check once per GPU (each a declared GPU from the table, or `auto` for this node's);
// prints a table, JSON, or a Node Feature Discovery feature file (--format nfd, one GPU).
#pragma once
#include <string>

#include "cli/check.hpp"

namespace CLI {
class App;
}

namespace specprobe {

struct MatrixOptions {
  CheckOptions check;        // model, engine, libs, probes, rules_dir, quiet (gpu/file set per run)
  std::string config;        // --config FILE: the serving config whose other options hold
  std::string gpus = "auto"; // --gpu H100,H200,...: comma-separated
  std::string format = "text";  // text | json | nfd
  std::string output;        // --output FILE
  std::string junit_file;    // --junit FILE: one testsuite per GPU
  std::string model_name;    // --model-name: the model's name in NFD labels (default: DIR's basename)
};

CLI::App* add_matrix_command(CLI::App& app, MatrixOptions& o);

// 0 when every matrix was computed and written; 2 usage/input errors; 3 environment errors; 4 an
// output (stdout, --output, --junit) could not be written.
int run_matrix_command(const MatrixOptions& o);

}  // namespace specprobe
