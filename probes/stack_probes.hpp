// Stack probes: ask the deployment's own libraries (the stack table, probes/stack_kinds.hpp; through
// the Python given with --python) whether they run the plan's shapes on this GPU, at tiny sizes.
// Each library is one entry of the stack table (probes/stack_kinds.hpp) with an adapter script
// (probes/stack_<library>.py, embedded in the binary) that specprobe writes into a
// private temp dir and runs with that Python in an isolated child (probes/runner.hpp: timeout,
// process-group kill, death by signal), with a clean environment (an allow-list; HOME, TMPDIR and
// every cache pointing into the private dir, PYTHONNOUSERSITE=1, no bytecode). Nothing is
// installed or written into the user's environment; the private dir is removed afterwards.
//
// An adapter prints one result (schema "specprobe-stack/1"); specprobe validates it before trusting
// it. Result states: pass / fail (the library refused or computed wrong numbers; its own error text
// kept) / skip (library or torch not installed, no GPU, or not on the plan's path; with the reason)
// / error (crash, hang, unparseable or invalid output, JIT or environment failure: never trusted).
// Results become facts under "stack." (names in probes/README.md). Touches no GPU itself; the
// adapters do, in their own process.
// The interpreter is found and asked about itself by inputs/versions/python_env.hpp.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe::probes {

inline constexpr const char* kStackSchema = "specprobe-stack/1";

// The libraries with an adapter, in run order.
const std::vector<std::string>& stack_libraries();

struct StackProbeOptions {
  std::string python;                  // interpreter path, or a name looked up on PATH ("python3")
  bool ask_interpreter = true;         // run_stack_specs: run inspect_python(python) first and use its
                                       // sys.executable; false when python already is that
  double timeout_s = 600;              // per adapter (a JIT build of the kernel happens inside)
  std::vector<std::string> libraries;  // empty = every library the plan implies
  std::vector<int> next_n;             // DeepGEMM next_n values; empty = every next_n the what-if sweep
                                       // shows (1 .. kStackSweepMaxNextN) and the plan's
  // The libraries' JIT caches (DeepGEMM, Triton, torch extensions) persist across runs under
  // CACHE_DIR/<interpreter and library key>, so a second run does not build the kernels again;
  // "" = $XDG_CACHE_HOME/specprobe/stack (else ~/.cache/specprobe/stack). The libraries key
  // their own entries by source, version and arch. use_cache false (--no-cache): a private, cold
  // cache removed with the run.
  // Answers persist too (probes/answer_cache.hpp): a pass or fail is kept under
  // CACHE_DIR/answers/<key>.json, the key made of the library's and torch's installed builds
  // (dist-info RECORD in site_packages), the interpreter, the adapter scripts, the spec, the
  // child's environment and MACHINE (the GPU and driver the answer was measured on). A second run
  // with nothing of that changed answers without starting Python. No cache entry is read or written
  // when MACHINE is empty (no GPU queried), the library has no RECORD there, or it is installed
  // editable. An error or skip is never kept.
  bool use_cache = true;
  std::string cache_dir;
  std::vector<std::string> site_packages;    // empty: the interpreter's own answer (run_stack_specs)
  std::string machine;                       // "" = answers are not cached
  std::string adapter_dir;                   // tests: read stack_<library>.py from here, not the binary
  std::string env_program = "/usr/bin/env";  // starts the interpreter with exactly the child env
  // "stack probe deep_gemm: <phase>" as each adapter starts and reports its phases (a JIT build
  // on first use can take minutes); empty = silent.
  std::function<void(const std::string&)> progress;
};

// The child's environment: PATH, LD_LIBRARY_PATH, LD_PRELOAD, CUDA_VISIBLE_DEVICES,
// CUDA_DEVICE_ORDER, CUDA_HOME, CUDA_PATH and the names listed in SPECPROBE_STACK_PASS_ENV
// (comma-separated) from PARENT ("NAME=VALUE" entries); HOME and TMPDIR under PRIVATE_DIR;
// XDG_CACHE_HOME and the Triton / DeepGEMM / torch-extension caches under PRIVATE_DIR/cache; PYTHONNOUSERSITE=1,
// PYTHONDONTWRITEBYTECODE=1, PYTHONUNBUFFERED=1, PYTHONIOENCODING=utf-8;
// SPECPROBE_STACK_PHASE_FILE=PRIVATE_DIR/phase (where the adapter records its phase).
// CACHE_ROOT, when given, holds the library caches instead of PRIVATE_DIR/cache.
std::vector<std::string> stack_child_env(const std::string& private_dir, const std::vector<std::string>& parent,
                                         const std::string& cache_root = "");

// The next_n values DeepGEMM is asked by default: k = 0 .. 8 of the what-if sweep
// (rules/sweep.hpp SweepOptions::max_k), so each k's cell has its own answer.
inline constexpr int kStackSweepMaxNextN = 9;

// Where the library caches of LIBRARY under PYTHON persist (see StackProbeOptions::cache_dir);
// "" when no cache directory can be named (no XDG_CACHE_HOME or HOME).
std::string stack_cache_root(const StackProbeOptions& opts, const std::string& python, const std::string& library);

// The answer cache key of SPEC run with PYTHON (see StackProbeOptions::use_cache); "" when the
// answer is not to be cached. SCRIPTS: the adapter's and its module's text.
std::string stack_answer_key(const Json& spec, const StackProbeOptions& opts, const std::string& python,
                             const std::string& scripts);

// One spec per library of the stack table (opts.libraries: those only): {"probe": "stack_<lib>",
// "library", "params": {...}} for the libraries the plan implies, or {"probe", "library",
// "skip_reason"} for one it does not (reported as skip, not run); each kind's plan_spec decides.
std::vector<Json> stack_probe_specs(const Json& facts, const StackProbeOptions& opts);

// Checks an adapter's printed result against the schema and the spec it was run for. Returns the
// normalised record {"probe", "name", "library", "adapter", "status", "reason", "error_text",
// "version", "device", "cases", "spec", "source": "adapter"} (run_stack_probe adds "python",
// "cache_dir" and "cached": true for an answer read from the cache); anything malformed becomes status
// "error" with the reason, never trusted. A runner record (crash, timeout, nothing printed)
// becomes "error" with the runner's reason, signal and stderr tail; a timeout names the adapter's
// last phase (raw "phase", else the last "@@specprobe phase" line of the stderr tail) and suggests
// a larger --stack-timeout.
Json validate_stack_result(const Json& raw, const Json& spec);

// Runs one spec with opts.python as is (writes the adapter and stack_common.py into a fresh private
// dir, runs it, validates, cleans up).
Json run_stack_probe(const Json& spec, const StackProbeOptions& opts);

struct StackRun {
  Json facts_patch = Json::object();  // {"stack": {...}}
  Json results = Json::array();       // one validated record per library
};

// stack.ran, stack.python, stack.<lib>.status / .reason / .error_text / .version / .cached / .device_sm /
// .device_name, stack.<lib>.<case key>.status / .reason / .error_text (each library's case keys:
// probes/README.md), each kind's own facts and answer records (StackKind::record),
// stack.errors (one line per library whose probe could not determine, or null).
Json stack_facts_patch(const std::vector<Json>& results, const std::string& python);

// Specs for the plan, run one after another (after inspect_python unless !opts.ask_interpreter; when
// the interpreter does not answer, its path is run as given). Never throws for child failures.
StackRun run_stack_probes(const Json& facts, const StackProbeOptions& opts);

// Runs explicit specs (specprobe probe --stack).
StackRun run_stack_specs(const std::vector<Json>& specs, const StackProbeOptions& opts);

}  // namespace specprobe::probes
