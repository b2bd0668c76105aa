// Runs the built specprobe binary as a child process for end-to-end tests.
#pragma once
#include <string>
#include <vector>

namespace specprobe::test {

// The source tree and the bundled examples the end-to-end tests run on.
inline const std::string kSourceDir = SPECPROBE_SOURCE_DIR;
inline const std::string kExampleSeeds = kSourceDir + "/docs/examples/seeds";
inline const std::string kExampleCheckpoints = kSourceDir + "/docs/examples/checkpoints";

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs SPECPROBE_BINARY with ARGS (a shell-quoted argument string) from DIR (empty: cwd).
RunResult run_specprobe(const std::string& args, const std::string& dir = {});

// The same with ENV applied to the child's environment: "NAME=VALUE" sets, "-NAME" unsets.
RunResult run_specprobe_env(const std::vector<std::string>& env, const std::string& args, const std::string& dir = {});

// A fresh temporary directory (removed by the OS; tests write their own files there).
std::string temp_dir();

std::string shell_quote(const std::string& s);

// TEXT with every run of spaces and line breaks made one space: the text report wraps long lines
// (at 100 columns in a log), so a phrase is looked for in the words, not the layout.
std::string one_line(const std::string& text);

// The bytes of the file at PATH ("" when it cannot be read).
std::string file_text(const std::string& path);

// Writes BYTES to PATH (replacing it), creating the directories above it.
void write_bytes(const std::string& path, const std::string& bytes);

// Writes CONTENT to DIR/NAME and returns that path.
std::string write_file(const std::string& dir, const std::string& name, const std::string& content);

// This process's environment with OVERRIDES ("KEY=VALUE", replacing KEY) applied, for execve.
// Built before fork: a child of a threaded test process may call only async-signal-safe
// functions (no malloc, no setenv) until it execs, because another thread may have held an
// allocator lock at the fork. glibc's malloc resets its locks in the child; the ASan runtime of
// GCC 12 does not (LLVM added fork handlers to ASan in PR 75290, Dec 2023; google/sanitizers#774
// is the same deadlock in Firefox). The ASan CI stage once timed out with empty output on the
// endless-FIFO case, whose writer thread starts just before the fork.
std::vector<std::string> child_environment(const std::vector<std::string>& overrides);

// Pointers into STRINGS, null-terminated, for execv/execve.
std::vector<char*> c_strings(std::vector<std::string>& strings);

}  // namespace specprobe::test
