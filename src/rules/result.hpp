// The outcome of evaluating one rule for one facts document. Four result states, kept apart
// everywhere (text, JSON, JUnit, SARIF): pass, fail, skip (not applicable, with the reason),
// error (could not determine, with the reason).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"
#include "rules/rule.hpp"

namespace specprobe {

struct Advisory;

enum class ResultStatus { pass, fail, skip, error };
std::string_view to_string(ResultStatus s);

// How much of a result that passes or does not apply is built. full: all of it, for a report that
// lists it. counted: its id, status and kinds (severity, stage, certainty) only, for a report that
// only counts such results (the compact JSON report of a many-file run: evidence, texts and
// references of some 300 results a file were most of the rules' time, issue 49). A result that
// fails or could not be decided is always built whole.
enum class PassDetail { full, counted };

// Why a failed result does not count (pipeline/suppressions.hpp).
struct Suppression {
  std::string reason;
  std::string source;  // ".specprobe.yaml:3" or "--ignore"
};

// The outcome of one rule (or probe) for the requested plan.
struct RuleResult {
  std::string id;
  std::string slug;
  std::string title;
  std::string category;
  ResultStatus status = ResultStatus::pass;
  Severity severity = Severity::error;
  Stage stage = Stage::config;
  std::string message;  // rendered; empty unless fail/skip/error
  Json params = Json::object();
  std::string remediation;
  Json evidence = Json::object();  // the facts the rule read, with their values
  SourceLocation location;
  std::string location_fact;  // the fact the location belongs to ("spec.k")
  std::vector<std::string> references;
  std::optional<Suppression> suppressed;
  // Facts whose being unknown made the result "error" (could not determine).
  std::vector<std::string> missing;
  // How the result is known: "probe" (specprobe's kernel on this GPU), "library" (a stack probe
  // asked the installed library), "engine" (the installed engine said so), "rule" (derived from
  // facts and versions by a rule or advisory), "unknown" (could not be decided).
  std::string known_by = "rule";
  // Advisories only: the advisory (rules/advisory.hpp; the report's catalog holds it, or the
  // caller of evaluate_advisory); nullptr for rules. The JSON report gives its url, published,
  // affected, fixed_in, request_dependent and engine.
  const Advisory* advisory = nullptr;
  // How surely it bites (rule.hpp Certainty), and when conditional, the condition in words.
  Certainty certainty = Certainty::deterministic;
  std::string condition;
  // A note about older releases only, the engine version being unknown ("vllm < 0.13.0"): the
  // version policy (docs/versions.md) evaluates an unknown version as the newest release.
  std::string only_before;
};

// A finding that makes the verdict not-supported: failed, not suppressed, of error severity and
// deterministic.
inline bool blocking(const RuleResult& r) {
  return r.status == ResultStatus::fail && !r.suppressed && r.severity == Severity::error &&
         r.certainty == Certainty::deterministic;
}
// A finding that puts the plan at risk: failed, not suppressed, of error severity, conditional.
inline bool at_risk(const RuleResult& r) {
  return r.status == ResultStatus::fail && !r.suppressed && r.severity == Severity::error &&
         r.certainty == Certainty::conditional;
}

}  // namespace specprobe
