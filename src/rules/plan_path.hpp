// The facts without which no plan can be decided, whatever the rules say: the model's
// architecture, the speculative depth when speculation is on, (on NVIDIA) the attention backend
// the engine would select, and the answer of each of specprobe's probes that ran for the plan's
// shape but could not finish (status error: a busy GPU, no context). The verdict (pipeline/verdict.cpp decide) and
// every cell of the what-if sweep (rules/sweep.cpp) ask this one function, so that the plan's verdict and the plan's
// own matrix cell cannot disagree about "unknown".
#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"

namespace specprobe {

// The names of the path facts FACTS (a derived document) lacks, in a fixed order.
std::vector<std::string> missing_plan_facts(const Json& facts);

}  // namespace specprobe
