// The one report model the pipeline produces and every printer renders (text, JSON, SARIF,
// JUnit, GitHub, Code Quality, NFD, matrix). Printers (src/report/) include this header and
// common/ only: the rule results, the support matrix and the rule and advisory descriptions
// (rules/result.hpp, rules/sweep.hpp, rules/rule.hpp, rules/advisory.hpp) are part of the model
// and reach them from here, and what they show of the plan is typed (pipeline/plan_summary.hpp)
// rather than read from the facts document by name (issue 53).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"
#include "pipeline/plan_summary.hpp"
#include "pipeline/verdict.hpp"
#include "rules/advisory.hpp"
#include "rules/catalog.hpp"
#include "rules/result.hpp"
#include "rules/rule.hpp"
#include "rules/sweep.hpp"

namespace specprobe {

struct Note {
  std::string severity;  // "info" | "warning"
  std::string message;
  SourceLocation where;
};

struct Report {
  std::vector<std::string> argv;
  std::string input_path;
  std::string input_form;  // "vllm-yaml", ...
  std::string server;      // which server of the file ("service vllm"); empty when it starts one
  std::string engine;
  std::string verdict;  // "supported" | "supported-with-risks" | "not-supported" | "unknown" (pipeline/verdict.hpp)
  std::vector<MissingFact> missing;      // why the verdict is unknown, and how to supply each fact
  std::vector<std::string> assumptions;  // what the evaluation assumed (a declared GPU, ...)
  Json facts = Json::object();           // the whole document: the JSON report's "facts", text --verbose
  PlanSummary plan;                      // what the printers show of the plan, from FACTS (summarize_plan)
  std::vector<RuleResult> results;       // one per rule, in rule-id order
  std::optional<SupportMatrix> matrix;
  std::vector<Note> notes;           // reader notes, unknown options, GPU fallback ...
  Json probes = Json::array();       // probe results (see probes/)
  Json checkpoint = Json::object();  // checkpoint/quantization summary
  std::string fail_on = "error";
  int exit_code = 0;
  double duration_ms = 0;
  std::shared_ptr<const Catalog> catalog;  // the rules evaluated (SARIF describes them)
};

}  // namespace specprobe
