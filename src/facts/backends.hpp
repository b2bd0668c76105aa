// vLLM attention-backend emulation (vllm-project/vllm @9aaf83ef5: vllm/platforms/cuda.py,
// vllm/v1/attention/backends/, vllm/config/compilation.py): per-arch priority order, each
// backend's validate_configuration, the builder's declared CUDA-graph support, and
// resolve_cudagraph_mode_and_sizes over target, drafter and indexer. Pure functions over facts;
// no GPU.
#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"

namespace specprobe {

// AttentionCGSupport levels.
enum class CgSupport { never = 0, uniform_single_token_decode = 1, uniform_batch = 2, always = 3 };
std::string_view to_string(CgSupport s);

struct BackendVerdict {
  std::string name;
  bool valid = false;
  std::vector<std::string> reasons;  // why it is not valid here
  CgSupport cg_support = CgSupport::never;
  bool spec_as_decode = false;  // verify batches routed as uniform decodes
};

// Every backend vLLM would consider for this model on this GPU, in its priority order, each
// validated against the facts (gpu.*, model.*, serve.kv_cache_dtype, serve.block_size).
std::vector<BackendVerdict> vllm_backend_candidates(const Json& facts);

// Validation of one named backend (it may not be in the candidate list).
BackendVerdict vllm_validate_backend(const Json& facts, const std::string& name);

// Names vLLM knows (AttentionBackendEnum), for "unknown backend" checks.
bool vllm_backend_known(const std::string& name);

// Sets attention.* and cudagraph.* facts: attention.selected, attention.selected_by ("requested" |
// "auto"), attention.requested_valid, attention.invalid_reasons, attention.candidates (valid,
// in priority order), attention.cg_support, attention.spec_as_decode, attention.drafter,
// cudagraph.requested, cudagraph.resolved, cudagraph.min_support, cudagraph.downgraded,
// cudagraph.full_decode, cudagraph.support_by_group.
void derive_vllm_attention(Json& facts);

}  // namespace specprobe
