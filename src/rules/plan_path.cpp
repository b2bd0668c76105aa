// The plan's path facts (see plan_path.hpp).
#include "rules/plan_path.hpp"

#include "common/json.hpp"

namespace specprobe {

std::vector<std::string> missing_plan_facts(const Json& facts) {
  std::vector<std::string> out;
  const Json* arch = find_fact(facts, "model.architecture");
  const bool model_known = arch && !arch->is_null();
  if (!model_known) out.push_back("model.architecture");
  if (fact_bool(facts, "spec.enabled").value_or(false) && !fact_int(facts, "spec.k")) out.push_back("spec.k");
  const bool nvidia = fact_string(facts, "gpu.vendor").value_or("nvidia") == "nvidia";
  if (nvidia && arch && !fact_string(facts, "attention.selected")) out.push_back("attention.selected");
  return out;
}

}  // namespace specprobe
