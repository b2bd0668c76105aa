// Plan-driven probes for `specprobe check` (see plan_probes.hpp).
#include "probes/plan_probes.hpp"

#include "gpu/cuda_session.hpp"
#include "probes/kinds.hpp"
#include "probes/probe_common.hpp"
#include "probes/runner.hpp"

namespace specprobe::probes {

std::vector<Json> plan_probe_specs(const Json& facts, const std::string& mode, const std::vector<ProbeKind>& kinds) {
  std::vector<Json> specs;
  if (mode == "off") return specs;
  for (const auto& kind : kinds)
    if (kind.plan_specs)
      for (auto& s : kind.plan_specs(facts, mode)) specs.push_back(std::move(s));
  return specs;
}

Json probe_facts_patch(const std::vector<Json>& results, const std::vector<ProbeKind>& kinds) {
  Json facts = Json::object();
  set_fact(facts, "probe.ran", !results.empty());
  for (const auto& kind : kinds) {
    if (!kind.record) continue;
    std::vector<Json> mine;
    for (const auto& r : results)
      if (r.value("probe", "") == kind.name) mine.push_back(r);
    if (!mine.empty()) kind.record(mine, facts);
  }
  return facts;
}

namespace {

RunnerOptions plan_runner_options(const PlanProbeOptions& opts) {
  RunnerOptions ro;
  ro.child_command = opts.child_command.empty() ? self_child_command() : opts.child_command;
  ro.timeout_s = opts.timeout_s;
  return ro;
}

}  // namespace

std::shared_ptr<PrestartedChild> prestart_plan_probes(const PlanProbeOptions& opts) {
  return PrestartedChild::start(plan_runner_options(opts));
}

ProbeRun run_plan_probes(const Json& facts, const PlanProbeOptions& opts) {
  ProbeRun run;
  if (opts.mode == "off" || (opts.mode == "auto" && !opts.gpu_present)) {
    set_fact(run.facts_patch, "probe.ran", false);
    set_fact(run.facts_patch, "probe.reason", opts.mode == "off" ? "--probes off" : "no GPU visible");
    return run;
  }
  const auto specs = plan_probe_specs(facts, opts.mode);
  if (!opts.gpu_present) {
    // --probes all on a machine with no GPU to run them on (a CPU CI runner evaluating for a
    // declared --gpu): nothing was measured, which is a skip like a build without kernels, not an
    // error that would leave the plan undecided (rules/plan_path.cpp). The records stay, one per
    // shape, so the report says which measurements this machine could not take.
    // A binary without kernels could not run them on any GPU: that reason comes first.
    const std::string why = probe_kernels_fatbin().empty()
                                ? std::string(kNoKernelsReason)
                                : "no GPU on this machine to run probes on (" +
                                      (opts.no_gpu_reason.empty() ? std::string("none visible") : opts.no_gpu_reason) +
                                      "); run specprobe on the GPU host for measured answers";
    for (const auto& sp : specs) run.results.push_back(make_result(sp, kSkip, why));
    run.facts_patch = probe_facts_patch(std::vector<Json>(run.results.begin(), run.results.end()));
    return run;
  }
  const auto results =
      specs.empty() ? std::vector<Json>{} : run_probes_isolated(specs, plan_runner_options(opts), opts.prestarted);
  run.facts_patch = probe_facts_patch(results);
  for (const auto& r : results) run.results.push_back(r);
  return run;
}

}  // namespace specprobe::probes
