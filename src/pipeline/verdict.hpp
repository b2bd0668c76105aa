// The verdict for the requested plan, decided in one place and rendered by every printer (text,
// JSON, SARIF, JUnit, GitHub, NFD) and by the exit code:
//
//   not-supported         an unsuppressed error-severity finding (rule or advisory) fired that is
//                         deterministic: it bites every time the plan runs;
//   unknown               the plan could not be decided: a fact on its path is unknown (the
//                         model's metadata, the speculative depth, the attention backend the
//                         engine would pick, or a fact a rule on the path needs); the report lists
//                         each missing fact and how to supply it;
//   supported-with-risks  decided, nothing deterministic fired, but a conditional error-severity
//                         finding did: it bites only under its condition (load, long contexts,
//                         some requests, intermittently, an unreproduced report), listed "at risk";
//   supported             the plan was evaluated (engine, model and GPU known or declared, every
//                         rule on its path decided) and nothing at error severity fired.
//
// Findings below error severity do not change the verdict; --fail-on decides whether they (and the
// at-risk ones: --fail-on risk) fail the exit code. Assumptions (a GPU declared because none was
// visible, an unknown engine version) are listed in every format.
#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"
#include "rules/result.hpp"
#include "rules/sweep.hpp"

namespace specprobe {

struct MissingFact {
  std::string fact;                    // "model.architecture"
  std::string supply;                  // how to give it: "pass --model DIR ..."
  std::vector<std::string> needed_by;  // rule / advisory ids, or "the plan"
};

struct Decision {
  std::string verdict;  // supported | supported-with-risks | not-supported | unknown
  std::vector<MissingFact> missing;
  std::vector<std::string> assumptions;
};

// RESULTS as evaluated (suppressions applied), FACTS the plan's derived facts. REQUIRE names the
// sources of evidence (engine, probes, stack) that must have answered: one that did not is a
// missing fact (unknown verdict). Without it a source that could not run leaves a note only.
Decision decide(const std::vector<RuleResult>& results, const Json& facts,
                const std::vector<std::string>& require = {});

// Kept for callers that need only the word.
std::string verdict_of(const std::vector<RuleResult>& results);

}  // namespace specprobe
