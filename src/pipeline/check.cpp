// run_check: the pipeline in order (see check.hpp).
#include "pipeline/check.hpp"

#include <map>
#include <set>

#include <fmt/format.h>

#include "facts/derive.hpp"
#include "pipeline/plan_summary.hpp"
#include "pipeline/stages.hpp"
#include "pipeline/verdict.hpp"
#include "rules/advisory.hpp"
#include "rules/evaluate.hpp"

namespace specprobe {

namespace {

// Matrices already swept in this run, by the plan's input facts (which server of the file it is
// left out) and the suppressed ids: a file that starts the same server several times (a script
// of 64 identical commands) sweeps once. The sweep reads nothing else.
using SweepMemo = std::map<std::string, SupportMatrix>;

std::string sweep_key(const Json& inputs, const std::set<std::string>& suppressed) {
  Json key = inputs;
  if (auto d = key.find("deploy"); d != key.end() && d->is_object()) d->erase("server");
  // How long the engine check took and whether it came from the cache do not change its answers.
  if (auto e = key.find("engine_check"); e != key.end() && e->is_object()) {
    e->erase("duration_s");
    e->erase("cached");
  }
  std::string text = key.dump();
  for (const auto& id : suppressed) text += "\n" + id;
  return text;
}

Expected<Report> run_plan(const CheckRequest& req, ParsedServing plan, const Services& services, SweepMemo* memo) {
  const auto t0 = services.clock();
  Report report;
  report.argv = req.invocation;
  report.fail_on = req.fail_on;

  // The input facts (what each input stage wrote) and the derived document (inputs + what the
  // engine would do with them). The sweep varies the inputs and derives each variant again.
  Json inputs = Json::object();
  std::map<std::string, SourceLocation> locations;
  std::string model_dir, python_executable;
  // Each input stage writes only its own facts (src/facts/registry.yaml); Services::audit checks it.
  // What is going on, for a progress line (the CLI shows it once a phase takes over a second).
  auto phase = [&](const std::string& what) {
    if (services.progress) services.progress(what);
  };
  auto stage = [&](std::string_view writer, auto&& run) -> Status {
    if (!services.audit) return run();
    const Json before = inputs;
    Status st = run();
    services.audit(writer, before, inputs);
    return st;
  };
  auto derived = [&] {
    Json facts = inputs;
    derive_facts(facts, services.audit);
    return facts;
  };
  // The probe child starts now, so that its start-up (cuInit, context, module load) overlaps
  // reading the inputs and querying the GPU; add_probes hands it the specs (or lets it go).
  std::shared_ptr<PrestartedChild> probe_child;
  if (req.probes != "off" && req.gpu == "auto" && services.prestart_probes)
    probe_child = services.prestart_probes(probes::PlanProbeOptions{});
  phase("reading the serving plan");
  if (auto st =
          stage("inputs.serving", [&] { return stages::use_plan(req, std::move(plan), report, inputs, locations); });
      !st)
    return st.error();
  if (!req.python.empty()) phase("asking " + req.python + " where it imports from");
  if (auto st = stage("inputs.python_env",
                      [&] { return stages::add_python(req, services, report, inputs, python_executable); });
      !st)
    return st.error();
  if (auto st = stage("inputs.installed_libs", [&] { return stages::add_libs(req, inputs); }); !st) return st.error();
  phase("resolving the models the plan names");
  stages::ResolvedModels models;
  if (auto st = stage("inputs.resolve", [&] { return stages::resolve_models(req, services, report, inputs, models); });
      !st)
    return st.error();
  phase("reading the model config and checkpoint headers");
  if (auto st = stage("inputs.model_config", [&] { return stages::add_model(models, report, inputs, model_dir); }); !st)
    return st.error();
  if (auto st = stage("inputs.checkpoint", [&] { return stages::add_checkpoint(model_dir, services, report, inputs); });
      !st)
    return st.error();
  phase(req.gpu == "auto" ? "querying the GPU" : "looking up " + req.gpu);
  if (auto st = stage("gpu", [&] { return stages::add_gpu(req, services, report, inputs, locations); }); !st)
    return st.error();
  Json facts = derived();
  const stages::SourceContext sources{req, services, python_executable, model_dir, models, &probe_child};
  for (const auto& source : stages::evidence_sources()) {
    if (source.phase) phase(source.phase);
    stage(source.stage, [&]() -> Status {
      source.run(sources, report, facts, inputs);
      return Ok{};
    });
  }
  facts = derived();  // the sources' answers take precedence over version knowledge

  report.catalog = services.catalog.get();  // the built-in catalog loaded meanwhile (rules/catalog.hpp)
  const Catalog& catalog = *report.catalog;
  phase("evaluating the rules and advisories");
  report.results = evaluate_catalog(catalog, facts, locations, report.input_path, req.threads, req.pass_detail);
  if (auto st = stages::add_suppressions(req, services, report); !st) return st.error();
  // The matrix ignores what the user suppressed, as the verdict does.
  std::set<std::string> suppressed;
  for (const auto& r : report.results)
    if (r.suppressed) suppressed.insert(r.id);
  if (req.matrix) {
    phase("sweeping the support matrix (k x backend x kv-cache dtype)");
    SweepOptions sweep;
    sweep.threads = static_cast<size_t>(std::max(1, req.threads));
    sweep.plan_results = &report.results;
    if (memo) {
      const std::string key = sweep_key(inputs, suppressed);
      auto it = memo->find(key);
      if (it == memo->end())
        it = memo->emplace(key, sweep_support_matrix(catalog, inputs, facts, sweep, suppressed)).first;
      report.matrix = it->second;
    } else {
      report.matrix = sweep_support_matrix(catalog, inputs, facts, sweep, suppressed);
    }
  }
  phase("");
  report.engine = fact_string(facts, "engine.name").value_or("vllm");
  Decision decision = decide(report.results, facts, req.require);
  report.verdict = decision.verdict;
  report.missing = std::move(decision.missing);
  report.assumptions = std::move(decision.assumptions);
  report.plan = summarize_plan(facts);  // the one place the printers' facts are read by name
  report.facts = std::move(facts);
  report.duration_ms = std::chrono::duration<double, std::milli>(services.clock() - t0).count();
  return report;
}

// The report of a file that starts no server: nothing was evaluated, so the verdict is unknown
// (exit 4, as for any plan that could not be decided), and the reader's notes say what the file
// runs instead. Not an input error: the file was read, and a deploy file for something else (a
// router, a client, an interactive container) is not malformed.
Report no_server_report(const CheckRequest& req, const ServingFile& file, const Services& services) {
  Report report;
  report.argv = req.invocation;
  report.fail_on = req.fail_on;
  report.catalog = services.catalog.get();
  report.input_path = file.path;
  report.input_form = "none";
  report.verdict = "unknown";
  report.missing.push_back(
      {"serving.server",
       fmt::format("{}: {}; check the right file, or give the serve command after `--` (specprobe check -- vllm "
                   "serve MODEL ...)",
                   file.path, stages::no_server_text()),
       {"the plan"}});
  for (const auto& n : file.notes) report.notes.push_back({n.severity, n.message, n.where});
  return report;
}

Expected<ServingFile> read_plans_nonempty(const CheckRequest& req) {
  auto file = stages::read_plans(req);
  if (!file) return file.error();
  if (file->plans.empty()) {
    std::string why;
    for (const auto& n : file->notes)
      why += fmt::format("\n  {}: {}", n.where.known() ? n.where.str() : file->path, n.message);
    return input_error(stages::no_server_text() + why, SourceLocation{file->path});
  }
  return file;
}

}  // namespace

Expected<Report> run_check(const CheckRequest& req, const Services& services) {
  auto file = read_plans_nonempty(req);
  if (!file) return file.error();
  return run_plan(req, std::move(file->plans.front()), services, nullptr);
}

Expected<std::vector<Report>> run_checks(const CheckRequest& req, const Services& services) {
  auto file = stages::read_plans(req);
  if (!file) return file.error();
  if (file->plans.empty()) return std::vector<Report>{no_server_report(req, *file, services)};
  std::vector<Report> out;
  SweepMemo memo;
  for (ParsedServing& plan : file->plans) {
    auto r = run_plan(req, std::move(plan), services, &memo);
    if (!r) return r.error();
    out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace specprobe
