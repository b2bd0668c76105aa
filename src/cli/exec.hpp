// `specprobe exec [check options] -- vllm serve ...`: a pre-flight gate for deploy scripts. Checks
// the command line exactly as `check -- ...` would; when it passes, replaces this process with the
// command (execvp: same argv, environment, pid, so its exit code and signals reach the caller
// unchanged); when it does not, prints the report and refuses with check's exit code.
#pragma once
#include "cli/check.hpp"

namespace CLI {
class App;
}

namespace specprobe {

struct ExecOptions {
  CheckOptions check;    // check.request.argv holds the command after `--`
  bool dry_run = false;  // print the command instead of running it
};

// Adds the `exec` subcommand (check's options without FILE, plus --dry-run) to APP.
CLI::App* add_exec_command(CLI::App& app, ExecOptions& o);

// Returns only when it does not exec: the check failed (1), usage/input error (2), environment
// error (3), --dry-run (0), or the command could not be started (127 not found, 126 otherwise,
// as env(1) and shells report it). The report goes to stderr: stdout belongs to the server.
int run_exec_command(const ExecOptions& o);

}  // namespace specprobe
