// Launch-parameter structs shared by the probe kernels (kernels/*.cu) and their host side
// (probes/*.cpp). Plain C++ (no CUDA types): pointers travel as 64-bit device addresses.
// Each kernel takes exactly one of these by value, so the host passes void* args[] = {&params}.
#pragma once
#include <stdint.h>

namespace specprobe_kernels {

// kernels/mqa_logits.cu: DeepSeek V3.2/V4 DSA indexer scoring over a paged FP8 K cache in
// DeepGEMM's fused layout (knowledge/kernel-constraints.md A.1).
struct MqaLogitsParams {
  uint64_t q;             // e4m3 [batch, next_n, heads, head_dim]
  uint64_t kv;            // uint8 [num_blocks, block_kv, 1, head_dim + 4]: values, then fp32 scales
  uint64_t weights;       // fp32 [batch * next_n, heads]
  uint64_t context_lens;  // int32 [batch, next_n]
  uint64_t block_table;   // int32 [batch, block_table_stride]
  uint64_t logits;        // fp32 [batch * next_n, logits_stride]; columns >= context_lens untouched
  int batch;
  int next_n;
  int heads;
  int block_kv;
  int block_table_stride;
  int logits_stride;
  int rows_per_cta;   // query rows (of next_n) per CTA; grid.z = ceil(next_n / rows_per_cta)
  int token_splits;   // warps sharing one (row, head chunk) over a 128-token tile: 1, 2, 4 or 8
  int tiles_per_cta;  // 128-token tiles per CTA; grid.x = ceil(max_context / (128 * tiles_per_cta))
};
inline constexpr int kMqaTileTokens = 128;
inline constexpr int kMqaStages = 3;
// Heads handled by one warp (the rest of H is split across warps): min(H, 64).
inline constexpr int mqa_head_chunk(int heads) { return heads < 64 ? heads : 64; }
inline constexpr int mqa_smem_bytes(int head_dim, int heads, int tasks) {
  return kMqaStages * (kMqaTileTokens * (head_dim + 16) + kMqaTileTokens * 4) +
         tasks * kMqaTileTokens * 4 + tasks * mqa_head_chunk(heads) * 4;
}

// kernels/spec_verify.cu: attention of the k+1 verify rows of each request over a paged KV
// cache (vLLM layout [num_blocks, block_size, num_kv_heads, head_dim]); row j of request b sits
// at position seq_lens[b] - num_q + j and sees cache positions <= its own.
struct SpecVerifyParams {
  uint64_t q;            // bf16 [batch, num_q, heads_q, head_dim]
  uint64_t k_cache;      // bf16 or e4m3 [num_blocks, block_size, heads_kv, head_dim]
  uint64_t v_cache;      // same layout as k_cache
  uint64_t block_table;  // int32 [batch, block_table_stride]
  uint64_t seq_lens;     // int32 [batch]: cached tokens including the num_q verify tokens
  uint64_t out;          // bf16 [batch, num_q, heads_q, head_dim]
  uint64_t partial_o;    // fp32 [num_splits, batch, num_q, heads_q, head_dim] (num_splits > 1)
  uint64_t partial_lse;  // fp32 [num_splits, batch, num_q, heads_q] (log2 domain)
  int batch;
  int num_q;  // k + 1
  int heads_q;
  int heads_kv;
  int block_size;
  int block_table_stride;
  int num_splits;
  int rows_per_cta;  // 16 or 32 query rows ((j, head-in-group) pairs) per CTA
  float sm_scale;
  float k_scale;  // fp8 dequant scales (1 for bf16)
  float v_scale;
};
inline constexpr int kSpecVerifyThreads = 128;
inline constexpr int spec_verify_tile_tokens(int head_dim) { return head_dim <= 128 ? 64 : 32; }
inline constexpr int spec_verify_smem_bytes(int head_dim, bool fp8, int rows) {
  const int tn = spec_verify_tile_tokens(head_dim);
  const int row_bf16 = (head_dim + 8) * 2;
  const int q = rows * row_bf16;
  const int kv_tiles = (fp8 ? 1 : 2) * 2 * tn * row_bf16;  // bf16 K and V (x2 stages for bf16)
  const int raw = fp8 ? 2 * 2 * tn * head_dim : 0;        // fp8 staging, 2 stages
  const int s = rows * (tn + 4) * 4;
  const int p = rows * (tn + 8) * 2;
  const int stats = rows * 4 * 4;
  return q + kv_tiles + raw + s + p + stats;
}

struct SpecVerifyCombineParams {
  uint64_t partial_o;
  uint64_t partial_lse;
  uint64_t out;
  int rows;  // batch * num_q * heads_q
  int head_dim;
  int num_splits;
};

}  // namespace specprobe_kernels
