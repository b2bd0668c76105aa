// A run killed from outside leaves nothing behind (CPU; the GPU variant is in tests/gpu): a fake
// interpreter that answers the interpreter question, then hangs in the adapter (alone, or with a
// sleeping grandchild in its group), run by `specprobe probe --stack`, killed with SIGTERM,
// SIGINT, SIGHUP or SIGKILL. Afterwards no process of the run may remain and no private dir.
// Also: the child's own watchdog, and a child's leftovers killed when it exits.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "../e2e/run_binary.hpp"
#include "../support/killed_run.hpp"
#include "common/run_cleanup.hpp"
#include "probes/runner.hpp"

using namespace specprobe;
namespace fs = std::filesystem;

namespace {

enum class Hang { adapter, adapter_with_grandchild, interpreter_question };

// The fake interpreter: exports MARKER (the adapter runs under `env -i`), answers `-I` (the
// interpreter question) with itself as sys.executable unless told to hang there, and as the
// adapter prints "begin", touches DIR/ready and sleeps.
std::string fake_python(const std::string& dir, const std::string& marker, Hang hang) {
  const std::string path = dir + "/python";
  std::ofstream f(path);
  f << "#!/bin/sh\nexport SPECPROBE_KILLTEST_MARKER=" << marker << "\nd=$(dirname \"$0\")\n";
  if (hang == Hang::interpreter_question) {
    f << "touch \"$d/ready\"\nexec sleep 300\n";
  } else {
    f << "case \"$1\" in -I)\n  echo '@@specprobe begin 0'\n"
      << "  echo '@@specprobe result {\"specprobe_python\": 1, \"executable\": \"'\"$0\"'\", \"prefix\": \"'\"$d\"'\", "
         "\"base_prefix\": \"'\"$d\"'\", \"version\": \"3.12.0\", \"site_packages\": [\"'\"$d\"'\"]}'\n  exit "
         "0;;\nesac\n"
      << "echo '@@specprobe begin 0'\n"
      << (hang == Hang::adapter_with_grandchild ? "sleep 300 &\n" : "") << "touch \"$d/ready\"\nexec sleep 301\n";
  }
  f.close();
  chmod(path.c_str(), 0755);
  return path;
}

std::vector<std::string> private_dirs(const std::string& tmp) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(tmp, ec)) out.push_back(e.path().filename().string());
  return out;
}

void kill_stack_run(int sig, Hang hang) {
  static int n = 0;
  const std::string marker = fmt::format("specprobe-killtest-{}-{}", getpid(), n++);
  const std::string root = test::temp_dir();
  const std::string fake_dir = root + "/" + marker;  // the marker is in specprobe's command line too
  const std::string tmp = root + "/tmp";             // TMPDIR: where the private dirs go
  fs::create_directories(fake_dir);
  fs::create_directories(tmp);
  const std::string py = fake_python(fake_dir, marker, hang);
  const pid_t pid = test::start_process(
      SPECPROBE_BINARY, {"probe", "--stack", "--stack-lib", "deep_gemm", "--python", py, "--stack-timeout", "60"},
      {"TMPDIR=" + tmp});
  REQUIRE(pid > 0);
  const bool ready = test::eventually([&] { return fs::exists(fake_dir + "/ready"); }, 20);
  if (ready) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  if (hang != Hang::interpreter_question && ready) CHECK(private_dirs(tmp).size() == 1);
  const int status = test::kill_and_reap(pid, sig);
  REQUIRE(ready);
  // The exit status is the signal's, whether the process caught it (re-raised) or not.
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == sig);
  std::vector<std::string> left;
  // The watchdog cleans up after the killed process; on a loaded machine that takes seconds.
  test::eventually([&] { return (left = test::processes_marked(marker)).empty() && private_dirs(tmp).empty(); }, 10);
  INFO("signal " << sig << ", processes left: " << fmt::format("{}", fmt::join(left, "; ")));
  CHECK(left.empty());
  CHECK(private_dirs(tmp).empty());
  std::error_code ec;
  fs::remove_all(root, ec);
}

}  // namespace

TEST_CASE("a killed stack probe run leaves no process and no private dir", "[probes][stack][killed]") {
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGKILL}) {
    SECTION(fmt::format("hanging adapter, signal {}", sig)) { kill_stack_run(sig, Hang::adapter); }
    SECTION(fmt::format("adapter with a sleeping grandchild, signal {}", sig)) {
      kill_stack_run(sig, Hang::adapter_with_grandchild);
    }
  }
  SECTION("killed while the interpreter is asked about itself, SIGTERM") {
    kill_stack_run(SIGTERM, Hang::interpreter_question);
  }
  SECTION("killed while the interpreter is asked about itself, SIGKILL") {
    kill_stack_run(SIGKILL, Hang::interpreter_question);
  }
}

TEST_CASE("what a child leaves in its process group is killed when it exits", "[probes][runner][killed]") {
  const std::string marker = fmt::format("specprobe-leftover-{}", getpid());
  RunnerOptions o;
  o.child_command = {"/bin/sh", "-c",
                     "SPECPROBE_KILLTEST_MARKER=" + marker +
                         " sleep 300 & echo '@@specprobe begin 0'; echo '@@specprobe result {\"status\":\"pass\"}'",
                     "sh"};
  o.timeout_s = 10;
  auto rs = probes::run_probes_isolated({{{"probe", "a"}}}, o);
  CHECK(rs[0]["status"] == "pass");
  CHECK(test::eventually([&] { return test::processes_marked(marker).empty(); }, 2));
}

TEST_CASE("the child gets its timeout in the environment, and its watchdog kills its group",
          "[probes][runner][killed]") {
  RunnerOptions o;
  o.child_command = {
      "/bin/sh", "-c",
      "echo '@@specprobe begin 0'; echo \"@@specprobe result {\\\"t\\\": \\\"$SPECPROBE_CHILD_TIMEOUT_S\\\"}\"", "sh"};
  o.timeout_s = 7.5;
  auto rs = probes::run_probes_isolated({{{"probe", "a"}}}, o);
  CHECK(rs[0]["t"] == "7.5");

  // A child whose parent is stuck (not reading, not killing): the watchdog ends it and what it
  // started, at its own deadline.
  const std::string marker = fmt::format("specprobe-watchdog-{}", getpid());
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    if (fork() == 0) {
      std::string env = "SPECPROBE_KILLTEST_MARKER=" + marker;
      char* argv[] = {const_cast<char*>("/bin/sleep"), const_cast<char*>("300"), nullptr};
      char* envp[] = {env.data(), nullptr};
      execve(argv[0], argv, envp);
      _exit(127);
    }
    arm_child_watchdog(0.3);
    for (;;) pause();
  }
  REQUIRE(pid > 0);
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  waitpid(pid, &status, 0);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  CHECK(took < 5);
  CHECK(test::eventually([&] { return test::processes_marked(marker).empty(); }, 2));
}
