// `specprobe probe`: runs the probe kernels standalone with explicit shapes, each in an isolated
// child process, and prints a table (or JSON). `specprobe __probe-child` (hidden) is the child.
// Exit codes (returned, decided by the caller): 0 every probe pass/skip, 1 any fail or crash,
// 2 bad arguments, 3 any error (could not determine).
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/error.hpp"
#include "common/json.hpp"
#include "probes/kinds.hpp"
#include "probes/runner.hpp"

namespace specprobe {

// The shapes (probes::ProbeShapeOptions, which each probe's option_specs reads) and the run.
struct ProbeOptions : probes::ProbeShapeOptions {
  std::vector<std::string> kinds{"all"};  // probe names (probes/kinds.hpp), or "all": every one that takes shapes
  int batch = 0;                          // 0 = probe default (tiny; bench sizes with --bench)
  int context = 0;
  int seed = 1;
  bool bench = false;
  double timeout_s = 30;
  std::string format = "text";  // text | json
  bool in_process = false;      // debugging: no child process
  // --stack: ask the --python environment's DeepGEMM / FlashInfer / Triton instead (probes/stack_probes.hpp).
  // One shape: every --next-n, and the first of --heads/--head-dim/--block-kv (DeepGEMM),
  // --gqa/--heads-kv/--k/--sv-head-dim/--kv-dtype/--block-size (FlashInfer, Triton).
  bool stack = false;
  std::string python;
  std::vector<std::string> stack_libs;  // empty = every library in the stack table
  double stack_timeout_s = 600;
};

struct ProbeChildOptions {
  std::string specs_json;
  bool specs_on_stdin = false;  // a prestarted child (common/isolated_runner.hpp PrestartedChild)
};

// `kinds`: the probe table the command knows (a test binary passes the product's plus its
// test-only probes, tests/support/test_main.hpp); the child is this binary again.
CLI::App* add_probe_command(CLI::App& app, ProbeOptions& opts);
int run_probe_command(const ProbeOptions& opts, const std::vector<probes::ProbeKind>& kinds = probes::probe_kinds());
CLI::App* add_probe_child_command(CLI::App& app, ProbeChildOptions& opts);
int run_probe_child_command(const ProbeChildOptions& opts,
                            const std::vector<probes::ProbeKind>& kinds = probes::probe_kinds());

// A timeout option's check: a finite number of seconds in (0, 86400] (CLI11's Range lets NaN
// through, since every comparison with it is false, and would take inf).
CLI::Validator seconds_validator();

// "1-8" / "1,2,4" / "3" -> values; error message when malformed.
using probes::parse_int_list;
// The cross product the options describe, over the probes in `kinds`.
Expected<std::vector<Json>> probe_specs_from_options(
    const ProbeOptions& opts, const std::vector<probes::ProbeKind>& kinds = probes::probe_kinds());
// The stack-probe specs `probe --stack` runs (one per library in stack_libs).
Expected<std::vector<Json>> stack_specs_from_options(const ProbeOptions& opts);
// The reason every record gives when all of them are errors with the same reason (no driver, no
// GPU), else "": `probe` then prints that one line instead of a table of identical rows.
std::string common_error(const std::vector<Json>& results);
// Fixed-width table of result records (what `probe` prints).
std::string format_probe_table(const std::vector<Json>& results);

}  // namespace specprobe
