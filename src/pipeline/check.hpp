// The pipeline: one check of one serving plan, from its inputs to the report.
//
//   read the plan (inputs/serving)          -> plan facts, source locations, reader notes
//   installed libraries (inputs/python_env, inputs/installed_libs)
//   the models the plan names (resolve/: --model, a local path, the HF cache, the Hub)
//   model config and checkpoint (inputs/model_config, inputs/checkpoint)
//   GPU (gpu/: the driver, or the known-GPU table for a declared GPU)
//   derive (facts/)                         -> what the engine would do with this plan
//   probes and stack probes (probes/)       -> observations on this GPU / with these libraries
//   rules and the what-if sweep (rules/)    -> results, support matrix
//   suppressions, verdict (pipeline/)       -> Report (pipeline/report.hpp)
//
// `check`, `matrix`, `exec` and the benchmarks call run_check; printers (report/) render the
// Report; only the CLI turns it into an exit code.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "pipeline/project_settings.hpp"
#include "pipeline/report.hpp"
#include "pipeline/services.hpp"

namespace specprobe {

struct CheckRequest {
  // The plan: a serving config or deploy script ("-": TEXT, read from stdin by the caller), or a
  // command line (argv).
  std::string file;
  std::string text;  // FILE's content when FILE is "-"
  std::vector<std::string> argv;
  std::vector<std::string> env;         // --env NAME=VALUE: the environment the deploy file runs in
  bool process_environment = true;      // specprobe's own environment resolves the file's variables too
  std::string engine;                   // "vllm" | "sglang" to override detection; "" = detected
  std::string model;                    // checkpoint dir; "" = the plan's model, resolved (src/resolve/)
  std::vector<std::string> model_dirs;  // --model-dir ID=DIR: a local directory for a model named by id
  bool no_resolve = false;              // --no-resolve: local directories and the HF cache only
  double network_timeout_s = 60;        // --network-timeout: the Hub look-ups of one check, in all
  std::string gpu = "auto";             // auto (the driver) | a name or arch from the known-GPU table
  // Installed libraries.
  std::string python;                      // the deployment's interpreter
  std::vector<std::string> site_packages;  // directories to read distributions from
  std::vector<std::string> libs;           // NAME=VERSION
  // Evidence.
  std::string probes = "auto";        // auto (when a GPU is present) | off | all
  std::string stack_probes = "auto";  // auto (with python) | off
  double stack_timeout_s = 600;       // per library
  bool engine_check = true;           // with python: ask the installed engine (--no-engine: false)
  bool engine_cache = true;           // answer a repeated engine check from the cache (--no-cache: false)
  bool stack_cache = true;            // stack probes keep the libraries' JIT caches (--no-cache: false)
  double engine_timeout_s = 180;      // the whole engine adapter run
  // When the deploy names another engine release than --python has: skip (a note saying so, the
  // default) or ask the installed one anyway (--engine-mismatch ask).
  std::string engine_mismatch = "skip";
  // --engine-env: ask the engine in an environment instead of --python's: "auto" (the one of the
  // release the deploy names, from specprobe's cache: probes/engine_envs.hpp) or a venv / its
  // python. --install-engines makes a missing one; ENGINES_DIR overrides the cache's folder.
  std::string engine_env;
  bool install_engines = false;
  std::string engines_dir;
  // Sources of evidence whose absence makes the verdict unknown (--require engine,probes,stack);
  // by default a source that cannot run is a note and the verdict comes from what did run.
  std::vector<std::string> require;
  bool matrix = true;  // the what-if sweep
  // How much of a result that passes or does not apply the report holds (rules/result.hpp): the
  // CLI asks for `counted` when the run's only output is a JSON document that lists failing
  // results only (several files, --results failing).
  PassDetail pass_detail = PassDetail::full;
  // The plan's rules and advisories and the matrix's cells are evaluated on this many threads
  // (the CLI gives a file checked alone the machine's cores; files checked at once, one each).
  int threads = 1;
  // Gating.
  std::string fail_on = "error";    // recorded in the report
  std::vector<std::string> ignore;  // rule ids suppressed from the command line
  bool suppression_file = true;     // .specprobe.yaml files' `ignore:` and inline `# specprobe: ignore` comments
  // The project settings the caller read for FILE (cli/check.cpp applies their gpu, lib, ...):
  // their `ignore:` entries are used instead of reading the files again. Unset: read here.
  std::optional<ProjectSettings> settings;
  std::vector<std::string> invocation;  // specprobe's own argv, for the report
};

// Runs the whole pipeline. Input and usage problems are errors (exit 2); a missing GPU or driver is
// not (the report says what it fell back to). A file that starts several servers: the first.
Expected<Report> run_check(const CheckRequest& request, const Services& services);

// The same for every server the request's file starts (one report each, in file order). A file
// that starts none gives one report with verdict unknown (missing fact serving.server) and the
// reader's notes; run_check makes it an input error (it needs a plan).
Expected<std::vector<Report>> run_checks(const CheckRequest& request, const Services& services);

}  // namespace specprobe
