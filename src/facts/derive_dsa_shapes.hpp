// DSA indexer shape limits of DeepGEMM's paged MQA logits kernel (deepseek-ai/DeepGEMM
// csrc/apis/attention.hpp: main @54e2261 L259-261 and L299-309, nv_dev @a6b593d L298 and L336):
// indexer heads and head_dim per DeepGEMM line and arch family, and the FP4 indexer cache (SM100
// only). Reads dsa.deep_gemm.candidates set by derive_facts; pure, no GPU.
#pragma once
#include "common/json.hpp"

namespace specprobe {

// Sets, for models with a DSA indexer:
//   dsa.shape.heads_accepted   indexer heads the (single) candidate line accepts here, else null
//   dsa.shape.heads_ok         true/false when every candidate line agrees, else null
//   dsa.shape.heads_ok_lines   candidate lines that accept model.dsa.index_n_heads on this arch
//   dsa.shape.head_dim_ok      index head_dim in {32, 64, 128} (FP8 cache)
//   dsa.shape.fp4_cache_ok     use_fp4_indexer_cache (attention.* or serve.attention_config.*) only on SM100
void derive_dsa_shapes(Json& facts);

}  // namespace specprobe
