// Derived facts: everything computed from the base facts (plan, model, GPU, libraries) by
// emulating the engine — spec defaults, kv-cache dtype resolution, attention-backend selection
// and CUDA-graph mode resolution (facts/backends.hpp), and the DSA indexer's next_n handling by
// engine build and DeepGEMM line (rules/data/builds.yaml). Called once for the requested plan and
// once per what-if variant of the sweep, so it must be cheap and a pure function of its input.
#pragma once
#include <functional>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe {

// Called after each step with the step's writer and the document before and after it (the
// pipeline's fact audit, facts/registry.hpp).
using FactAudit = std::function<void(std::string_view writer, const Json& before, const Json& after)>;

// One derivation step: the module (registry writer) and what it computes.
struct DeriveStep {
  const char* writer;
  void (*run)(Json& facts);
};
// The steps, in order (an explicit table: adding a derivation adds a row).
const std::vector<DeriveStep>& derive_steps();

// Computes every derived fact in place from the input facts (the plan, model, checkpoint, GPU,
// libraries, probe and stack-probe answers). Each step owns its facts and rewrites them whole, so
// running it again after an input changed gives the same document as running it once.
void derive_facts(Json& facts, const FactAudit& audit = nullptr);

// Loads and checks the embedded version tables once; an error here is an internal error.
Status check_version_tables();

}  // namespace specprobe
