// fork/exec runner with a timeout, an address-space cap and peak-RSS accounting (wait4).
#include "bounded_run.hpp"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
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

// VmRSS of this process, KiB (0 when /proc cannot say).
long own_rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return 0;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Where a child that ran over its time is: whether it reached exec (its /proc exe is the binary
// under test, not this test program), its scheduler state and the kernel function it sleeps in.
std::string where_stalled(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink(proc + "/exe", ec);
  std::string s = "exe " + (ec ? std::string("?") : exe.string());
  std::error_code self_ec;
  if (!ec && exe == std::filesystem::read_symlink("/proc/self/exe", self_ec) && !self_ec)
    s += " (never reached exec: stuck in the forked copy of the test program)";
  const std::string stat = slurp(proc + "/stat");
  const size_t paren = stat.rfind(')');
  if (paren != std::string::npos && paren + 2 < stat.size()) s += ", state " + stat.substr(paren + 2, 1);
  const std::string wchan = slurp(proc + "/wchan");
  if (!wchan.empty()) s += ", wchan " + wchan;
  return s;
}

}  // namespace

BoundedResult run_bounded(const std::vector<std::string>& args, const std::string& cwd, int timeout_s,
                          long as_limit_mib, bool as_nobody) {
  BoundedResult r;
  const std::string dir = test::temp_dir();
  const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  std::vector<std::string> argv_s{SPECPROBE_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv = test::c_strings(argv_s);
  std::vector<std::string> env_s = test::child_environment({"NO_COLOR=1"});
  std::vector<char*> envp = test::c_strings(env_s);
  const bool limit_as = !sanitized_build() && as_limit_mib > 0;
  // Everything the child needs is made here: between fork and exec it calls only
  // async-signal-safe functions (see child_environment).
  const int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const auto close_all = [&] {
    for (int fd : {o, e, in})
      if (fd >= 0) ::close(fd);
  };
  if (o < 0 || e < 0 || in < 0) {
    close_all();
    r.err = "run_bounded: cannot open the child's stdio files";
    return r;
  }
  const rlim_t as_bytes = static_cast<rlim_t>(as_limit_mib) << 20;
  if (sanitized_build()) timeout_s *= 4;
  r.inherited_rss_kib = own_rss_kib();

  const pid_t pid = ::fork();
  if (pid < 0) {
    close_all();
    return r;
  }
  if (pid == 0) {
    ::dup2(in, 0);  // dup2 clears close-on-exec on the copies
    ::dup2(o, 1);
    ::dup2(e, 2);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    struct rlimit core {
      0, 0
    };
    ::setrlimit(RLIMIT_CORE, &core);
    if (limit_as) {
      struct rlimit as {
        as_bytes, as_bytes
      };
      ::setrlimit(RLIMIT_AS, &as);
    }
    if (as_nobody && ::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0))
      ::_exit(125);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  close_all();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  struct rusage ru {};
  while (true) {
    const pid_t w = ::wait4(pid, &status, WNOHANG, &ru);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() > deadline) {
      r.timed_out = true;
      r.stalled = where_stalled(pid);
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
