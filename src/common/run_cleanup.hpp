// What a run leaves behind, removed on every exit path: the process groups of the isolated
// children (common/isolated_runner.hpp) and the private temporary directories (the stack probes').
//
// Three layers, each covering what the one before cannot:
//  - InterruptScope: while one lives, SIGINT/SIGTERM/SIGHUP (those not ignored on entry) are
//    caught. The handler is async-signal-safe: it SIGKILLs every tracked child process group,
//    records the signal and wakes the runner through a self-pipe. The normal flow (the runner,
//    after it reaped its child) then calls finish_if_interrupted(): it removes the tracked
//    directories, restores the signal dispositions and re-raises the signal with the default
//    action, so the exit status says what ended the run.
//  - The child side: every isolated child gets PR_SET_PDEATHSIG(SIGKILL) between fork and exec
//    (isolated_runner.cpp), and our own probe children arm a watchdog (arm_child_watchdog) from
//    SPECPROBE_CHILD_TIMEOUT_S, so a hung child dies at its timeout even when the parent is gone.
//  - A guardian process, started by the first InterruptScope (or tracked child or directory): a
//    double-forked process in its own session that ignores job-control and termination signals
//    and holds one end of a socket whose other end only this process holds. When this process
//    dies in any way (SIGKILL included) the socket reads EOF and the guardian kills the groups and
//    removes the directories still tracked (a JIT compiler started by the Python adapter is in its
//    group), then exits. It uses raw system calls only (it is a fork of a possibly threaded
//    process), and exits with this process in the normal case too.
#pragma once
#include <signal.h>
#include <sys/types.h>

#include <string>

namespace specprobe {

// The scopes below stand for a state of the process (handlers, a signal mask, a directory on
// disk): none is copied.
struct ScopedState {
  ScopedState() = default;
  ScopedState(const ScopedState&) = delete;
  ScopedState& operator=(const ScopedState&) = delete;
};

// Installs the handlers when it is the outermost live scope; the outermost one restores them on
// destruction and then calls finish_if_interrupted(). Main thread only.
class InterruptScope : ScopedState {
 public:
  InterruptScope();
  ~InterruptScope();
};

// The signal the handler caught (0: none).
int interrupted_signal();

// The self-pipe's read end (readable once a signal was caught), or -1 outside any scope.
int interrupt_wake_fd();

// When a signal was caught: kills the tracked groups, removes the tracked directories, restores
// the dispositions and re-raises the signal with the default action (does not return). Otherwise
// returns at once.
void finish_if_interrupted();

// A child's process group (its leader's pid), tracked from after fork until it is reaped.
void track_child_group(pid_t pgid);
void untrack_child_group(pid_t pgid);

// SIGKILL to the group, then waits (at most MAX_WAIT_S) until no process of it is left.
void kill_group_and_wait(pid_t pgid, double max_wait_s = 1.0);

// The signals the handler takes, blocked across a fork (so that the child never runs the parent's
// handler) or across creating and tracking a directory. Restores the previous mask on destruction.
class BlockInterrupts : ScopedState {
 public:
  BlockInterrupts();
  ~BlockInterrupts();
  // In a forked child before exec: default dispositions for the handled signals (SIG_IGN ones stay
  // ignored), then the mask from before the block. Async-signal-safe.
  void reset_in_child() const;

 private:
  sigset_t saved_;
};

// A private directory from mkdtemp(TEMPLATE), tracked while it lives and removed (recursively)
// by its destructor, by finish_if_interrupted() or by the guardian, whichever comes first.
class PrivateDir : ScopedState {
 public:
  // Empty path() and errno set when mkdtemp fails.
  explicit PrivateDir(std::string tmpl);
  ~PrivateDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The child side: the timeout its parent enforces, from SPECPROBE_CHILD_TIMEOUT_S (0: none).
inline constexpr const char* kChildTimeoutEnv = "SPECPROBE_CHILD_TIMEOUT_S";
double child_timeout_from_env();

// Arms (or with SECONDS <= 0 disarms) a timer that SIGKILLs this process's group when it fires
// (only this process when it does not lead its group). Re-arming replaces the deadline.
void arm_child_watchdog(double seconds);

}  // namespace specprobe
