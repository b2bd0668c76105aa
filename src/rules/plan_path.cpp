// The plan's path facts (see plan_path.hpp).
#include "rules/plan_path.hpp"

#include "common/json.hpp"

namespace specprobe {

std::vector<std::string> missing_plan_facts(const Json& facts) {
  std::vector<std::string> out;
  const Json* arch = find_fact(facts, "model.architecture");
  const bool model_known = arch && !arch->is_null();
  if (!model_known) out.push_back("model.architecture");
  if (const Json* on = find_fact(facts, "spec.enabled"); on && on->is_null()) out.push_back("spec.enabled");
  if (fact_bool(facts, "spec.enabled").value_or(false) && !fact_int(facts, "spec.k")) out.push_back("spec.k");
  const bool nvidia = fact_string(facts, "gpu.vendor").value_or("nvidia") == "nvidia";
  if (nvidia && arch && !fact_string(facts, "attention.selected")) out.push_back("attention.selected");
  // A probe that ran for this shape and could not finish (no context, no memory: the GPU is busy;
  // no module for this arch): its evidence is missing, so the plan is not decided. A skip (a shape
  // this GPU cannot hold, --probes off) leaves the answer to the rules.
  if (fact_bool(facts, "probe.ran").value_or(false)) {
    std::vector<std::string> keys = {"probe.spec_verify", "probe.graph_replay"};
    const std::string kv = fact_bool(facts, "kv.fp8").value_or(false) ? "fp8" : "bf16";
    if (auto k = fact_int(facts, "spec.k"); k && *k > 0 && fact_string(facts, "probe.mla_verify.kv_dtype") == kv)
      keys.push_back("probe.mla_verify.k." + std::to_string(*k));
    if (fact_bool(facts, "model.dsa.present").value_or(false))
      if (auto n = fact_int(facts, "dsa.kernel_next_n"))
        keys.push_back("probe.mqa_logits.next_n." + std::to_string(*n));
    for (const auto& key : keys)
      if (fact_string(facts, key + ".status").value_or("") == "error") out.push_back(key + ".status");
  }
  return out;
}

}  // namespace specprobe
