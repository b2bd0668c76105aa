// run_check: the pipeline in order (see check.hpp).
#include "pipeline/check.hpp"

#include "facts/derive.hpp"
#include "pipeline/stages.hpp"
#include "pipeline/verdict.hpp"
#include "rules/engine.hpp"

namespace specprobe {

Expected<Report> run_check(const CheckRequest& req, const Services& services) {
  const auto t0 = services.clock();
  Report report;
  report.argv = req.invocation;
  report.fail_on = req.fail_on;
  report.catalog = services.catalog;

  Json facts = Json::object();
  std::map<std::string, SourceLocation> locations;
  std::string model_dir, python_executable;
  if (auto st = stages::read_plan(req, report, facts, locations); !st) return st.error();
  if (auto st = stages::add_libs(req, services, report, facts, python_executable); !st) return st.error();
  if (auto st = stages::add_model(req, report, facts, model_dir); !st) return st.error();
  if (auto st = stages::add_checkpoint(model_dir, report, facts); !st) return st.error();
  if (auto st = stages::add_gpu(req, services, report, facts); !st) return st.error();
  derive_facts(facts);
  stages::add_probes(req, services, report, facts);
  stages::add_stack_probes(req, services, python_executable, report, facts);
  derive_facts(facts);  // stack and probe answers take precedence over version knowledge

  const std::vector<Rule>& rules = services.catalog->rules;
  report.results = evaluate_rules(rules, facts, locations, report.input_path);
  if (auto st = stages::add_suppressions(req, services, report); !st) return st.error();
  if (req.matrix) report.matrix = sweep_support_matrix(rules, facts);
  report.engine = fact_string(facts, "engine.name").value_or("vllm");
  report.verdict = verdict_of(report.results);
  report.facts = std::move(facts);
  report.duration_ms = std::chrono::duration<double, std::milli>(services.clock() - t0).count();
  return report;
}

}  // namespace specprobe
