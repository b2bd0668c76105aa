// Cleanup of child process groups and private directories on every exit path (see run_cleanup.hpp).
// Signal masks are set with sigprocmask, which on Linux (glibc) changes the calling thread's mask
// exactly as pthread_sigmask does; pthread_sigmask moved to libc with a new symbol version in
// glibc 2.32, and the binary must run on 2.31 (tests/package/check_glibc_symbols.sh).
#include "common/run_cleanup.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

namespace specprobe {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kNumSignals = 3;
constexpr int kMaxGroups = 64;

static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "the signal handler reads these");

// Read by the handler: lock-free atomics and a sig_atomic_t only.
volatile sig_atomic_t g_caught = 0;
std::atomic<pid_t> g_groups[kMaxGroups];
std::atomic<int> g_wake_write{-1};

// Normal flow only. Scopes may open on several threads (`check -j` runs files at once): the first
// to open installs the handlers and the last to close restores them, under G_SCOPE_MU.
std::mutex g_scope_mu;
int g_wake_read = -1;
int g_depth = 0;
struct sigaction g_old[kNumSignals];
bool g_installed[kNumSignals] = {};

std::mutex g_dirs_mu;
std::vector<std::string> g_dirs;

void on_signal(int sig) {
  const int saved = errno;
  if (g_caught == 0) g_caught = sig;
  for (auto& g : g_groups) {
    const pid_t p = g.load(std::memory_order_relaxed);
    if (p > 0) kill(-p, SIGKILL);
  }
  if (const int w = g_wake_write.load(std::memory_order_relaxed); w >= 0) {
    const char c = 1;
    [[maybe_unused]] const ssize_t n = write(w, &c, 1);
  }
  errno = saved;
}

void restore_handlers() {
  for (int i = 0; i < kNumSignals; ++i)
    if (g_installed[i]) {
      sigaction(kSignals[i], &g_old[i], nullptr);
      g_installed[i] = false;
    }
  const int w = g_wake_write.exchange(-1);
  if (w >= 0) close(w);
  if (g_wake_read >= 0) close(g_wake_read);
  g_wake_read = -1;
}

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// ---- The guardian: raw system calls only from fork on (the parent may have threads). ----

constexpr int kGuardGroups = 256;
constexpr int kGuardDirs = 32;
constexpr size_t kGuardPath = 4096;

struct GuardState {
  pid_t groups[kGuardGroups];
  char dirs[kGuardDirs][kGuardPath];
  char line[kGuardPath + 16];
  size_t line_len;
};
GuardState g_guard;  // used in the guardian process only

struct Dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

// rm -r NAME relative to DIRFD, without following links.
void rm_tree_at(int dirfd, const char* name, int depth) {
  if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT) return;
  if (depth > 48) return;
  const int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char buf[2048];
  for (int pass = 0; pass < 16; ++pass) {  // removing while reading may skip entries: read again
    bool saw_entry = false;
    lseek(fd, 0, SEEK_SET);
    for (;;) {
      const long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        const auto* d = reinterpret_cast<const Dirent64*>(buf + off);
        off += d->d_reclen;
        if (d->d_name[0] == '.' && (d->d_name[1] == '\0' || (d->d_name[1] == '.' && d->d_name[2] == '\0'))) continue;
        saw_entry = true;
        rm_tree_at(fd, d->d_name, depth + 1);
      }
    }
    if (!saw_entry) break;
  }
  close(fd);
  unlinkat(dirfd, name, AT_REMOVEDIR);
}

bool group_alive(pid_t g) { return kill(-g, 0) == 0 || errno == EPERM; }

// "+g PID", "-g PID", "+d PATH", "-d PATH".
void guard_command(const char* s, size_t n) {
  if (n < 3 || (s[0] != '+' && s[0] != '-') || s[2] != ' ') return;
  const bool add = s[0] == '+';
  const char* arg = s + 3;
  const size_t len = n - 3;
  if (s[1] == 'g') {
    pid_t pid = 0;
    for (size_t i = 0; i < len; ++i) {
      if (arg[i] < '0' || arg[i] > '9' || pid > 100000000) return;
      pid = pid * 10 + (arg[i] - '0');
    }
    if (pid <= 1) return;
    for (auto& g : g_guard.groups)
      if (add ? g == 0 : g == pid) {
        g = add ? pid : 0;
        return;
      }
  } else if (s[1] == 'd' && len > 1 && len < kGuardPath && arg[0] == '/') {
    for (auto& d : g_guard.dirs) {
      const bool match = add ? d[0] == '\0' : (strncmp(d, arg, len) == 0 && d[len] == '\0');
      if (!match) continue;
      if (add) {
        memcpy(d, arg, len);
        d[len] = '\0';
      } else {
        d[0] = '\0';
      }
      return;
    }
  }
}

[[noreturn]] void guardian_main(int fd) {
  setsid();  // no terminal: Ctrl-C and job control do not reach it
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU, SIGALRM, SIGUSR1, SIGUSR2})
    sigaction(s, &ign, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (fd < 3) fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int i = 0; i < 3; ++i) dup2(null, i);
  // Hold nothing of the parent's open: a pipe a caller reads to EOF must not wait for us.
  for (int i = 3; i < 4096; ++i)
    if (i != fd) close(i);
  prctl(PR_SET_NAME, "specprobe-guard", 0, 0, 0);
  char buf[1024];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the parent is gone (or closed its end)
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] == '\n') {
        guard_command(g_guard.line, g_guard.line_len);
        g_guard.line_len = 0;
      } else if (g_guard.line_len < sizeof g_guard.line) {
        g_guard.line[g_guard.line_len++] = buf[i];
      }
    }
  }
  for (pid_t g : g_guard.groups)
    if (g > 0) kill(-g, SIGKILL);
  for (int waited = 0; waited < 100; ++waited) {  // at most 1 s for the groups to go
    bool any = false;
    for (pid_t g : g_guard.groups) any |= g > 0 && group_alive(g);
    if (!any) break;
    sleep_ms(10);
  }
  for (auto& d : g_guard.dirs)
    if (d[0] == '/') rm_tree_at(AT_FDCWD, d, 0);
  _exit(0);
}

int g_guard_fd = -1;
pid_t g_guard_owner = 0;  // the process that started it (a fork without exec starts its own)

void ensure_guardian() {
  if (g_guard_owner == getpid()) return;
  if (g_guard_fd >= 0) close(g_guard_fd);  // a fork's inherited copy of its parent's guardian
  g_guard_fd = -1;
  g_guard_owner = getpid();
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return;
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &old);  // no handler of ours runs in the forks
  const pid_t mid = fork();
  if (mid == 0) {
    close(sv[0]);
    if (fork() == 0) guardian_main(sv[1]);  // double fork: not our child, never our zombie
    _exit(0);
  }
  sigprocmask(SIG_SETMASK, &old, nullptr);
  close(sv[1]);
  if (mid < 0) {
    close(sv[0]);
    return;
  }
  while (waitpid(mid, nullptr, 0) < 0 && errno == EINTR) {
  }
  g_guard_fd = sv[0];
}

void guard_send(const std::string& line) {
  ensure_guardian();
  if (g_guard_fd < 0) return;
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = send(g_guard_fd, p, left, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // the guardian is gone: run without it
      close(g_guard_fd);
      g_guard_fd = -1;
      return;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

bool guard_can_carry(const std::string& path) {
  return !path.empty() && path.front() == '/' && path.size() < kGuardPath && path.find('\n') == std::string::npos;
}

void track_dir(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(g_dirs_mu);
    g_dirs.push_back(path);
  }
  if (guard_can_carry(path)) guard_send("+d " + path + "\n");
}

void untrack_dir(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(g_dirs_mu);
    auto it = std::find(g_dirs.begin(), g_dirs.end(), path);
    if (it != g_dirs.end()) g_dirs.erase(it);
  }
  if (guard_can_carry(path)) guard_send("-d " + path + "\n");
}

}  // namespace

InterruptScope::InterruptScope() {
  std::lock_guard<std::mutex> lock(g_scope_mu);
  if (g_depth++ > 0) return;
  g_caught = 0;
  ensure_guardian();  // before any child: the guardian inherits none of its pipes
  int p[2];
  if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0) {
    g_wake_read = p[0];
    g_wake_write.store(p[1]);
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int s : kSignals) sigaddset(&sa.sa_mask, s);
  sa.sa_flags = SA_RESTART;
  for (int i = 0; i < kNumSignals; ++i) {
    sigaction(kSignals[i], nullptr, &g_old[i]);
    // An ignored signal stays ignored (nohup): it ends nothing, so there is nothing to clean.
    const bool ignored = !(g_old[i].sa_flags & SA_SIGINFO) && g_old[i].sa_handler == SIG_IGN;
    g_installed[i] = !ignored && sigaction(kSignals[i], &sa, nullptr) == 0;
  }
}

InterruptScope::~InterruptScope() {
  {
    std::lock_guard<std::mutex> lock(g_scope_mu);
    if (--g_depth > 0) return;
    restore_handlers();
  }
  finish_if_interrupted();
}

int interrupted_signal() { return g_caught; }

int interrupt_wake_fd() { return g_wake_read; }

void finish_if_interrupted() {
  const int sig = g_caught;
  if (sig == 0) return;
  for (auto& g : g_groups) {
    const pid_t p = g.exchange(0);
    if (p > 0) kill_group_and_wait(p);
  }
  std::vector<std::string> dirs;
  {
    std::lock_guard<std::mutex> lock(g_dirs_mu);
    dirs = g_dirs;
  }
  for (const auto& d : dirs) {
    std::error_code ec;
    std::filesystem::remove_all(d, ec);
    untrack_dir(d);
  }
  restore_handlers();
  g_depth = 0;
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, nullptr);
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, sig);
  sigprocmask(SIG_UNBLOCK, &s, nullptr);
  raise(sig);
  _exit(128 + sig);  // not reached: the default action of SIGINT/SIGTERM/SIGHUP terminates
}

void track_child_group(pid_t pgid) {
  for (auto& g : g_groups) {
    pid_t expected = 0;
    if (g.compare_exchange_strong(expected, pgid)) break;
  }
  guard_send("+g " + std::to_string(pgid) + "\n");
}

void untrack_child_group(pid_t pgid) {
  for (auto& g : g_groups) {
    pid_t expected = pgid;
    if (g.compare_exchange_strong(expected, 0)) break;
  }
  guard_send("-g " + std::to_string(pgid) + "\n");
}

void kill_group_and_wait(pid_t pgid, double max_wait_s) {
  if (pgid <= 1) return;
  kill(-pgid, SIGKILL);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(max_wait_s);
  while (group_alive(pgid) && std::chrono::steady_clock::now() < deadline) sleep_ms(5);
}

BlockInterrupts::BlockInterrupts() {
  sigset_t s;
  sigemptyset(&s);
  for (int sig : kSignals) sigaddset(&s, sig);
  sigprocmask(SIG_BLOCK, &s, &saved_);
}

BlockInterrupts::~BlockInterrupts() { sigprocmask(SIG_SETMASK, &saved_, nullptr); }

void BlockInterrupts::reset_in_child() const {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int i = 0; i < kNumSignals; ++i)
    if (g_installed[i]) sigaction(kSignals[i], &dfl, nullptr);
  sigprocmask(SIG_SETMASK, &saved_, nullptr);
}

PrivateDir::PrivateDir(std::string tmpl) {
  BlockInterrupts block;  // created and tracked, or neither, when a signal comes
  if (!mkdtemp(tmpl.data())) return;
  path_ = std::move(tmpl);
  track_dir(path_);
}

PrivateDir::~PrivateDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  untrack_dir(path_);
}

double child_timeout_from_env() {
  const char* v = std::getenv(kChildTimeoutEnv);
  if (!v || !*v) return 0;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  return end && *end == '\0' && std::isfinite(s) && s > 0 ? s : 0;
}

namespace {
void on_watchdog(int) {
  // The timeout passed with no word from the parent's kill: end this process and what it started.
  if (getpgrp() == getpid()) kill(0, SIGKILL);
  kill(getpid(), SIGKILL);
}
}  // namespace

void arm_child_watchdog(double seconds) {
  itimerval t{};
  if (seconds > 0) {
    struct sigaction sa {};
    sa.sa_handler = on_watchdog;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, nullptr);
    const double whole = std::floor(seconds);
    t.it_value.tv_sec = static_cast<time_t>(std::min(whole, 1e9));
    t.it_value.tv_usec = static_cast<suseconds_t>((seconds - whole) * 1e6);
    if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0) t.it_value.tv_usec = 1;
  }
  setitimer(ITIMER_REAL, &t, nullptr);
}

}  // namespace specprobe
