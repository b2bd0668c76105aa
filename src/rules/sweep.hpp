// The what-if sweep: re-evaluates every rule and advisory over variants of the facts (k = 0..8 x each
// attention backend the engine offers for this model x kv-cache dtypes) to build the support
// matrix, the largest working k and the alternatives that would make the requested k work.
// Probe results enter through the facts, so they count here exactly as in the main verdict.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "rules/catalog.hpp"
#include "rules/rule.hpp"

namespace specprobe {

// One what-if variant of the sweep.
struct MatrixCell {
  int k = 0;
  std::string backend;
  std::string kv_cache_dtype;
  std::string verdict;                // "works" | "at-risk" (only conditional errors) | "fails" | "unknown"
  std::string indexer;                // "native" | "flattened" | "blocked" | "" (no DSA indexer)
  std::vector<std::string> errors;    // ids of error-severity findings that bite every time
  std::vector<std::string> warnings;  // ids of warning-severity findings
  // Why the cell is unknown: ids of rules on its path that could not be decided, and the plan
  // facts it lacks (rules/plan_path.hpp: model.architecture, spec.k, attention.selected).
  std::vector<std::string> undecided;
  // How the cell is known, weakest first: "rules" (the rules and version knowledge decided it;
  // absent when a rule on its path could not be decided: verdict "unknown"), "probe"
  // (specprobe's own kernels ran this cell's shape on this GPU), "stack" (the installed library
  // was asked at this cell's shape: DeepGEMM's next_n; FlashInfer and Triton at the plan's shape
  // only), "engine" (the installed engine answered for this cell). A measurement taken at
  // another cell's shape never counts (sweep.cpp drop_plan_shape_answers).
  std::vector<std::string> known_by;
  // One line per source in known_by except rules: what was measured or said. An engine refusal
  // is quoted in the engine's words, "vLLM 0.33.0 (config): <message>".
  std::vector<std::string> evidence;
  std::vector<std::string> risks;  // ids of conditional error-severity findings (at risk)
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

struct SweepOptions {
  int max_k = 8;
  size_t threads = 1;  // cells evaluated at once
  // A cell that agrees with the plan on every fact a rule or advisory reads takes the plan's answer
  // for it instead of evaluating it again (only for those whose reads are all named: Program::closed).
  // The matrix is the same either way; false evaluates everything (tests compare the two).
  bool reuse_plan_answers = true;
  // The plan's own results (evaluate_catalog on PLAN_FACTS), when the caller has them: the plan's
  // answers are read from them instead of evaluated again. Null: evaluated here.
  const std::vector<RuleResult>* plan_results = nullptr;
};

// INPUT_FACTS: the plan's input facts (what the readers, the GPU query, the library scan and
// the probes wrote); each cell overrides the inputs a user would change (num_speculative_tokens,
// --attention-backend, --kv-cache-dtype) and derives the rest. PLAN_FACTS: the plan's derived
// document (the requested backend, k and KV dtype the summary refers to).
// IGNORED: rule and advisory ids the user suppressed (they do not fail a cell, as they do not
// fail the verdict).
// The axes alone (ks, backends, kv_cache_dtypes; no cells) the sweep would use for PLAN_FACTS: the
// engine check sends the cells it re-evaluates to the installed engine before the sweep runs.
// A cell's engine answer is the engine check's answer record for the cell's id (engine_cell_id),
// whose cell_facts stand for its facts there (facts/answers.hpp); a cell without one gets the
// check's unasked_cell_facts: not engine-checked.
SupportMatrix sweep_axes(const Json& plan_facts, const SweepOptions& options = {});

SupportMatrix sweep_support_matrix(const Catalog& catalog, const Json& input_facts, const Json& plan_facts,
                                   const SweepOptions& options = {}, const std::set<std::string>& ignored = {});

}  // namespace specprobe
