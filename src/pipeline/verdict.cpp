// The verdict (see verdict.hpp).
#include "pipeline/verdict.hpp"

#include <algorithm>

#include "facts/registry.hpp"
#include "gpu/gpu_info.hpp"
#include "rules/plan_path.hpp"

namespace specprobe {
namespace {

// How to supply FACT: the registry's hint for its writer; derived facts point at their inputs.
std::string supply_hint(const std::string& fact) {
  auto reg = fact_registry();
  if (!reg) return {};
  const FactSpec* f = (*reg)->find(fact);
  if (!f) return {};
  const FactRegistry::Writer* w = (*reg)->writer(f->writer);
  return w ? w->supply : std::string();
}

void add_missing(std::vector<MissingFact>& out, const std::string& fact, const std::string& by,
                 std::string supply = {}) {
  auto it = std::find_if(out.begin(), out.end(), [&](const MissingFact& m) { return m.fact == fact; });
  if (it == out.end()) {
    out.push_back({fact, supply.empty() ? supply_hint(fact) : supply, {}});
    it = out.end() - 1;
  }
  if (std::find(it->needed_by.begin(), it->needed_by.end(), by) == it->needed_by.end()) it->needed_by.push_back(by);
}

// The facts without which no plan can be decided (rules/plan_path.hpp), with how to supply each.
void plan_path(const Json& facts, std::vector<MissingFact>& missing) {
  for (const std::string& fact : missing_plan_facts(facts)) {
    std::string supply;
    if (fact == "model.architecture")
      supply = fact_string(facts, "resolve.model.failure")
                   .value_or("pass --model DIR (the checkpoint, its config.json, or an HF cache repo dir)") +
               "; the model's shapes decide most rules";
    else if (fact == "spec.enabled")
      supply =
          "whether speculative decoding is on is left to what the file does not show (a variable it does not "
          "set, or a --config file that was not read): pass the variable with --env NAME=VALUE, or give the "
          "speculative config on the command line";
    else if (fact == "spec.k")
      supply =
          "set num_speculative_tokens in the speculative config (or give --model with the MTP layers the default "
          "comes from)";
    else if (fact == "attention.selected")
      supply =
          "specprobe knows no attention backend the engine would select for this model on this GPU: pass "
          "--attention-backend as deployed, or --python with the engine installed";
    else if (fact.rfind("probe.", 0) == 0) {
      const std::string base = fact.substr(0, fact.size() - std::string(".status").size());
      const std::string reason = fact_string(facts, base + ".reason").value_or("the probe could not run");
      supply = reason.find("--probes off") != std::string::npos
                   ? reason
                   : reason +
                         "; run specprobe when the GPU is free (before the server starts), or pass --probes off "
                         "to accept the rules' answer";
    }
    add_missing(missing, fact, "the plan", supply);
  }
}

}  // namespace

// The engine check could not answer (it lacked an input, its adapter failed, the engine is not
// installed in --python, it runs another release than the deploy, an AMD GPU): what to do about
// it. Only with --require engine: otherwise the check's note says so and the verdict comes from
// the evidence that did run.
void engine_check_missing(const Json& facts, std::vector<MissingFact>& missing) {
  if (fact_string(facts, "engine_check.status")) return;
  if (!fact_bool(facts, "engine_check.requested").value_or(false)) {
    add_missing(missing, "engine_check.status", "--require engine",
                "pass --python with the engine the deploy runs installed (the engine check was not asked)");
    return;
  }
  const std::string outcome = fact_string(facts, "engine_check.outcome").value_or("");
  const std::string label = fact_string(facts, "engine_check.engine_label").value_or("the engine");
  std::string supply;
  if (outcome == "missing-input")
    supply = fmt::format("the installed {} could not check the plan without: {} (or pass --no-engine)", label,
                         fact_string(facts, "engine_check.missing").value_or("an input"));
  else if (outcome == "not-installed")
    supply = fact_string(facts, "engine_check.reason").value_or("install the engine in --python, or pass --no-engine");
  else
    supply = fmt::format("{} (fix it, rerun with --engine-timeout or --no-cache, or pass --no-engine)",
                         fact_string(facts, "engine_check.reason").value_or("the engine check failed"));
  add_missing(missing, "engine_check.status", "the installed engine", supply);
}

// --require probes / stack: the plan's probe kernels, or the stack probes, did not run.
void source_missing(const Json& facts, const std::string& source, std::vector<MissingFact>& missing) {
  const std::string ran = source == "probes" ? "probe.ran" : "stack.ran";
  const std::string why = source == "probes" ? "probe.reason" : "stack.reason";
  if (fact_bool(facts, ran).value_or(false)) return;
  const std::string reason = fact_string(facts, why).value_or("it did not run");
  add_missing(
      missing, ran, "--require " + source,
      source == "probes"
          ? fmt::format("the probe kernels did not run ({}): run specprobe on the GPU with --probes auto", reason)
          : fmt::format(
                "the stack probes did not run ({}): pass --python with the libraries installed, on a GPU machine",
                reason));
}

Decision decide(const std::vector<RuleResult>& results, const Json& facts, const std::vector<std::string>& require) {
  Decision d;
  bool fails = false, undecided = false, risky = false;
  for (const auto& source : require) {
    if (source == "engine")
      engine_check_missing(facts, d.missing);
    else if (source == "probes" || source == "stack")
      source_missing(facts, source, d.missing);
  }
  for (const auto& r : results) {
    if (r.suppressed) continue;
    fails |= blocking(r);
    risky |= at_risk(r);
    if (r.status == ResultStatus::error) {
      undecided = true;
      for (const auto& m : r.missing) add_missing(d.missing, m, r.id);
      if (r.missing.empty()) add_missing(d.missing, r.id, r.id, r.message);
    }
  }
  plan_path(facts, d.missing);
  if (fact_bool(facts, "gpu.fallback").value_or(false))
    d.assumptions.push_back(
        fmt::format("no GPU was visible: evaluated for a declared {} ({}); pass --gpu NAME to choose",
                    fact_string(facts, "gpu.name").value_or("GPU"), gpu_arch_label(facts)));
  if (!fact_string(facts, "engine.version"))
    d.assumptions.push_back(fmt::format(
        "{} version unknown: evaluated as the newest release (rules and advisories alike; docs/versions.md), findings "
        "about older releases only are notes; give --python, --site-packages or --lib {}=VERSION",
        fact_string(facts, "engine.name").value_or("engine"), fact_string(facts, "engine.name").value_or("vllm")));
  // Only deterministic failures decide "not-supported"; conditional ones put a decided plan at risk.
  d.verdict = fails                               ? "not-supported"
              : (undecided || !d.missing.empty()) ? "unknown"
              : risky                             ? "supported-with-risks"
                                                  : "supported";
  return d;
}

std::string verdict_of(const std::vector<RuleResult>& results) { return decide(results, Json::object()).verdict; }

}  // namespace specprobe
