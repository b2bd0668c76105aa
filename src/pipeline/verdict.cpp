// The verdict (see verdict.hpp).
#include "pipeline/verdict.hpp"

#include <algorithm>

#include "facts/registry.hpp"
#include "gpu/gpu_info.hpp"

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

void add_missing(std::vector<MissingFact>& out, const std::string& fact, const std::string& by, std::string supply = {}) {
  auto it = std::find_if(out.begin(), out.end(), [&](const MissingFact& m) { return m.fact == fact; });
  if (it == out.end()) {
    out.push_back({fact, supply.empty() ? supply_hint(fact) : supply, {}});
    it = out.end() - 1;
  }
  if (std::find(it->needed_by.begin(), it->needed_by.end(), by) == it->needed_by.end()) it->needed_by.push_back(by);
}

// The facts without which no plan can be decided, whatever the rules say.
void plan_path(const Json& facts, std::vector<MissingFact>& missing) {
  if (!find_fact(facts, "model.architecture") || find_fact(facts, "model.architecture")->is_null())
    add_missing(missing, "model.architecture", "the plan",
                "pass --model DIR (the checkpoint, its config.json, or an HF cache repo dir); the model's shapes decide "
                "most rules");
  if (fact_bool(facts, "spec.enabled").value_or(false) && !fact_int(facts, "spec.k"))
    add_missing(missing, "spec.k", "the plan",
                "set num_speculative_tokens in the speculative config (or give --model with the MTP layers the "
                "default comes from)");
  const bool nvidia = fact_string(facts, "gpu.vendor").value_or("nvidia") == "nvidia";
  if (nvidia && find_fact(facts, "model.architecture") && !fact_string(facts, "attention.selected"))
    add_missing(missing, "attention.selected", "the plan",
                "specprobe knows no attention backend the engine would select for this model on this GPU: pass "
                "--attention-backend as deployed, or --python with the engine installed");
}

}  // namespace

Decision decide(const std::vector<RuleResult>& results, const Json& facts) {
  Decision d;
  bool fails = false, undecided = false;
  for (const auto& r : results) {
    if (r.suppressed) continue;
    if (r.status == ResultStatus::fail && r.severity == Severity::error) fails = true;
    if (r.status == ResultStatus::error) {
      undecided = true;
      for (const auto& m : r.missing) add_missing(d.missing, m, r.id);
      if (r.missing.empty()) add_missing(d.missing, r.id, r.id, r.message);
    }
  }
  plan_path(facts, d.missing);
  if (fact_bool(facts, "gpu.fallback").value_or(false))
    d.assumptions.push_back(fmt::format("no GPU was visible: evaluated for a declared {} ({}); pass --gpu NAME to choose",
                                        fact_string(facts, "gpu.name").value_or("GPU"), gpu_arch_label(facts)));
  if (!fact_string(facts, "engine.version"))
    d.assumptions.push_back(fmt::format(
        "{} version unknown: advisories reaching the newest release apply, older ones are notes; give --python, "
        "--site-packages or --lib {}=VERSION",
        fact_string(facts, "engine.name").value_or("engine"), fact_string(facts, "engine.name").value_or("vllm")));
  d.verdict = fails ? "not-supported" : (undecided || !d.missing.empty()) ? "unknown" : "supported";
  return d;
}

std::string verdict_of(const std::vector<RuleResult>& results) { return decide(results, Json::object()).verdict; }

}  // namespace specprobe
