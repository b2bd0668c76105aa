// Derived facts: everything computed from the base facts (plan, model, GPU, libraries) by
// emulating the engine — spec defaults, kv-cache dtype resolution, attention-backend selection
// and CUDA-graph mode resolution (facts/backends.hpp), and the DSA indexer's next_n handling by
// engine build and DeepGEMM line (rules/data/builds.yaml). Called once for the requested plan and
// once per what-if variant of the sweep, so it must be cheap and a pure function of its input.
#pragma once
#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe {

// Recomputes every derived fact in place (idempotent: derived facts are overwritten).
void derive_facts(Json& facts);

// Loads and checks the embedded version tables once; an error here is an internal error.
Status check_version_tables();

}  // namespace specprobe
