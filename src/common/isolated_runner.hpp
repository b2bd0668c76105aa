// Runs JSON specs in an isolated child process that speaks specprobe's line protocol, so that a
// faulting or hanging child (a probe kernel, a stack-probe adapter, an interpreter being asked
// about itself) becomes a result about that spec and the rest of the run completes.
//
// Protocol: the child gets "--specs <json list>" appended to its command line (a prestarted one
// "--specs-on-stdin", and the list as one line on stdin: PrestartedChild below) and prints, per
// spec, "@@specprobe begin <i>" then "@@specprobe result <json>" on stdout, with
// "@@specprobe phase host|device <name>" lines between them as it starts each step. The parent
// enforces a per-spec timeout (from the spec's "begin" line; SIGKILL to the child's process
// group, then reap), turns a death by signal or a timeout into a "crash" record (an "error" when
// the last phase was host work: the kernel is not what stopped; the record's "phase" names it),
// and restarts a child for the specs left. Child output is never trusted: malformed lines are
// ignored, unreadable results become "error" records.
//
// Nothing outlives the run (common/run_cleanup.hpp): each child leads its own process group, gets
// PR_SET_PDEATHSIG(SIGKILL) (checked against a parent that died before it was set) and
// SPECPROBE_CHILD_TIMEOUT_S (the per-spec timeout, for the child's own watchdog) in its
// environment; when a child exits, whatever it left in its group is killed before it is reaped;
// SIGINT/SIGTERM/SIGHUP during a run kill the child's group, and once it is reaped the run's
// private dirs are removed and the signal is re-raised with its default action; a guardian
// process does the same when this process is killed outright.
// GPU-independent: tests drive it with scripted fake children.
#pragma once
#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/json.hpp"

namespace specprobe {

// A record for SPEC with STATUS and REASON (runner-made records: crash, error).
using RunnerRecordFn = Json (*)(const Json& spec, const std::string& status, const std::string& reason);

// {"probe": spec.probe, "name": spec.probe, "spec", "status", "reason"}.
Json basic_runner_record(const Json& spec, const std::string& status, const std::string& reason);

struct RunnerOptions {
  std::vector<std::string> child_command;  // argv prefix; "--specs <json>" is appended
  double timeout_s = 30;                   // per spec, from its "begin" line
  RunnerRecordFn record = basic_runner_record;
  // Called with each phase marker's name as the child reports it (progress lines); may be empty.
  std::function<void(const std::string& phase)> on_phase;
};

// A child started before its specs are known, so that its start-up (exec, libraries, a CUDA
// context) overlaps what the parent does meanwhile: its command gets "--specs-on-stdin" appended
// instead of "--specs <json>", and it reads one line, the JSON list of specs, from its stdin.
// run_isolated adopts it for its first batch when the options match (command, timeout); one
// dropped unadopted (its last owner gone) is killed and reaped.
class PrestartedChild {
 public:
  // Null when the child cannot be started (the first batch then starts one as usual).
  static std::shared_ptr<PrestartedChild> start(const RunnerOptions& opts);
  ~PrestartedChild();
  PrestartedChild(const PrestartedChild&) = delete;
  PrestartedChild& operator=(const PrestartedChild&) = delete;

 private:
  PrestartedChild() = default;
  friend std::vector<Json> run_isolated(const std::vector<Json>&, const RunnerOptions&,
                                        const std::shared_ptr<PrestartedChild>&);
  std::vector<std::string> command_;
  double timeout_s_ = 0;
  pid_t pid_ = -1;
  int out_ = -1, err_ = -1, in_ = -1;
};

// One result per spec, in order. Never throws for child failures. WARM, when given and started
// with the same options, runs the first batch.
std::vector<Json> run_isolated(const std::vector<Json>& specs, const RunnerOptions& opts,
                               const std::shared_ptr<PrestartedChild>& warm = nullptr);

// "SIGSEGV" etc.
std::string signal_name(int sig);

}  // namespace specprobe
