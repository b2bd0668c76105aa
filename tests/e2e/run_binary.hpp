// Runs the built specprobe binary as a child process for end-to-end tests.
#pragma once
#include <string>

namespace specprobe::test {

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs SPECPROBE_BINARY with ARGS (a shell-quoted argument string) from DIR (empty: cwd).
RunResult run_specprobe(const std::string& args, const std::string& dir = {});

// A fresh temporary directory (removed by the OS; tests write their own files there).
std::string temp_dir();

std::string shell_quote(const std::string& s);

}  // namespace specprobe::test
