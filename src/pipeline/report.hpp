// The one report model the pipeline produces and every printer renders (text, JSON, SARIF,
// JUnit, GitHub, NFD).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"
#include "pipeline/verdict.hpp"
#include "rules/catalog.hpp"
#include "rules/result.hpp"
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
  Json facts = Json::object();
  std::vector<RuleResult> results;  // one per rule, in rule-id order
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
