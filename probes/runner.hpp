// Runs probes in child processes so that a faulting or hanging kernel becomes a result about
// that shape and the rest of the report completes. The child is a re-exec of this binary
// (/proc/self/exe __probe-child --specs JSON) that runs each probe in a fresh CUDA context and
// prints one line per probe:  "@@specprobe begin <i>"  then  "@@specprobe result <json>",
// with "@@specprobe phase host|device <name>" lines between them as the probe starts each step
// (probe_common.hpp probe_phase). The parent enforces a per-probe timeout (SIGKILL to the
// child's process group, then reap), turns a death by signal or a timeout into a "crash" result
// (an "error" when the probe's last phase was host work: the kernel is not what stopped; the
// record's "phase" names it), and restarts a child for the probes left. A child stops after a
// probe reports "crash" (its context is unusable).
// GPU-independent: tests drive it with scripted fake children.
#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"

namespace specprobe::probes {

struct RunnerOptions {
  std::vector<std::string> child_command;  // argv prefix; "--specs <json>" is appended
  double timeout_s = 30;                   // per probe, from its "begin" line
};

// {"/proc/self/exe", "__probe-child"}
std::vector<std::string> self_child_command();

// One result per spec, in order. Never throws for child failures.
std::vector<Json> run_probes_isolated(const std::vector<Json>& specs, const RunnerOptions& opts);

// "SIGSEGV" etc.
std::string signal_name(int sig);

// The child side: runs each spec in-process, printing the protocol lines to stdout.
// Returns the number of probes run.
int run_probe_child(const std::vector<Json>& specs);

// Runs one spec in this process (dispatch over the probe table).
Json run_probe_in_process(const Json& spec);

struct ProbeKind {
  const char* name;
  const char* what;
  Json (*run)(const Json& spec);
};
// The explicit probe table (no static registration).
const std::vector<ProbeKind>& probe_kinds();

}  // namespace specprobe::probes
