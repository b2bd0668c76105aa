// Helpers for tests that kill a specprobe run and check that nothing of it is left: start the
// binary with default signal dispositions, and find the processes that carry a marker string in
// their command line or environment (children inherit the environment; an `env -i` child gets
// it back from a fake interpreter that exports it). Header-only: the CPU and the GPU test
// binaries both use it.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace specprobe::test {

// "PID: cmdline" for each live process (zombies have neither) other than this one whose
// /proc/PID/cmdline or /proc/PID/environ contains MARKER.
inline std::vector<std::string> processes_marked(const std::string& marker) {
  std::vector<std::string> found;
  std::error_code ec;
  const std::string self = std::to_string(getpid());
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid == self) continue;
    auto slurp = [&](const char* what) {
      std::ifstream f(e.path() / what, std::ios::binary);
      std::stringstream ss;
      ss << f.rdbuf();
      return ss.str();
    };
    std::string cmdline = slurp("cmdline");
    if (cmdline.find(marker) == std::string::npos && slurp("environ").find(marker) == std::string::npos) continue;
    for (char& c : cmdline)
      if (c == '\0') c = ' ';
    found.push_back(pid + ": " + cmdline);
  }
  return found;
}

// Starts BINARY with ARGS (argv[1...]) and ENV_FIRST ahead of this process's environment (getenv
// finds the first), stdout and stderr to /dev/null, SIGINT/SIGTERM/SIGHUP at their defaults (a
// test runner started in the background may have SIGINT ignored, which a child inherits).
inline pid_t start_process(const std::string& binary, const std::vector<std::string>& args,
                           const std::vector<std::string>& env_first) {
  std::vector<std::string> argv = {binary};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env = env_first;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  std::vector<char*> a, v;
  for (auto& s : argv) a.push_back(s.data());
  a.push_back(nullptr);
  for (auto& s : env) v.push_back(s.data());
  v.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    const int null = open("/dev/null", O_RDWR);
    dup2(null, 1);
    dup2(null, 2);
    execve(a[0], a.data(), v.data());
    _exit(127);
  }
  return pid;
}

// Polls PRED every 20 ms for up to SECONDS; whether it held.
inline bool eventually(const std::function<bool()>& pred, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    if (pred()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Sends SIG to PID and reaps it; the wait status.
inline int kill_and_reap(pid_t pid, int sig) {
  kill(pid, sig);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace specprobe::test
