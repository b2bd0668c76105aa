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
  // this GPU cannot hold, --probes off) leaves the answer to the rules. Which answers apply to the
  // plan is the answer records' business (facts/answers.hpp derive_answers).
  if (const Json* errs = find_fact(facts, "probe.errors_at_plan"); errs && errs->is_array())
    for (const Json& key : *errs)
      if (key.is_string()) out.push_back(key.get<std::string>() + ".status");
  return out;
}

}  // namespace specprobe
