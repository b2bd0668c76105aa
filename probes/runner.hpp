// Probes run in child processes so that a faulting or hanging kernel becomes a result about that
// shape and the rest of the report completes. The child is a re-exec of this binary
// (/proc/self/exe __probe-child --specs JSON) that runs each probe in a fresh CUDA context and
// speaks the isolated runner's line protocol (common/isolated_runner.hpp), with phase markers
// from probe_common.hpp's probe_phase. A child stops after a probe reports "crash" (its context
// is unusable). This file holds the probe table, the child side and the parent's entry point.
#pragma once
#include <string>
#include <vector>

#include "common/isolated_runner.hpp"
#include "common/json.hpp"
#include "probes/kinds.hpp"

namespace specprobe::probes {

// The isolated runner (common/isolated_runner.hpp) with probe result records (make_result).
using specprobe::PrestartedChild;
using specprobe::RunnerOptions;

// {"/proc/self/exe", "__probe-child"}
std::vector<std::string> self_child_command();

// One result per spec, in order. Never throws for child failures. PRESTARTED: a probe child
// started early (PrestartedChild::start with the same options), for the first batch.
std::vector<Json> run_probes_isolated(const std::vector<Json>& specs, const RunnerOptions& opts,
                                      const std::shared_ptr<PrestartedChild>& prestarted = nullptr);

// A probe child runs under a watchdog (SPECPROBE_CHILD_TIMEOUT_S, set by the runner) that kills
// its process group that many seconds plus kChildWatchdogGraceS after each "begin"
// (common/run_cleanup.hpp), parent or no parent.
inline constexpr double kChildWatchdogGraceS = 2;

// The probe table is probes/kinds.hpp's probe_kinds(). A test binary passes its own table (the
// product's plus its test-only probes) to the functions below and acts as the probe child itself
// (tests/support/test_main.hpp).

// The child side: runs each spec in-process, printing the protocol lines to stdout.
// Returns the number of probes run.
int run_probe_child(const std::vector<Json>& specs, const std::vector<ProbeKind>& kinds = probe_kinds());
// `__probe-child --specs JSON`: the same for a JSON array of specs; 2 (with a message on stderr)
// when it is not one, else 0.
int run_probe_child_json(const std::string& specs_json, const std::vector<ProbeKind>& kinds = probe_kinds());

// `__probe-child --specs-on-stdin`, a prestarted child (common/isolated_runner.hpp): opens the GPU
// session the probes share (cuInit, context, module load: most of a child's fixed cost) while the
// parent works out the specs, then reads them, one line of JSON, from stdin and runs them as
// run_probe_child_json does; end of input without a line: nothing to run, 0. A session that cannot
// open is not reported here: the probes open it again and say why.
int run_probe_child_stdin(const std::vector<ProbeKind>& kinds = probe_kinds());

// Runs one spec in this process (dispatch over `kinds`).
Json run_probe_in_process(const Json& spec, const std::vector<ProbeKind>& kinds = probe_kinds());

}  // namespace specprobe::probes
