// The stack table: each library with an adapter (probes/stack_<library>.py) is one StackKind,
// defined in probes/stack_<library>.cpp beside its adapter and listed once in stack_kinds()
// (probes/stack_kinds.cpp). Everything else enumerates the table: the plan's specs
// (stack_probe_specs), `specprobe probe --stack` (option_params, the library names), the result
// check (validate_stack_result) and the facts (stack_facts_patch: the common stack.<library>.*
// facts for every library, then the kind's own facts and answer records).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "probes/kinds.hpp"
#include "probes/stack_probes.hpp"

namespace specprobe::probes {

// What `specprobe probe --stack` was asked for: the shape options and the values it resolved.
struct StackShape {
  const ProbeShapeOptions& shape;
  std::vector<int> next_n;  // --next-n, parsed
  int batch = 2;
  int context = 200;
};

struct StackKind {
  const char* library;  // the adapter is probes/stack_<library>.py
  const char* what;     // one line: what it asks the library
  // The plan's spec: stack_run_spec(library, params), or stack_skip_spec(library, why) when the
  // library is not on the plan's path. FORCED: asked for by name (StackProbeOptions::libraries).
  Json (*plan_spec)(const Json& facts, const StackProbeOptions& opts, bool forced);
  // `specprobe probe --stack`: the adapter's params from the shape options.
  Json (*option_params)(const StackShape& s);
  // A case beyond the common schema ("" = fine). Null: nothing more to check.
  std::string (*check_case)(const Json& c) = nullptr;
  // A validated result against its spec ("" = fine), e.g. every asked value answered. Null: none.
  std::string (*check_result)(const Json& result, const Json& spec) = nullptr;
  // Its own facts beyond stack.<library>.* and its answer records (append_answer to
  // stack.answers, facts/answers.hpp). Null: none.
  void (*record)(const Json& result, Json& facts) = nullptr;
  // The installed distributions whose build decides the answer (the answer cache's key reads the
  // first one found; torch's is added for every library).
  std::array<const char*, 2> distributions{};
  // The adapter answers without a GPU (for the GPU the plan declares): a pass needs no device,
  // and such an answer is cached without one.
  bool answers_without_gpu = false;
};

// The libraries with an adapter, in run order.
const std::vector<StackKind>& stack_kinds();

// The kind of LIBRARY, or null.
const StackKind* find_stack_kind(const std::string& library);

// A spec that runs LIBRARY's adapter with PARAMS / one reported as a skip with WHY, not run.
Json stack_run_spec(const std::string& library, Json params);
Json stack_skip_spec(const std::string& library, const std::string& why);

// A GQA model's verify shape from the facts: GQA ratio (model.gqa_ratio, else heads / KV heads),
// KV heads, head dim and k (spec.next_n - 1); nullopt when the model's heads are unknown.
struct StackGqaShape {
  int64_t gqa = 1, kv_heads = 1, head_dim = 128;
  int k = 0;
};
std::optional<StackGqaShape> stack_gqa_shape(const Json& facts);

// For the records' "says": the version the adapter reported (else FALLBACK) and, for an answer
// read from the answer cache, the words that say so ("" otherwise).
std::string stack_version_text(const Json& result, const std::string& fallback);
std::string stack_cached_words(const Json& result);

// Appends LIBRARY's one answer record at the plan's own shape (plan-shape-only: a cell of another
// shape drops it), from its validated RESULT.
void append_plan_shape_stack_answer(const Json& result, Json& facts, const std::string& library);

// The kinds, defined in their own files.
extern const StackKind kDeepGemmStack;
extern const StackKind kFlashInferStack;
extern const StackKind kTritonStack;
extern const StackKind kTorchStack;

}  // namespace specprobe::probes
