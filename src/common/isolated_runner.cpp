// The isolated runner (see isolated_runner.hpp).
#include "common/isolated_runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "common/run_cleanup.hpp"

extern char** environ;

namespace specprobe {

Json basic_runner_record(const Json& spec, const std::string& status, const std::string& reason) {
  Json r;
  const std::string kind =
      spec.is_object() && spec.value("probe", Json()).is_string() ? spec["probe"].get<std::string>() : "";
  r["probe"] = kind;
  r["name"] = kind;
  r["spec"] = spec;
  r["status"] = status;
  r["reason"] = reason;
  return r;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGPIPE:
      return "SIGPIPE";
    default:
      return "signal " + std::to_string(sig);
  }
}

namespace {

using Clock = std::chrono::steady_clock;

struct Child {
  pid_t pid = -1;
  int out = -1;
  int err = -1;
};

// The child's environment: this process's, with the timeout the parent enforces (the child side
// arms a watchdog from it: run_cleanup.hpp).
std::vector<std::string> child_env(double timeout_s) {
  const std::string key = std::string(kChildTimeoutEnv) + "=";
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e)
    if (std::string_view(*e).rfind(key, 0) != 0) env.emplace_back(*e);
  env.push_back(key + fmt::format("{:g}", timeout_s));
  return env;
}

// Starts ARGV with ENV in its own process group, stdout and stderr piped to C; with STDIN_WRITE,
// its stdin is a pipe whose write end is returned there.
bool spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env, Child& c,
           int* stdin_write = nullptr) {
  int out[2], err[2], in[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) != 0) return false;
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return false;
  }
  if (stdin_write && pipe2(in, O_CLOEXEC) != 0) {
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    return false;
  }
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t parent = getpid();
  BlockInterrupts block;  // the child never runs our handler; a signal now is taken after tracking
  const pid_t pid = fork();
  if (pid == 0) {
    block.reset_in_child();
    // Dies with this process, however it ends (SIGKILL included); if it is already gone, go too.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    setpgid(0, 0);  // own process group: a timeout kills the child and anything it started
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (in[0] >= 0) dup2(in[0], 0);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  if (pid < 0) {
    const int e = errno;
    for (int fd : {out[0], out[1], err[0], err[1], in[0], in[1]})
      if (fd >= 0) close(fd);
    errno = e;
    return false;
  }
  setpgid(pid, pid);
  track_child_group(pid);
  close(out[1]);
  close(err[1]);
  if (stdin_write) {
    close(in[0]);
    *stdin_write = in[1];
  }
  c.pid = pid;
  c.out = out[0];
  c.err = err[0];
  return true;
}

// Writes all of TEXT to FD, the non-blocking write end of a pipe, at once; false when the reader
// is gone or the pipe cannot take it all now. A SIGPIPE is blocked and consumed, not delivered.
bool write_now(int fd, const std::string& text) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  if (done < text.size()) {
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_set, nullptr, &zero) > 0) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return done == text.size();
}

// Waits for the child to exit without reaping it (its pid still names its group), killing its
// group at DEADLINE or on an interrupt; then kills what is left of the group, reaps the child and
// waits for the group to go. Returns the wait status; TIMED_OUT is set when the deadline killed it.
int finish_child(const Child& c, Clock::time_point deadline, bool& timed_out) {
  bool killed = timed_out || interrupted_signal() != 0;
  if (killed) kill(-c.pid, SIGKILL);
  for (;;) {
    siginfo_t si{};
    const int r = waitid(P_PID, static_cast<id_t>(c.pid), &si, WEXITED | WNOHANG | WNOWAIT);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 || si.si_pid == c.pid) break;
    if (!killed && (interrupted_signal() != 0 || Clock::now() >= deadline)) {
      timed_out = interrupted_signal() == 0;
      kill(-c.pid, SIGKILL);
      killed = true;
    }
    pollfd wake{interrupt_wake_fd(), POLLIN, 0};
    poll(&wake, 1, 10);
  }
  kill(-c.pid, SIGKILL);  // whatever it started and left behind
  int wstatus = 0;
  while (waitpid(c.pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  kill_group_and_wait(c.pid);
  untrack_child_group(c.pid);
  return wstatus;
}

std::string tail(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(s.size() - n); }

// "host generate inputs" -> {true, "generate inputs"}; "device run kernel" -> {false, ...}; a
// marker without either word (the stack adapters' style) names the phase only and counts as
// device work, so a timeout there stays a crash as before phases existed. The name is child
// output: printable ASCII only, at most 100 characters.
std::pair<bool, std::string> parse_phase_marker(const std::string& text) {
  bool on_host = false;
  std::string name = text;
  if (text.rfind("host ", 0) == 0) {
    on_host = true;
    name = text.substr(5);
  } else if (text.rfind("device ", 0) == 0) {
    name = text.substr(7);
  }
  std::string clean;
  for (char ch : name)
    if (ch >= 0x20 && ch < 0x7F && clean.size() < 100) clean += ch;
  return {on_host, clean};
}

}  // namespace

std::shared_ptr<PrestartedChild> PrestartedChild::start(const RunnerOptions& opts) {
  std::vector<std::string> argv = opts.child_command;
  argv.push_back("--specs-on-stdin");
  Child c;
  int in = -1;
  if (!spawn(argv, child_env(opts.timeout_s), c, &in)) return nullptr;
  std::shared_ptr<PrestartedChild> p(new PrestartedChild());
  p->command_ = opts.child_command;
  p->timeout_s_ = opts.timeout_s;
  p->pid_ = c.pid;
  p->out_ = c.out;
  p->err_ = c.err;
  p->in_ = in;
  return p;
}

PrestartedChild::~PrestartedChild() {
  if (pid_ < 0) return;  // adopted
  close(in_);
  // Not needed: it may be deep in its start-up (cuInit), so it is killed, not waited for.
  bool timed_out = true;
  finish_child(Child{pid_, out_, err_}, Clock::now(), timed_out);
  close(out_);
  close(err_);
}

std::vector<Json> run_isolated(const std::vector<Json>& specs, const RunnerOptions& opts,
                               const std::shared_ptr<PrestartedChild>& prestarted) {
  PrestartedChild* warm = prestarted && prestarted->pid_ >= 0 && prestarted->command_ == opts.child_command &&
                                  prestarted->timeout_s_ == opts.timeout_s
                              ? prestarted.get()
                              : nullptr;
  InterruptScope interrupts;  // SIGINT/SIGTERM/SIGHUP: kill the child's group, clean up, re-raise
  const std::vector<std::string> env = child_env(opts.timeout_s);
  std::vector<Json> results(specs.size());
  size_t next = 0;
  while (next < specs.size()) {
    std::vector<Json> rest(specs.begin() + static_cast<long>(next), specs.end());
    std::vector<std::string> argv = opts.child_command;
    argv.push_back("--specs");
    argv.push_back(Json(rest).dump());
    Child c;
    // The first batch goes to the prestarted child when it takes its specs (it may be gone, or the
    // specs too large for its pipe: then its owner kills it and a child is started as usual).
    if (warm && write_now(warm->in_, Json(rest).dump() + "\n")) {
      close(warm->in_);
      c = Child{warm->pid_, warm->out_, warm->err_};
      warm->pid_ = -1;  // adopted: reaped here
    }
    warm = nullptr;
    if (c.pid < 0 && !spawn(argv, env, c)) {
      for (size_t i = next; i < specs.size(); ++i)
        results[i] =
            opts.record(specs[i], "error", std::string("cannot start the probe child: ") + std::strerror(errno));
      break;
    }
    long current = -1;  // index into specs of the probe in progress
    std::string phase;  // the probe in progress's last phase marker ("" = none)
    bool phase_on_host = false;
    std::string out_buf, err_buf;
    // Until the child says `begin`, it is starting (exec, dynamic loading, a sanitizer's shadow
    // memory, Python imports on a loaded machine): that is not the probe's time, so the wait is the
    // probe timeout or kStartGraceS, whichever is longer; each probe then gets its own timeout.
    constexpr double kStartGraceS = 10.0;
    Clock::time_point deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(std::max(opts.timeout_s, kStartGraceS)));
    bool timed_out = false;
    bool out_open = true, err_open = true;
    while ((out_open || err_open) && interrupted_signal() == 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        timed_out = true;
        break;
      }
      pollfd fds[3] = {
          {out_open ? c.out : -1, POLLIN, 0}, {err_open ? c.err : -1, POLLIN, 0}, {interrupt_wake_fd(), POLLIN, 0}};
      const int pr = poll(fds, 3, static_cast<int>(std::min<long long>(left, 1000)));
      if (pr < 0 && errno != EINTR) break;
      char buf[4096];
      if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
        const ssize_t n = read(c.out, buf, sizeof buf);
        if (n <= 0) {
          out_open = false;
        } else {
          out_buf.append(buf, static_cast<size_t>(n));
          size_t nl;
          while ((nl = out_buf.find('\n')) != std::string::npos) {
            const std::string line = out_buf.substr(0, nl);
            out_buf.erase(0, nl + 1);
            if (line.rfind("@@specprobe begin ", 0) == 0) {
              // Child output is not trusted (stack adapters print these lines too): an index that
              // is not one of this child's probes is ignored, never thrown on or indexed with.
              size_t i = 0;
              const char* first = line.data() + 18;
              const char* last = line.data() + line.size();
              const auto [end, ec] = std::from_chars(first, last, i);
              if (ec == std::errc() && end == last && i < rest.size()) {
                current = static_cast<long>(next + i);
                phase.clear();
                phase_on_host = false;
                deadline = Clock::now() +
                           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opts.timeout_s));
              }
            } else if (line.rfind("@@specprobe phase ", 0) == 0 && current >= 0) {
              std::tie(phase_on_host, phase) = parse_phase_marker(line.substr(18));
              if (opts.on_phase && !phase.empty()) opts.on_phase(phase);
            } else if (line.rfind("@@specprobe result ", 0) == 0 && current >= 0 &&
                       current < static_cast<long>(specs.size())) {
              Json r = Json::parse(line.substr(19), nullptr, false);
              results[static_cast<size_t>(current)] = r.is_discarded() || !r.is_object()
                                                          ? opts.record(specs[static_cast<size_t>(current)], "error",
                                                                        "unreadable result from the probe child")
                                                          : r;
              current = -1;
              phase.clear();
              phase_on_host = false;
            }
          }
        }
      }
      if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
        const ssize_t n = read(c.err, buf, sizeof buf);
        if (n <= 0)
          err_open = false;
        else
          err_buf = tail(err_buf + std::string(buf, static_cast<size_t>(n)), 2000);
      }
    }
    const int wstatus = finish_child(c, deadline, timed_out);
    close(c.out);
    close(c.err);
    finish_if_interrupted();  // a caught signal ends the run here, its child reaped
    if (current >= 0) {
      const Json& spec = specs[static_cast<size_t>(current)];
      // In a host phase the kernel is not what stopped: the probe could not determine (error).
      Json r = opts.record(spec, phase_on_host ? "error" : "crash", "");
      const std::string in_phase =
          phase.empty() ? "" : fmt::format(" in {}phase '{}'", phase_on_host ? "host " : "", phase);
      if (timed_out) {
        r["reason"] = phase_on_host
                          ? fmt::format(
                                "no result within {:g} s: still{} (host work, not the kernel) when "
                                "its process was killed; a shape this large needs a longer --timeout",
                                opts.timeout_s, in_phase)
                          : fmt::format("no result within {:g} s: the probe hung{} and its process was killed",
                                        opts.timeout_s, in_phase);
        r["timeout_s"] = opts.timeout_s;
      } else if (WIFSIGNALED(wstatus)) {
        r["signal"] = signal_name(WTERMSIG(wstatus));
        r["reason"] = "the probe process died with " + signal_name(WTERMSIG(wstatus)) + in_phase;
      } else {
        r["reason"] =
            fmt::format("the probe process exited with status {}{} before reporting", WEXITSTATUS(wstatus), in_phase);
      }
      if (!phase.empty()) r["phase"] = phase;
      if (!err_buf.empty()) r["stderr_tail"] = tail(err_buf, 500);
      results[static_cast<size_t>(current)] = r;
    }
    // Continue after the last probe with a result; a child that reported nothing at all
    // cannot run probes: report that for the first spec and move on.
    size_t progressed = next;
    while (progressed < specs.size() && !results[progressed].is_null()) ++progressed;
    if (progressed == next) {
      Json r = opts.record(
          specs[next], "error",
          timed_out
              ? "the probe child did not start a probe in time"
              : (WIFSIGNALED(wstatus) ? "the probe child died with " + signal_name(WTERMSIG(wstatus))
                                      : fmt::format("the probe child exited with status {} without running a probe",
                                                    WEXITSTATUS(wstatus))));
      if (!err_buf.empty()) r["stderr_tail"] = tail(err_buf, 500);
      results[next] = r;
      ++progressed;
    }
    next = progressed;
  }
  return results;
}

}  // namespace specprobe
