// The what-if sweep: re-evaluates every rule over variants of the facts (k = 0..8 x each
// attention backend the engine offers for this model x kv-cache dtypes) to build the support
// matrix, the largest working k and the alternatives that would make the requested k work.
// Probe results enter through the facts, so they count here exactly as in the main verdict.
#pragma once
#include <vector>

#include "report/report.hpp"
#include "rules/rule.hpp"

namespace specprobe {

struct SweepOptions {
  int max_k = 8;
};

SupportMatrix sweep_support_matrix(const std::vector<Rule>& rules, const Json& base_facts,
                                   const SweepOptions& options = {});

}  // namespace specprobe
