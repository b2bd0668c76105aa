// `specprobe check`: flags to request, report to outputs and exit code (see check.hpp).
#include "cli/check.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>

#include "cli/probe.hpp"
#include "cli/progress.hpp"
#include "cli/source_root.hpp"
#include "common/ascii.hpp"
#include "common/parallel.hpp"
#include "common/run_cleanup.hpp"
#include "common/suggest.hpp"
#include "inputs/versions/installed_libs.hpp"
#include "report/printers.hpp"

namespace fs = std::filesystem;

namespace specprobe {
namespace {

const std::vector<std::string> kLibraries = {"vllm",       "sglang",    "torch",     "triton",
                                             "flashinfer", "deep_gemm", "flash_attn"};

}  // namespace

CLI::Validator lib_name_validator() {
  return CLI::Validator(
      [](std::string& arg) -> std::string {
        const size_t eq = arg.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
          return "expected NAME=VERSION, got '" + arg + "'";
        const std::string name = arg.substr(0, eq);
        if (!lib_key(name).empty()) return {};
        std::string known;
        for (const auto& l : kLibraries) known += (known.empty() ? "" : ", ") + l;
        return fmt::format("unknown library '{}'{}; tracked: {}", name, did_you_mean(closest_match(name, kLibraries)),
                           known);
      },
      "NAME=VERSION");
}

void add_check_options(CLI::App& app, CheckOptions& o) {
  CheckRequest& r = o.request;
  app.add_option(
      "file", o.files,
      "deploy file(s): vLLM --config YAML/JSON, a script, docker run, compose, Kubernetes YAML, Dockerfile or "
      "start-up log; `-` reads stdin. Each server in each file gets its own report");
  o.model_option =
      app.add_option("--model", r.model,
                     "checkpoint directory (or Hugging Face cache repo dir, or config.json); default: the model the "
                     "plan names, read from a local path, the Hugging Face cache or the Hub (metadata only)");
  app.add_option("--model-dir", r.model_dirs,
                 "ID=DIR (repeatable): read the model or draft model the plan names as ID from the local directory DIR")
      ->allow_extra_args(false);
  app.add_flag("--offline", o.offline,
               "never use the network: models named by Hub id come from specprobe's cache of earlier runs only (as "
               "HF_HUB_OFFLINE=1)");
  app.add_flag("--no-resolve", r.no_resolve,
               "read models from --model, --model-dir, local paths and the Hugging Face cache only: never ask the Hub, "
               "nor specprobe's cache of it");
  app.add_option("--network-timeout", r.network_timeout_s,
                 "seconds the Hub look-ups of one check may take in all (default 60)")
      ->check(seconds_validator());
  o.gpu_option = app.add_option("--gpu", r.gpu,
                                "auto (query the Driver API), or a GPU name / arch to evaluate offline (H100, H200, "
                                "B200, GB10, RTX5090, A100, L4, sm_90, sm_121, ...)");
  app.add_option("--python", r.python,
                 "the deployment's Python (venv bin/python or prefix): read installed library versions from its "
                 "site-packages and ask its vLLM / SGLang about the plan");
  // Repeatable options take one value each time, so that a FILE after them stays a FILE.
  app.add_option("--site-packages", r.site_packages,
                 "a site-packages directory to read library versions from (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--lib", r.libs,
                 "set a library version: NAME=VERSION (vllm, sglang, torch, triton, flashinfer, deep_gemm, "
                 "flash_attn); a git hash in the local part (2.5.0+a6b593d) names the build (repeatable)")
      ->check(lib_name_validator())
      ->allow_extra_args(false);
  app.add_option("--env", r.env,
                 "NAME=VALUE (repeatable): a variable of the environment the deploy file runs in, for values it leaves "
                 "to it ($TP, ${MODEL:-...}); over specprobe's own environment")
      ->allow_extra_args(false);
  app.add_option("--engine", r.engine, "force the engine: vllm or sglang")->check(CLI::IsMember({"vllm", "sglang"}));
  app.add_option("--probes", r.probes, "run probe kernels: auto (when a GPU is present), off, all")
      ->check(CLI::IsMember({"auto", "off", "all"}));
  app.add_flag("--no-matrix", o.no_matrix, "skip the what-if support matrix");
  app.add_option("--stack-probes", r.stack_probes,
                 "with --python: run the plan's DeepGEMM / FlashInfer / Triton stack probes in that Python: auto, off")
      ->check(CLI::IsMember({"auto", "off"}));
  app.add_option("--stack-timeout", r.stack_timeout_s,
                 "seconds one stack probe (one library, JIT build included) may run")
      ->check(seconds_validator());
  app.add_flag_callback(
      "--no-engine", [&r] { r.engine_check = false; },
      "with --python: do not ask the installed vLLM / SGLang about the plan (engine check)");
  app.add_flag_callback(
      "--no-cache", [&r] { r.engine_cache = r.stack_cache = false; },
      "a cold run: ask the engine again instead of answering from $XDG_CACHE_HOME/specprobe/engine, "
      "and build the stack probes' kernels in a private cache instead of $XDG_CACHE_HOME/specprobe/stack");
  app.add_option("--engine-env", r.engine_env,
                 "ask the engine in an environment instead of --python's: auto (the one of the release the deploy "
                 "names, made by `specprobe engines install`; the newest one when it names none), or a venv directory "
                 "or its python");
  app.add_flag(
      "--install-engines", r.install_engines,
      "with --engine-env auto: make the missing environment of the deploy's engine release (from PyPI; minutes)");
  app.add_option("--engine-mismatch", r.engine_mismatch,
                 "when the deploy names another engine release than --python has: skip the engine check (a note says "
                 "so; default) or ask the installed release anyway")
      ->check(CLI::IsMember({"skip", "ask"}));
  app.add_option("--require", r.require,
                 "sources of evidence that must answer, else the verdict is unknown: engine, probes, stack "
                 "(comma-separated); by default a source that cannot run is a note and the verdict comes from the rest")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(CLI::IsMember({"engine", "probes", "stack"}));
  app.add_option("--engine-timeout", r.engine_timeout_s,
                 "seconds the engine check (engine import, plan and matrix cells) may run")
      ->check(seconds_validator());
  app.add_option("--format", o.format, "output format: text, json, sarif, junit, codequality or github")
      ->check(CLI::IsMember(selectable_format_names()));
  app.add_option("--results", o.results,
                 "which results the JSON report lists: all, or failing (those not passed or not applicable; the counts "
                 "stay whole); default all for one file, failing for several")
      ->check(CLI::IsMember({"failing", "all"}));
  app.add_option("--output,-o", o.output, "write the report to FILE instead of stdout");
  o.fail_on_option =
      app.add_option("--fail-on", o.fail_on,
                     "what makes the exit code 1: error (findings that bite every time the plan runs), risk (also the "
                     "conditional ones listed at risk), warning, info (lower severities too), none")
          ->check(CLI::IsMember({"error", "risk", "warning", "info", "none"}));
  app.add_option("--color", o.color, "auto, always, never (NO_COLOR is honoured)")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_flag("--quiet,-q", o.quiet, "print only failures and the summary");
  app.add_flag("--verbose,-v", o.verbose, "print every fact and every rule's evaluation");
  app.add_option("-j,--jobs", o.jobs,
                 "several files: check N at once (default: one per core; 1: one after the other); the reports "
                 "keep the order of the files. One file: its rules and matrix cells on N threads")
      ->check(CLI::Range(0, 256));
  app.add_flag("--explain-memory", o.explain_memory,
               "text: print the memory model's breakdown per GPU rank (weights, drafter, budget, activation, KV cache, "
               "CUDA graphs) as the engine accounts it");
  app.add_flag("--progress", o.progress,
               "show progress on stderr also when it is not a terminal (one line per phase, for CI logs)");
  app.add_option("--rules-dir", o.rules_dir, "load rules from DIR instead of the built-in catalog (development)");
  app.add_option("--advisories-dir", o.advisories_dir,
                 "load advisories from DIR instead of the built-in database (development)");
  app.add_option("--advisories-before", o.advisories_before,
                 "use only advisories published before DATE (YYYY-MM-DD), to measure how the database generalizes to "
                 "later reports")
      ->check([](const std::string& d) {
        return d.size() == 10 && d[4] == '-' && d[7] == '-' ? std::string() : std::string("expected a date YYYY-MM-DD");
      });
  app.add_option("--sarif", o.sarif_file, "also write a SARIF 2.1.0 report (GitHub code scanning) to FILE");
  app.add_option("--junit", o.junit_file, "also write a JUnit XML report (GitLab, Jenkins) to FILE");
  app.add_option("--json", o.json_file, "also write the JSON report to FILE");
  app.add_option("--codequality", o.codequality_file, "also write a GitLab Code Quality report to FILE");
  app.add_flag("--github", o.github,
               "also print GitHub Actions annotations and append a job summary to $GITHUB_STEP_SUMMARY");
  app.add_option("--source-root", o.source_root,
                 "report paths (SARIF, annotations) relative to DIR; default $GITHUB_WORKSPACE, $CI_PROJECT_DIR, the "
                 "git work tree of the config, the working directory");
  app.add_option("--sarif-category", o.sarif_category,
                 "the SARIF code-scanning category (automationDetails.id), one per job; default specprobe/<gpu>");
  app.add_flag("--exit-zero", o.exit_zero,
               "exit 0 even when findings are at or above --fail-on or the verdict is unknown (usage, environment and "
               "write errors still exit 2/3/5)");
  o.unknown_ok_option =
      app.add_flag("--unknown-ok", o.unknown_ok,
                   "an unknown verdict (a plan specprobe could not decide) exits 0 instead of 4; it is still reported");
  app.add_option("--ignore", r.ignore,
                 "suppress rule or advisory ID, or every id starting with a prefix ending in * (SP30*, SPA-VLLM-*) "
                 "(repeatable); the finding stays in the report, marked suppressed")
      ->allow_extra_args(false);
  app.add_flag(
      "--no-suppressions", o.no_suppressions,
      "ignore the .specprobe.yaml files (settings and suppressions) and inline `# specprobe: ignore` comments");
}

CheckRequest check_request(const CheckOptions& o) {
  CheckRequest r = o.request;
  r.fail_on = o.fail_on;
  r.suppression_file = !o.no_suppressions;
  r.matrix = !o.no_matrix;
  return r;
}

Expected<Services> cli_services(const CheckOptions& o) {
  auto services = system_services({o.rules_dir, o.advisories_dir, o.advisories_before});
  if (!services) {
    std::fprintf(stderr, "specprobe: %s\n", services.error().str().c_str());
    return services.error();
  }
  // Only a --rules-dir can be empty; the built-in catalog loads meanwhile (rules/catalog.hpp).
  if (auto st = o.rules_dir.empty() ? Status(Ok{}) : require_rules(*services->catalog); !st) {
    std::fprintf(stderr, "specprobe: %s\n", st.error().str().c_str());
    return st.error();
  }
  services->progress = progress_sink(progress_options(o.quiet, o.progress));
  services->resolver = hub_resolver(o.offline, o.request.network_timeout_s);
  return services;
}

Status require_rules(const Catalog& catalog) {
  if (!catalog.rules_dir.empty() && catalog.rules.empty())
    return input_error(fmt::format("no rules found in {} (rule files are <band>/SPnnnn-slug.yaml)", catalog.rules_dir));
  return Ok{};
}

Expected<FileRequest> request_for_file(const CheckOptions& o, const std::string& file) {
  FileRequest out{check_request(o), o.fail_on, o.unknown_ok, {}};
  CheckRequest& req = out.request;
  req.file = file;
  if (o.no_suppressions) return out;
  auto settings = project_settings_for(file);
  if (!settings) return settings.error();
  auto given = [](const CLI::Option* opt) { return opt && opt->count() > 0; };
  if (settings->gpu && !given(o.gpu_option)) req.gpu = *settings->gpu;
  if (settings->model && !given(o.model_option)) req.model = *settings->model;
  if (settings->fail_on && !given(o.fail_on_option)) out.fail_on = req.fail_on = *settings->fail_on;
  if (settings->unknown_ok && !given(o.unknown_ok_option)) out.unknown_ok = *settings->unknown_ok;
  // NAME=VALUE lists: the command line's entry for a name wins over the settings'.
  auto merge = [](std::vector<std::string>& flags, const std::vector<std::string>& from_settings, bool lower) {
    auto key = [lower](const std::string& entry) {
      const std::string k = entry.substr(0, entry.find('='));
      return lower ? ascii_lower(k) : k;
    };
    std::vector<std::string> merged;
    for (const auto& s : from_settings)
      if (std::none_of(flags.begin(), flags.end(), [&](const std::string& f) { return key(f) == key(s); }))
        merged.push_back(s);
    merged.insert(merged.end(), flags.begin(), flags.end());
    flags = std::move(merged);
  };
  merge(req.libs, settings->libs, true);
  merge(req.model_dirs, settings->model_dirs, false);
  if (!settings->sources.empty()) {
    std::string what;
    for (const auto& s : settings->sources) what += (what.empty() ? "" : "; ") + s;
    out.notes.push_back("project settings: " + what + " (the command line wins; --no-suppressions reads none)");
  }
  req.settings = std::move(*settings);
  return out;
}

int exit_code_for(const Report& report, const std::string& fail_on, bool unknown_ok) {
  for (const auto& r : report.results)
    if (fails_gate(r, fail_on)) return 1;
  // A plan specprobe could not decide is not a pass: a CI gate (and `exec`) must not treat it as
  // one unless told to (--unknown-ok), like a linter's "could not analyse" being an error.
  if (report.verdict == "unknown" && !unknown_ok) return kExitUnknown;
  return 0;
}

int emit_check_report(const CheckOptions& o, const Report& report, std::FILE* stream) {
  return emit_check_reports(o, {report}, stream);
}

namespace {

RenderOptions render_options(const CheckOptions& o, std::FILE* stream) {
  RenderOptions ro;
  ro.color = o.output.empty() && want_color(o.color, fileno(stream));
  ro.width = o.output.empty() ? text_width(fileno(stream)) : text_width(-1);
  ro.verbose = o.verbose;
  ro.explain_memory = o.explain_memory;
  ro.quiet = o.quiet;
  ro.all_results = o.results.empty() ? o.files.size() <= 1 : o.results == "all";
  std::error_code ec;
  const std::string first_file = !o.files.empty() ? o.files.front() : o.request.file;
  ro.paths.root = find_source_root(o.source_root, first_file, [](const char* n) { return std::getenv(n); });
  ro.paths.working_dir = fs::current_path(ec).string();
  ro.sarif_category = o.sarif_category;
  return ro;
}

std::vector<ReportOutput> report_outputs(const CheckOptions& o) {
  std::vector<ReportOutput> outputs = {{o.format, o.output}};
  if (!o.json_file.empty()) outputs.push_back({"json", o.json_file});
  if (!o.sarif_file.empty()) outputs.push_back({"sarif", o.sarif_file});
  if (!o.junit_file.empty()) outputs.push_back({"junit", o.junit_file});
  if (!o.codequality_file.empty()) outputs.push_back({"codequality", o.codequality_file});
  if (o.github && o.format != "github") outputs.push_back({"github", "", stdout});
  if (o.github || o.format == "github")
    if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY"); summary && *summary)
      outputs.push_back({"github-summary", summary, nullptr, true});
  return outputs;
}

// The exit code for the problems of writing the outputs (each printed): a report not written (5)
// over an internal error (3).
int report_problems(const std::vector<Error>& problems) {
  int rc = 0;
  for (const auto& e : problems) {
    std::fprintf(stderr, "specprobe: %s\n", e.str().c_str());
    rc = std::max(rc, exit_code(e.kind));
  }
  return rc;
}

}  // namespace

int emit_check_reports(const CheckOptions& o, const std::vector<Report>& reports, std::FILE* stream) {
  const RenderOptions ro = render_options(o, stream);
  if (!o.sarif_file.empty() || o.format == "sarif")
    if (std::any_of(reports.begin(), reports.end(), [](const Report& r) { return r.input_path == kCommandLineInput; }))
      std::fprintf(stderr,
                   "specprobe: note: a command line given after `--` is in no file: its SARIF results have no file "
                   "location, which GitHub code scanning requires; check the deploy script or config file instead\n");
  return report_problems(emit_reports(reports, report_outputs(o), ro, stream));
}

// One file's outcome: its reports (or, rendered ahead, their JSON entries), or the error that
// stopped it (printed in file order).
struct FileOutcome {
  std::vector<Report> reports;
  std::vector<RenderedReport> rendered;
  std::string error;  // one line for stderr, "" when none
  int exit = 0;
};

FileOutcome check_one_file(const CheckOptions& o, const std::string& file, const std::string& stdin_text,
                           const Services& services) {
  FileOutcome out;
  auto file_request = request_for_file(o, file);
  if (!file_request) {
    out.error = file_request.error().str();
    out.exit = exit_code(file_request.error().kind);
    return out;
  }
  CheckRequest& req = file_request->request;
  if (file == "-") req.text = stdin_text;
  auto rs = run_checks(req, services);
  if (!rs) {
    out.error = rs.error().str();
    out.exit = exit_code(rs.error().kind);
    return out;
  }
  for (Report& r : *rs) {
    for (const auto& n : file_request->notes) r.notes.push_back({"info", n, {}});
    r.exit_code = o.exit_zero ? 0 : exit_code_for(r, file_request->fail_on, file_request->unknown_ok);
    out.exit = worse_exit(out.exit, r.exit_code);
    out.reports.push_back(std::move(r));
  }
  return out;
}

namespace {

// Freeing every report's facts and results is a noticeable part of a many-file run (issue 49) and
// serves nothing when the process ends next: the latest call's reports are kept to the end of the
// process (an earlier call's are freed then: in-process callers run several).
void keep_until_exit(std::vector<Report>&& reports) {
  static std::mutex mu;
  static std::vector<Report>* kept = nullptr;
  auto next = std::make_unique<std::vector<Report>>(std::move(reports));
  std::vector<Report>* previous = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    previous = kept;
    kept = next.release();
  }
  delete previous;
}

}  // namespace

int run_check_command(CheckOptions o) {
  auto services = cli_services(o);
  if (!services) return exit_code(services.error().kind);
  // Each FILE (or the command line after --): every server it starts; the exit code is the worst.
  std::vector<std::string> files = o.files;
  if (files.empty()) files.push_back("");
  if (std::count(files.begin(), files.end(), std::string("-")) > 1) {
    std::fprintf(stderr, "specprobe: error: `-` (stdin) given more than once\n");
    return 2;
  }
  std::string stdin_text;
  if (std::find(files.begin(), files.end(), std::string("-")) != files.end())
    stdin_text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  // Several files run on several threads (-j): they share the catalog, the checkpoint reads and
  // one GPU query; each file's reports and errors keep their place. Installing an engine
  // environment stays one file at a time (one download per release).
  std::vector<FileOutcome> outcomes(files.size());
  // Several files with one JSON output (the many-file run of a CI job or a dashboard): each
  // file's reports are rendered on the thread that checked them and freed (issue 49); the
  // document is the same as from the reports kept.
  const std::vector<ReportOutput> outputs = report_outputs(o);
  const bool render_ahead = files.size() > 1 && outputs.size() == 1 && outputs.front().format == "json";
  const RenderOptions ro = render_options(o, stdout);
  // That document lists failing results only (unless --results all): the others are only counted.
  if (render_ahead && !ro.all_results) o.request.pass_detail = PassDetail::counted;
  // The entries go to the output in file order as they are ready (a file's entries wait for the
  // files before it).
  std::optional<JsonReportsWriter> writer;
  if (render_ahead) writer.emplace(outputs.front(), ro, stdout, o.request.invocation);
  std::mutex write_mu;
  size_t next_to_write = 0;
  std::vector<char> ready(files.size(), 0);
  auto check = [&](const CheckOptions& opts, size_t i) {
    outcomes[i] = check_one_file(opts, files[i], stdin_text, *services);
    if (!render_ahead) return;
    for (const Report& r : outcomes[i].reports) outcomes[i].rendered.push_back(render_json_entry(r, ro));
    outcomes[i].reports.clear();
    std::lock_guard<std::mutex> lock(write_mu);
    ready[i] = 1;
    for (; next_to_write < files.size() && ready[next_to_write]; ++next_to_write)
      writer->add(std::move(outcomes[next_to_write].rendered));
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t jobs = o.request.install_engines ? 1 : o.jobs > 0 ? static_cast<size_t>(o.jobs) : cores;
  if (files.size() > 1 && jobs > 1) {
    services->progress = nullptr;  // one progress line cannot follow several files
    auto query = services->query_gpus;
    auto once = std::make_shared<std::once_flag>();
    auto report = std::make_shared<DriverReport>();
    services->query_gpus = [query, once, report] {
      std::call_once(*once, [&] { *report = query(); });
      return *report;
    };
    // One scope for the whole run: the threads' own scopes (probes, engine checks) nest inside it.
    const InterruptScope interrupts;
    parallel_for(files.size(), jobs, [&](size_t i) { check(o, i); });
  } else {
    // One file at a time: each file's rules and matrix cells use the jobs instead.
    CheckOptions alone = o;
    alone.request.threads = static_cast<int>(jobs);
    for (size_t i = 0; i < files.size(); ++i) check(alone, i);
  }
  std::vector<Report> reports;
  int worst = 0;
  for (FileOutcome& f : outcomes) {
    if (!f.error.empty()) std::fprintf(stderr, "specprobe: %s\n", f.error.c_str());
    worst = worse_exit(worst, f.exit);
    for (Report& r : f.reports) reports.push_back(std::move(r));
  }
  services->progress = nullptr;  // the line is cleared before anything else is printed
  if (render_ahead) {
    const int rc = report_problems(writer->finish());
    return rc != 0 ? rc : worst;
  }
  if (reports.empty()) return worst;
  const int rc = emit_check_reports(o, reports, stdout);
  keep_until_exit(std::move(reports));
  return rc != 0 ? rc : worst;
}

}  // namespace specprobe
