// `specprobe check`: the pipeline from inputs to report (see check.hpp).
#include "cli/check.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "cli/info_commands.hpp"
#include "cli/probe.hpp"
#include "facts/derive.hpp"
#include "facts/libs.hpp"
#include "gpu/driver.hpp"
#include "inputs/checkpoint/checkpoint.hpp"
#include "inputs/model_config.hpp"
#include "inputs/serving.hpp"
#include "probes/plan_probes.hpp"
#include "probes/stack_probes.hpp"
#include "report/printers.hpp"
#include "report/suppressions.hpp"
#include "rules/engine.hpp"
#include "rules/sweep.hpp"

namespace fs = std::filesystem;

namespace specprobe {
namespace {

constexpr const char* kFallbackGpu = "H100";

// Reads config.json into model.* facts; sets DIR_OUT to the checkpoint directory read (if any).
Status add_model(const CheckOptions& o, Report& report, Json& facts, std::string& dir_out) {
  std::string dir = o.model;
  if (dir.empty()) {
    const auto id = fact_string(facts, "model.id");
    std::error_code ec;
    if (id && fs::exists(*id, ec)) dir = *id;
    else if (id)
      report.notes.push_back({"info",
                              fmt::format("model '{}' is not a local directory: model facts are unknown (pass "
                                          "--model DIR with the checkpoint or its config.json)",
                                          *id),
                              {}});
    else
      report.notes.push_back({"info", "no model given: model facts are unknown (pass --model DIR)", {}});
  }
  if (dir.empty()) return Ok{};
  auto cfg = read_model_config(dir);
  if (!cfg) return cfg.error();
  const int tp = static_cast<int>(fact_int(facts, "serve.tp").value_or(1));
  Json mf = model_facts(*cfg, tp);
  const Json id = facts["model"].value("id", Json(nullptr));
  facts["model"] = mf.contains("model") ? mf["model"] : mf;
  if (!id.is_null()) facts["model"]["id"] = id;
  for (const auto& n : cfg->notes) report.notes.push_back({"info", n, {cfg->path}});
  dir_out = cfg->dir;
  return Ok{};
}

// Safetensors headers, quantization config and layer-name matching (metadata only, read-only).
Status add_checkpoint(const std::string& dir, Report& report, Json& facts) {
  if (dir.empty()) return Ok{};
  auto a = analyze_checkpoint(dir, facts);
  if (!a) return a.error();
  for (const char* key : {"checkpoint", "quant"})
    if (a->facts.contains(key)) facts[key] = a->facts[key];
  report.checkpoint = a->summary;
  for (const auto& n : a->notes)
    report.notes.push_back({n.severity == "info" ? "info" : "warning", n.message, {n.file}});
  return Ok{};
}

// Tiny real kernels with the plan's shapes, in isolated children; results enter as probe.* facts.
void add_probes(const CheckOptions& o, Report& report, Json& facts) {
  const bool gpu_present = fact_string(facts, "gpu.source").value_or("") == "driver";
  if (o.probes == "off" || (o.probes == "auto" && !gpu_present)) {
    facts["probe"]["ran"] = false;
    facts["probe"]["reason"] = o.probes == "off" ? "--probes off" : "no GPU to run probes on";
    return;
  }
  // Progress on a terminal only: CI logs and pipes stay clean.
  const bool progress = !o.quiet && isatty(STDERR_FILENO) == 1;
  if (progress) {
    std::string names;
    const auto specs = probes::plan_probe_specs(facts, o.probes);
    for (const auto& sp : specs) names += (names.empty() ? "" : ", ") + sp.value("probe", std::string("?"));
    std::fprintf(stderr, "specprobe: running %zu probe%s on %s: %s ...", specs.size(), specs.size() == 1 ? "" : "s",
                 fact_string(facts, "gpu.name").value_or("the GPU").c_str(), names.c_str());
    std::fflush(stderr);
  }
  probes::PlanProbeOptions po;
  po.mode = o.probes;
  po.gpu_present = gpu_present;
  probes::ProbeRun run = probes::run_plan_probes(facts, po);
  if (progress) std::fputs("\r\033[K", stderr);
  facts.merge_patch(run.facts_patch);
  report.probes = run.results;
}

// Stack probes: the --python environment's own DeepGEMM / FlashInfer / Triton run the plan's shapes
// (probes/stack_probes.hpp); their answers enter as stack.* facts and the derived facts are
// recomputed so that the DSA derivation prefers them over version knowledge.
void add_stack_probes(const CheckOptions& o, Report& report, Json& facts) {
  if (o.python.empty() || o.stack_probes == "off") {
    facts["stack"]["ran"] = false;
    facts["stack"]["reason"] = o.python.empty() ? "no --python given" : "--stack-probes off";
    return;
  }
  probes::StackProbeOptions so;
  so.python = o.python;
  so.timeout_s = o.stack_timeout_s;
  if (fact_string(facts, "python.found_by")) {  // add_libs asked the interpreter already (see its note)
    so.python = fact_string(facts, "python.executable").value_or(o.python);
    so.ask_interpreter = false;
  }
  probes::StackRun run = probes::run_stack_probes(facts, so);
  facts.merge_patch(run.facts_patch);
  for (const auto& r : run.results) {
    report.probes.push_back(r);
    const std::string st = r.value("status", "error");
    std::string msg = fmt::format("stack probe {} {}: {}", r.value("library", "?"),
                                  r.value("version", Json()).is_string() ? r["version"].get<std::string>() : "(version unknown)", st);
    if (!r.value("reason", "").empty()) msg += " (" + r["reason"].get<std::string>() + ")";
    if (r.value("error_text", Json()).is_string()) msg += ": `" + r["error_text"].get<std::string>() + "`";
    report.notes.push_back({st == "error" ? "warning" : "info", msg, {}});
  }
  derive_facts(facts);
}

// --python: the interpreter is asked where it imports from (probes::inspect_python: shims, symlinks
// and venvs as Python itself resolves them); only when it does not answer are site-packages derived
// from its path, with a note. Facts python.* record what was used.
Expected<std::vector<std::string>> python_site_packages(const CheckOptions& o, Report& report, Json& facts) {
  auto env = probes::inspect_python(o.python);
  if (env) {
    facts["python"] = {{"given", env->given}, {"executable", env->executable}, {"prefix", env->prefix},
                       {"base_prefix", env->base_prefix}, {"version", env->version},
                       {"site_packages", env->site_packages}, {"found_by", "interpreter"}};
    return env->site_packages;
  }
  auto resolved = probes::resolve_python(o.python);  // "python3" is looked up on PATH
  auto sp = site_packages_of_python(resolved ? *resolved : o.python);
  if (!sp) return input_error(fmt::format("{} (and {})", sp.error().message, env.error().message));
  std::string list;
  for (const auto& d : *sp) list += (list.empty() ? "" : ", ") + d;
  report.notes.push_back({"warning", fmt::format("{}; read site-packages from the path instead: {}", env.error().message, list), {}});
  facts["python"] = {{"given", resolved ? *resolved : o.python}, {"executable", nullptr},
                     {"site_packages", *sp}, {"found_by", "path"}};
  return sp;
}

Status add_libs(const CheckOptions& o, Report& report, Json& facts) {
  std::vector<LibVersion> libs;
  for (const auto& d : o.site_packages) {
    auto found = read_site_packages(d);
    if (!found) return found.error();
    libs.insert(libs.end(), found->begin(), found->end());
  }
  if (!o.python.empty()) {
    auto dirs = python_site_packages(o, report, facts);
    if (!dirs) return dirs.error();
    // Import order: the first directory holding a distribution is the one Python imports (later
    // entries override earlier ones in add_lib_facts, so read them last to first).
    for (auto d = dirs->rbegin(); d != dirs->rend(); ++d) {
      auto found = read_site_packages(*d);
      if (!found) return found.error();
      libs.insert(libs.end(), found->begin(), found->end());
    }
  }
  for (const auto& arg : o.libs) {
    auto l = parse_lib_arg(arg);
    if (!l) return l.error();
    libs.push_back(*l);
  }
  add_lib_facts(facts, libs);
  return Ok{};
}

Status add_gpu(const CheckOptions& o, Report& report, Json& facts) {
  if (o.gpu != "auto") {
    auto g = declared_gpu(o.gpu);
    if (!g) return g.error();
    facts["gpu"] = gpu_facts(*g);
    facts["gpu"]["declared"] = o.gpu;
    report.notes.push_back({"info", fmt::format("evaluating for a declared GPU: {} (sm_{}), from specprobe's table", g->name, g->sm()), {}});
    return Ok{};
  }
  DriverReport dr = query_system_gpus();
  facts["driver"]["loaded"] = dr.loaded;
  if (dr.driver_version > 0) facts["driver"]["version"] = dr.driver_version;
  if (dr.loaded && !dr.gpus.empty()) {
    facts["gpu"] = gpu_facts(dr.gpus.front());
    facts["gpu"]["count"] = dr.gpus.size();
    if (dr.gpus.size() > 1) {
      bool mixed = false;
      for (const auto& g : dr.gpus) mixed |= g.name != dr.gpus.front().name;
      report.notes.push_back({mixed ? "warning" : "info",
                              fmt::format("{} GPUs visible; evaluating device 0 ({}){}", dr.gpus.size(),
                                          dr.gpus.front().name, mixed ? " — the GPUs differ, check each with --gpu" : ""),
                              {}});
    }
    return Ok{};
  }
  auto g = declared_gpu(kFallbackGpu);
  facts["gpu"] = gpu_facts(*g);
  facts["gpu"]["declared"] = kFallbackGpu;
  facts["gpu"]["fallback"] = true;
  const std::string why = dr.problem ? dr.problem->message : "no GPU found";
  report.notes.push_back({"warning",
                          fmt::format("no GPU to query ({}); evaluating for a declared {} instead — pass "
                                      "--gpu NAME (e.g. H200, B200, GB10, sm_90) to choose",
                                      why, g->name),
                          {}});
  return Ok{};
}

// --ignore and .specprobe.yaml next to the config. Unknown ids are rejected (exit 2) with a
// "did you mean"; suppressed findings stay in the report.
Status add_suppressions(const CheckOptions& o, const std::vector<Rule>& rules, Report& report) {
  auto entries = ignore_args(o.ignore);
  if (!entries) return entries.error();
  if (!o.no_suppressions) {
    auto file = read_suppression_file(suppression_file_for(o.file));
    if (!file) return file.error();
    entries->insert(entries->end(), file->begin(), file->end());
  }
  for (const auto& e : *entries) {
    if (std::any_of(rules.begin(), rules.end(), [&](const Rule& r) { return r.id == e.id; })) continue;
    const std::string near = closest_rule_id(e.id, o.rules_dir);
    const std::string msg =
        fmt::format("unknown rule id '{}'{}", e.id, near.empty() ? "" : fmt::format(" (did you mean {}?)", near));
    return e.source == "--ignore" ? usage_error("--ignore: " + msg) : input_error(msg, e.where);
  }
  apply_suppressions(report, *entries, today_iso());
  return Ok{};
}

std::string verdict_of(const std::vector<RuleResult>& results) {
  bool unknown = false;
  for (const auto& r : results) {
    if (r.suppressed) continue;
    if (r.status == ResultStatus::fail && r.severity == Severity::error) return "not-supported";
    if (r.status == ResultStatus::error) unknown = true;
  }
  return unknown ? "unknown" : "supported";
}

}  // namespace

void add_check_options(CLI::App& app, CheckOptions& o) {
  app.add_option("file", o.file, "vLLM --config file (YAML/JSON) or a script holding a vllm/sglang command line");
  app.add_option("--model", o.model, "checkpoint directory (or Hugging Face cache repo dir, or config.json)");
  app.add_option("--gpu", o.gpu, "auto (query the Driver API), or a GPU name / arch to evaluate offline (H100, H200, B200, GB10, RTX5090, A100, L4, sm_90, sm_121, ...)");
  app.add_option("--python", o.python, "the deployment's Python (venv bin/python or prefix): read installed library versions from its site-packages");
  app.add_option("--site-packages", o.site_packages, "a site-packages directory to read library versions from");
  app.add_option("--lib", o.libs, "set a library version: NAME=VERSION (vllm, sglang, torch, triton, flashinfer, deep_gemm, flash_attn); a git hash in the local part (2.5.0+a6b593d) names the build");
  app.add_option("--engine", o.engine, "force the engine: vllm or sglang")->check(CLI::IsMember({"vllm", "sglang"}));
  app.add_option("--probes", o.probes, "run probe kernels: auto (when a GPU is present), off, all")->check(CLI::IsMember({"auto", "off", "all"}));
  app.add_flag("--no-matrix", o.no_matrix, "skip the what-if support matrix");
  app.add_option("--stack-probes", o.stack_probes, "with --python: run the plan's DeepGEMM / FlashInfer / Triton stack probes in that Python: auto, off")->check(CLI::IsMember({"auto", "off"}));
  app.add_option("--stack-timeout", o.stack_timeout_s, "seconds one stack probe (one library, JIT build included) may run")
      ->check(seconds_validator());
  app.add_option("--format", o.format, "output format: text, json, sarif, junit or github")
      ->check(CLI::IsMember({"text", "json", "sarif", "junit", "github"}));
  app.add_option("--output,-o", o.output, "write the report to FILE instead of stdout");
  app.add_option("--fail-on", o.fail_on, "lowest severity that makes the exit code 1: error, warning, info, none")
      ->check(CLI::IsMember({"error", "warning", "info", "none"}));
  app.add_option("--color", o.color, "auto, always, never (NO_COLOR is honoured)")->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_flag("--quiet,-q", o.quiet, "print only failures and the summary");
  app.add_flag("--verbose,-v", o.verbose, "print every fact and every rule's evaluation");
  app.add_option("--rules-dir", o.rules_dir, "load rules from DIR instead of the built-in catalog (development)");
  app.add_option("--sarif", o.sarif_file, "also write a SARIF 2.1.0 report (GitHub code scanning) to FILE");
  app.add_option("--junit", o.junit_file, "also write a JUnit XML report (GitLab, Jenkins) to FILE");
  app.add_option("--json", o.json_file, "also write the JSON report to FILE");
  app.add_flag("--github", o.github, "also print GitHub Actions annotations and append a job summary to $GITHUB_STEP_SUMMARY");
  app.add_flag("--exit-zero", o.exit_zero, "exit 0 even when findings are at or above --fail-on (usage and environment errors still exit 2/3)");
  app.add_option("--ignore", o.ignore, "suppress rule SPnnnn (repeatable); the finding stays in the report, marked suppressed");
  app.add_flag("--no-suppressions", o.no_suppressions, "ignore .specprobe.yaml next to the config");
}

Expected<Report> run_check(const CheckOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  if (auto st = check_version_tables(); !st) return st.error();
  Report report;
  report.argv = o.full_argv;
  report.fail_on = o.fail_on;

  if (o.file.empty() && o.argv.empty())
    return usage_error("check needs a FILE, or a command line after `--` (specprobe check -- vllm serve MODEL ...)");
  Expected<ParsedServing> parsed = o.argv.empty() ? read_serving_file(o.file) : read_serving_argv(o.argv);
  if (!parsed) return parsed.error();
  Json facts = parsed->facts;
  if (!o.engine.empty()) facts["engine"]["name"] = o.engine;
  report.input_path = parsed->path;
  report.input_form = std::string(to_string(parsed->form));
  for (const auto& n : parsed->notes) report.notes.push_back({n.severity, n.message, n.where});
  for (const auto& u : parsed->unknown)
    report.notes.push_back({"info", fmt::format("option '{}' is not modelled by specprobe; kept as given ({})", u.name,
                                                u.value.is_string() ? u.value.get<std::string>() : u.value.dump(-1, ' ', false, Json::error_handler_t::replace)),
                            u.where});

  std::string model_dir;
  if (auto st = add_libs(o, report, facts); !st) return st.error();
  if (auto st = add_model(o, report, facts, model_dir); !st) return st.error();
  if (auto st = add_checkpoint(model_dir, report, facts); !st) return st.error();
  if (auto st = add_gpu(o, report, facts); !st) return st.error();
  derive_facts(facts);
  add_probes(o, report, facts);
  add_stack_probes(o, report, facts);

  auto rules = load_rules(o.rules_dir);
  if (!rules) {
    Error e = rules.error();
    if (o.rules_dir.empty()) e.kind = ErrorKind::internal;
    return e;
  }
  report.results = evaluate_rules(*rules, facts, parsed->locations, parsed->path);
  if (auto st = add_suppressions(o, *rules, report); !st) return st.error();
  if (!o.no_matrix) report.matrix = sweep_support_matrix(*rules, facts);
  report.engine = fact_string(facts, "engine.name").value_or("vllm");
  report.verdict = verdict_of(report.results);
  report.facts = std::move(facts);
  report.duration_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

int exit_code_for(const Report& report, const std::string& fail_on) {
  if (fail_on == "none") return 0;
  const Severity threshold = *parse_severity(fail_on);
  for (const auto& r : report.results)
    if (r.status == ResultStatus::fail && !r.suppressed && r.severity >= threshold) return 1;
  return 0;
}

namespace {

Status write_file(const std::string& path, const std::string& content, bool append = false) {
  std::ofstream f(path, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  if (!(f << content)) return environment_error(fmt::format("cannot write {}", path));
  return Ok{};
}

// GitHub wants paths relative to the checkout: $GITHUB_WORKSPACE there, else the cwd.
std::string source_root() {
  if (const char* ws = std::getenv("GITHUB_WORKSPACE"); ws && *ws) return ws;
  std::error_code ec;
  const auto cwd = fs::current_path(ec);
  return ec ? std::string() : cwd.string();
}

Expected<std::string> sarif_text(const CheckOptions& o, const Report& report) {
  auto rules = load_rules(o.rules_dir);
  if (!rules) return rules.error();
  return report_to_sarif(report, *rules, SarifOptions{source_root()}).dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace

int emit_report(const CheckOptions& o, const Report& report, std::FILE* text_out) {
  std::string out;
  if (o.format == "json") {
    out = report_to_json(report).dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  } else if (o.format == "sarif") {
    auto s = sarif_text(o, report);
    if (!s) {
      std::fprintf(stderr, "specprobe: %s\n", s.error().str().c_str());
      return 3;
    }
    out = *s;
  } else if (o.format == "junit") {
    out = reports_to_junit({report});
  } else if (o.format == "github") {
    out = render_github(report, source_root()).commands;
  } else {
    TextStyle style;
    style.color = o.output.empty() && want_color(o.color, fileno(text_out));
    style.verbose = o.verbose;
    style.quiet = o.quiet;
    out = render_text(report, style);
  }
  std::vector<Error> problems;
  if (o.output.empty()) {
    std::fwrite(out.data(), 1, out.size(), text_out);
  } else if (auto st = write_file(o.output, out); !st) {
    problems.push_back(st.error());
  }
  if (!o.json_file.empty())
    if (auto st = write_file(o.json_file, report_to_json(report).dump(2, ' ', false, Json::error_handler_t::replace) + "\n"); !st) problems.push_back(st.error());
  if (!o.sarif_file.empty()) {
    auto s = sarif_text(o, report);
    if (!s) problems.push_back(s.error());
    else if (auto st = write_file(o.sarif_file, *s); !st) problems.push_back(st.error());
  }
  if (!o.junit_file.empty())
    if (auto st = write_file(o.junit_file, reports_to_junit({report})); !st) problems.push_back(st.error());
  if (o.github || o.format == "github") {
    const GithubOutput gh = render_github(report, source_root());
    if (o.github && o.format != "github") {
      std::fflush(text_out);
      std::fwrite(gh.commands.data(), 1, gh.commands.size(), stdout);
      std::fflush(stdout);
    }
    if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY"); summary && *summary)
      if (auto st = write_file(summary, gh.summary_markdown, true); !st) problems.push_back(st.error());
  }
  for (const auto& e : problems) std::fprintf(stderr, "specprobe: %s\n", e.str().c_str());
  return problems.empty() ? 0 : 3;
}

int run_check_command(const CheckOptions& o) {
  auto report = run_check(o);
  if (!report) {
    std::fprintf(stderr, "specprobe: %s\n", report.error().str().c_str());
    return exit_code(report.error().kind);
  }
  report->exit_code = o.exit_zero ? 0 : exit_code_for(*report, o.fail_on);
  if (const int rc = emit_report(o, *report, stdout); rc != 0) return rc;
  return report->exit_code;
}

}  // namespace specprobe
