// The verdict for the requested plan, decided in one place and rendered by every printer:
// not-supported when an unsuppressed error-severity finding fired, unknown when a rule on the
// plan's path could not decide, supported otherwise.
#pragma once
#include <string>
#include <vector>

#include "rules/result.hpp"

namespace specprobe {

std::string verdict_of(const std::vector<RuleResult>& results);

}  // namespace specprobe
