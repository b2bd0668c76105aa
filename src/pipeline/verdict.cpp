// The verdict (see verdict.hpp).
#include "pipeline/verdict.hpp"

namespace specprobe {

std::string verdict_of(const std::vector<RuleResult>& results) {
  bool unknown = false;
  for (const auto& r : results) {
    if (r.suppressed) continue;
    if (r.status == ResultStatus::fail && r.severity == Severity::error) return "not-supported";
    if (r.status == ResultStatus::error) unknown = true;
  }
  return unknown ? "unknown" : "supported";
}

}  // namespace specprobe
