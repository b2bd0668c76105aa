// fork/exec runner with a timeout, an address-space cap and peak-RSS accounting (wait4).
#include "bounded_run.hpp"

#include <fcntl.h>
#include <signal.h>
#include <grp.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "../e2e/run_binary.hpp"

namespace specprobe::hostile {

bool sanitized_build() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

BoundedResult run_bounded(const std::vector<std::string>& args, const std::string& cwd, int timeout_s,
                          long as_limit_mib, bool as_nobody) {
  BoundedResult r;
  const std::string dir = test::temp_dir();
  const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  std::vector<std::string> argv_s{SPECPROBE_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const bool limit_as = !sanitized_build() && as_limit_mib > 0;

  const pid_t pid = ::fork();
  if (pid < 0) return r;
  if (pid == 0) {
    const int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int in = ::open("/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || in < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(o, 1);
    ::dup2(e, 2);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    struct rlimit core {0, 0};
    ::setrlimit(RLIMIT_CORE, &core);
    if (limit_as) {
      const rlim_t bytes = static_cast<rlim_t>(as_limit_mib) << 20;
      struct rlimit as {bytes, bytes};
      ::setrlimit(RLIMIT_AS, &as);
    }
    ::setenv("NO_COLOR", "1", 1);
    if (as_nobody && ::geteuid() == 0 &&
        (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0))
      ::_exit(125);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  struct rusage ru {};
  while (true) {
    const pid_t w = ::wait4(pid, &status, WNOHANG, &ru);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() > deadline) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      ::wait4(pid, &status, 0, &ru);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.max_rss_kib = ru.ru_maxrss;
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return r;
}

}  // namespace specprobe::hostile
