// The one report model every printer renders (text, JSON, SARIF, JUnit, GitHub, NFD).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "facts/facts.hpp"
#include "rules/rule.hpp"

namespace specprobe {

// Four result states, kept apart everywhere.
enum class ResultStatus { pass, fail, skip, error };
std::string_view to_string(ResultStatus s);

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
  std::string message;        // rendered; empty unless fail/skip/error
  Json params = Json::object();
  std::string remediation;
  Json evidence = Json::object();  // the facts the rule read, with their values
  SourceLocation location;
  std::string location_fact;  // the fact the location belongs to ("spec.k")
  std::vector<std::string> references;
  std::optional<Suppression> suppressed;
};

// One what-if variant of the sweep.
struct MatrixCell {
  int k = 0;
  std::string backend;
  std::string kv_cache_dtype;
  std::string verdict;               // "works" | "fails" | "unknown"
  std::string indexer;               // "native" | "flattened" | "blocked" | "" (no DSA indexer)
  std::vector<std::string> errors;   // ids of error-severity findings
  std::vector<std::string> warnings; // ids of warning-severity findings
};

struct SupportMatrix {
  std::vector<int> ks;
  std::vector<std::string> backends;
  std::vector<std::string> kv_cache_dtypes;
  std::vector<MatrixCell> cells;
  // Summary for the requested backend and kv dtype.
  std::vector<int> working_k;
  std::optional<int> max_working_k;
  // For the requested k when it fails: backends / kv dtypes that would make it work.
  std::vector<std::string> alternative_backends;
  std::vector<std::string> alternative_kv_cache_dtypes;
};

struct Note {
  std::string severity;  // "info" | "warning"
  std::string message;
  SourceLocation where;
};

struct Report {
  std::vector<std::string> argv;
  std::string input_path;
  std::string input_form;  // "vllm-yaml", ...
  std::string engine;
  std::string verdict;     // "supported" | "not-supported" | "unknown"
  Facts facts = Json::object();
  std::vector<RuleResult> results;   // one per rule, in rule-id order
  std::optional<SupportMatrix> matrix;
  std::vector<Note> notes;           // reader notes, unknown options, GPU fallback ...
  Json probes = Json::array();       // probe results (see probes/)
  Json checkpoint = Json::object();  // checkpoint/quantization summary
  std::string fail_on = "error";
  int exit_code = 0;
  double duration_ms = 0;
};

}  // namespace specprobe
