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

struct SweepOptions {
  int max_k = 8;
};

// INPUT_FACTS: the plan's input facts (what the readers, the GPU query, the library scan and
// the probes wrote); each cell overrides the inputs a user would change (num_speculative_tokens,
// --attention-backend, --kv-cache-dtype) and derives the rest. PLAN_FACTS: the plan's derived
// document (the requested backend, k and KV dtype the summary refers to).
// IGNORED: rule and advisory ids the user suppressed (they do not fail a cell, as they do not
// fail the verdict).
SupportMatrix sweep_support_matrix(const Catalog& catalog, const Json& input_facts, const Json& plan_facts,
                                   const SweepOptions& options = {}, const std::set<std::string>& ignored = {});

}  // namespace specprobe
