// Launch-parameter structs shared by the probe kernels (kernels/*.cu) and their host side
// (probes/*.cpp). Plain C++ (no CUDA types): pointers travel as 64-bit device addresses.
// Each kernel takes exactly one of these by value, so the host passes void* args[] = {&params}.
#pragma once
#include <stdint.h>

// Shape helpers that both sides evaluate (the kernels at compile time): host-and-device under nvcc.
#ifdef __CUDACC__
#define SPK_ABI_FN __host__ __device__
#else
#define SPK_ABI_FN
#endif

namespace specprobe_kernels {

// kernels/mqa_logits.cu: DeepSeek V3.2/V4 DSA indexer scoring over a paged FP8 K cache in
// DeepGEMM's fused layout (deepseek-ai/DeepGEMM @54e2261: csrc/apis/attention.hpp L314-328,
// tests/test_attention.py kv_cache_cast_to_fp8).
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
  return kMqaStages * (kMqaTileTokens * (head_dim + 16) + kMqaTileTokens * 4) + tasks * kMqaTileTokens * 4 +
         tasks * mqa_head_chunk(heads) * 4;
}

// sm_90a variants: 64-token tiles brought in by the copy engine through tensor maps into a
// `stages`-deep ring, e4m3 wgmma with N = RPC * H (RPC = MqaLogitsParams::rows_per_cta);
// persistent grid, each math warpgroup an equal share of all requests' tiles.
// - mqa_logits_tma_d<D>_h<H>_r<RPC>: 160 threads, one math warpgroup and a producer warp, N <= 256,
//   two CTAs per SM.
// - mqa_logits_ws<NW>_d<D>_h<H>_r<RPC>: NW math warpgroups and a producer warpgroup (one copy
//   warp per math warpgroup) in one CTA per SM; setmaxnreg moves the producer's registers to
//   the math warpgroups (mqa_ws_math_regs), each of which owns a slot of shared memory (its q,
//   ring, barriers, weights) and its own run of tiles.
// - mqa_logits_ws<NW>_d<D>_h<H>_r<RPC>_c<C>: the same for exactly C chunks (next_n with
//   ceil(next_n / RPC) == C; anything else traps), every chunk's weights held in registers.
// The two tensor maps are CUtensorMap objects (128 bytes, 64-byte aligned) that the host fills
// with cuTensorMapEncodeTiled; the kernel takes the struct as a __grid_constant__ parameter.
inline constexpr int kMqaTmaTileTokens = 64;
inline constexpr int kMqaTmaThreads = 160;
inline constexpr int kMqaTmaMaxStages = 8;
inline constexpr int kMqaWsProducerRegs = 40;
// Ring depth cap of the warp-specialized kernels (per math warpgroup; three tiles of four math
// warpgroups keep ~100 KB in flight per SM). Deeper rings, where they fit, measured slower: at
// B = 256, L = 8192, next_n 1 / 2 / 3 an H200 took 82.0-82.9 / 90.0 / 122.0 us at the deepest
// ring that fits (5 / 4 / 5 stages) and 79.2-79.5 / 88.9-89.1 / 121.0-121.1 with 3; an H100
// 116.6 us at next_n 2 with 3 or 4 stages (docs/perf/kernels.md#mqa-ring-depth).
inline constexpr int kMqaWsMaxStages = 3;
struct alignas(64) MqaTmaParams {
  MqaLogitsParams p;
  int stages;                             // ring depth per math warpgroup, 2..kMqaTmaMaxStages
  alignas(64) unsigned char kv_map[128];  // uint8 {head_dim, min(block_kv, 64), num_blocks}, strides {D, block bytes}
  alignas(64) unsigned char q_map[128];   // probes/mqa_logits.hpp mqa_q_map_geometry
};
// Paired rows: the warp-specialized kernels with two query rows per chunk load q through a 4-D
// map {D, h % 4, row, h / 4} (probes/mqa_logits.hpp mqa_q_map_geometry encodes it), so B column
// c holds row (c % 8) / 4 and head 4 (c / 8) + c % 4. The wgmma accumulator gives lane tig of a
// quad columns 2 tig and 2 tig + 1 of every 8, so the two lanes with the same tig >> 1 hold all
// heads of one row and the quad sums in one shuffle instead of two rounds (0.6-0.9% at
// next_n 4 on an H100 and an H200, docs/perf/kernels.md#mqa-paired-rows).
SPK_ABI_FN inline constexpr bool mqa_ws_paired_rows(int math_wgs, int rpc) { return math_wgs > 1 && rpc == 2; }
// Query row within the chunk and head that B column c holds, paired or not (heads = H).
SPK_ABI_FN inline constexpr int mqa_q_col_row(bool paired, int c, int heads) {
  return paired ? (c % 8) / 4 : c / heads;
}
SPK_ABI_FN inline constexpr int mqa_q_col_head(bool paired, int c, int heads) {
  return paired ? 4 * (c / 8) + c % 4 : c % heads;
}
SPK_ABI_FN inline constexpr int mqa_tma_threads(int math_wgs) {
  return math_wgs == 1 ? kMqaTmaThreads : 128 * (math_wgs + 1);
}
// Registers per math-warpgroup thread after setmaxnreg: the CTA's launch allocation (65,536 /
// threads, in steps of 8) less the producer warpgroup's (kMqaWsProducerRegs, or 24 for the
// held-weights kernel of one N = 192 chunk, kernels/mqa_logits.cu), shared out.
SPK_ABI_FN inline constexpr int mqa_ws_math_regs(int math_wgs, int producer_regs = kMqaWsProducerRegs) {
  const int threads = 128 * (math_wgs + 1);
  const int launch = (65536 / threads) / 8 * 8;
  const int per = (threads * launch - 128 * producer_regs) / (128 * math_wgs) / 8 * 8;
  return per > 256 ? 256 : per;
}
// One math warpgroup's shared memory (1024-aligned, the 128B swizzle atom): q of all chunks,
// the ring (tiles, then scales), full[S] / empty[S] / q_full / q_empty barriers, the weights
// laid out per lane quad position, the request's context lengths.
SPK_ABI_FN inline constexpr int mqa_tma_slot_bytes(int head_dim, int heads, int rpc, int next_n, int stages) {
  const int n = rpc * heads;
  const int chunks = (next_n + rpc - 1) / rpc;
  const int raw = chunks * n * head_dim + stages * kMqaTmaTileTokens * (head_dim + 4) + (2 * stages + 2) * 8 +
                  chunks * 4 * (n / 4 + 4) * 4 + next_n * 4;
  return (raw + 1023) / 1024 * 1024;
}
SPK_ABI_FN inline constexpr int mqa_tma_smem_bytes(int head_dim, int heads, int rpc, int next_n, int batch, int stages,
                                                   int math_wgs = 1) {
  return 1024 /* alignment slack */ + math_wgs * mqa_tma_slot_bytes(head_dim, heads, rpc, next_n, stages) +
         (batch + 1) * 4 /* prefix */ + 4 * 4 /* scan's warp sums */;
}

// kernels/spec_verify.cu: attention of the k+1 verify rows of each request over a paged KV
// cache (vLLM layout [num_blocks, block_size, num_kv_heads, head_dim]); row j of request b sits
// at position seq_lens[b] - num_q + j and sees cache positions <= its own.
// Split-KV: request b's tokens are cut into splits of tiles_per_split tiles; grid.x = the most
// splits any request can need (CTAs past a request's end exit at once). A request with one split
// writes out directly; otherwise each split writes O/l and lse and spec_verify_combine merges.
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
  int num_splits;       // grid.x: the most splits of any request
  int rows_per_cta;     // 16 or 32 query rows ((j, head-in-group) pairs) per CTA
  int tiles_per_split;  // KV tiles (spec_verify_tile_tokens) per split
  int stages;           // cp.async ring depth: 2 or 3 (spec_verify_stages)
  float sm_scale;
  float k_scale;  // fp8 dequant scales (1 for bf16)
  float v_scale;
};
inline constexpr int kSpecVerifyThreads = 128;
// Online softmax's lazy rescale: a warp moves its running max (the base of P, l and O) only when
// a row's tile max exceeds it by more than this many log2 units, so P <= 2^8 between moves
// (fp32 l and O, bf16 P: no overflow, the same relative precision).
inline constexpr float kSpecVerifyLazySlack = 8.f;
// sm_90+ bf16 copy-engine variant (`spec_verify_d<D>_bf16_r<R>_tma`): warp 0 loads each K/V tile
// with bulk tensor copies of box_tokens tokens x 128 bytes (128-byte swizzle) per map, completing
// on a per-stage mbarrier, instead of 16-byte cp.async from every thread. The maps are uint8
// {head_dim * 2, heads_kv, block_size, num_blocks} over k_cache / v_cache; box_tokens =
// gcd(tile tokens, block_size), used where it is at least 8 (a box then fills whole 1024-byte
// swizzle atoms, so the swizzle the kernel reads back is the tile's own).
// Ring depth of the variant: two stages keep four CTAs per SM (GQA 8, k 3, head_dim 128: 41.5 KB,
// 120-122 registers); on an H200 that ran 372 us against 407-410 us with three or four stages at
// three CTAs per SM (docs/perf/kernels.md#sv-tma).
inline constexpr int kSpecVerifyTmaStages = 2;
struct alignas(64) SpecVerifyTmaParams {
  SpecVerifyParams p;
  int box_tokens;
  alignas(64) unsigned char k_map[128];
  alignas(64) unsigned char v_map[128];
};
// Tokens per KV tile: 64 where one m-tile of rows (16) needs 64 tokens to give all four warps a
// 16-token slice; 32 for two m-tiles (rows 17-32) and for head_dim 256, so a CTA's ring stays
// small enough for three CTAs per SM (GQA 8, k 3, head_dim 128: 60.5 KB, 504 us = 73.7% of the
// HBM roofline on an H100 against 534 us = 69.6% with 64-token tiles and two CTAs per SM).
SPK_ABI_FN inline constexpr int spec_verify_tile_tokens(int head_dim, int rows) {
  return head_dim <= 128 && rows <= 16 ? 64 : 32;
}
inline constexpr int spec_verify_ring_bytes(int head_dim, bool fp8, int rows, int stages) {
  const int tn = spec_verify_tile_tokens(head_dim, rows);
  const int row_bf16 = (head_dim + 8) * 2;
  const int bf16_tiles = (fp8 ? 1 : stages) * 2 * tn * row_bf16;  // K and V
  const int raw = fp8 ? stages * 2 * tn * head_dim : 0;           // fp8 staging ring
  return bf16_tiles + raw;
}
inline constexpr int spec_verify_merge_bytes(int head_dim, int rows) { return 4 * rows * head_dim * 4; }
inline constexpr int spec_verify_smem_bytes_stages(int head_dim, bool fp8, int rows, int stages) {
  const int q = rows * (head_dim + 8) * 2;
  const int ring = spec_verify_ring_bytes(head_dim, fp8, rows, stages);
  const int merge = spec_verify_merge_bytes(head_dim, rows) / (rows == 16 ? 1 : 2);  // warps per m-tile
  const int stats = 2 * 4 * rows * 4;
  return q + (ring > merge ? ring : merge) + stats;
}
// Byte offset of element (tok, e) (e a multiple of 8: one 16-byte chunk) in a K or V tile of the
// copy-engine variant: half e / 64 holds TN rows of 128 bytes, and the 128-byte swizzle stores
// chunk c of row tok at chunk c ^ (tok % 8) (rows are 1024-byte aligned in groups of 8).
SPK_ABI_FN inline constexpr int spec_verify_tma_offset(int tile_tokens, int tok, int e) {
  return (e >> 6) * tile_tokens * 128 + tok * 128 + ((((e & 63) >> 3) ^ (tok & 7)) << 4);
}
// The copy-engine variant: the ring (dense 128-byte swizzled rows, 1024-aligned at offset 0) or
// the merge area, then Q, the (m, l) stats and one mbarrier per stage.
inline constexpr int spec_verify_tma_smem_bytes(int head_dim, int rows, int stages) {
  const int tn = spec_verify_tile_tokens(head_dim, rows);
  const int ring = stages * 2 * tn * head_dim * 2;
  const int merge = spec_verify_merge_bytes(head_dim, rows) / (rows == 16 ? 1 : 2);
  return (ring > merge ? ring : merge) + rows * (head_dim + 8) * 2 + 2 * 4 * rows * 4 + 8 * stages;
}
// The deepest ring (3, else 2) that fits `smem_limit` bytes per block.
inline constexpr int spec_verify_stages(int head_dim, bool fp8, int rows, int smem_limit) {
  return spec_verify_smem_bytes_stages(head_dim, fp8, rows, 3) <= smem_limit ? 3 : 2;
}
inline constexpr int spec_verify_smem_bytes(int head_dim, bool fp8, int rows) {
  return spec_verify_smem_bytes_stages(head_dim, fp8, rows, 2);
}

struct SpecVerifyCombineParams {
  uint64_t partial_o;
  uint64_t partial_lse;
  uint64_t out;
  uint64_t seq_lens;  // int32 [batch]: a request's split count is recomputed from it
  int rows;           // batch * num_q * heads_q
  int head_dim;
  int num_splits;
  int rows_per_request;  // num_q * heads_q
  int tile_tokens;
  int tiles_per_split;
};

// kernels/mla_verify.cu: MLA spec-verify attention in the absorbed-weight form the MLA decode
// kernels run ("MQA over the latent": FlashMLA, vLLM's *_MLA backends, SGLang's MLA backends).
// Each cached token is one row of kv_dim = latent + rope values that every query head shares
// (DeepSeek V3/R1/V3.2, Kimi K2: [c_kv 512 | k_pe 64]; DeepSeek-V4: one 512-value row, 448 + 64);
// q is already absorbed ([q_nope W_UK | q_pe], kv_dim values per head). Scores run over all
// kv_dim values; the output is P times the first v_dim values of each row, in latent space
// (V3: the 512 latent values; V4: the whole row, K and V being one vector). Row j of request b
// sits at position seq_lens[b] - num_q + j and sees positions <= its own (dense), or, in the
// sparse (DSA) variant, the positions of its own topk list that are <= its own (-1 = no entry).
struct MlaVerifyParams {
  uint64_t q;             // bf16 [batch, num_q, heads, kv_dim]
  uint64_t kv_cache;      // bf16 or e4m3 [num_blocks, block_size, kv_dim]
  uint64_t block_table;   // int32 [batch, block_table_stride]
  uint64_t seq_lens;      // int32 [batch]: cached tokens including the num_q verify tokens
  uint64_t topk_indices;  // int32 [batch, num_q, topk]: token positions in the request (sparse only)
  uint64_t out;           // bf16 [batch, num_q, heads, v_dim]
  int batch;
  int num_q;  // k + 1
  int heads;  // query heads on this rank
  int kv_dim;
  int v_dim;
  int block_size;
  int block_table_stride;
  int topk;  // 0: dense
  float sm_scale;
  float kv_scale;  // fp8: per-tensor dequant scale of the whole cache (1 for bf16)
};
// One CTA per (request, verify row, group of kMlaVerifyHeadsPerCta heads); tiles of
// kMlaVerifyTileTokens tokens, one (head, token) score per thread.
inline constexpr int kMlaVerifyThreads = 256;
inline constexpr int kMlaVerifyHeadsPerCta = 16;
inline constexpr int kMlaVerifyTileTokens = 16;
// kv_dim and v_dim at most this (each thread holds kMlaVerifyMaxDim / kMlaVerifyThreads output
// columns of every head of its group in registers); kv_dim a multiple of 16 (16-byte row loads).
inline constexpr int kMlaVerifyMaxDim = 1024;
// Shared memory: q rows and the tile's KV rows in bf16 (row stride kv_dim + 8), the [heads][tokens]
// scores, per-head running max / sum / rescale factor, the tile's token positions.
SPK_ABI_FN inline constexpr int mla_verify_row_stride(int kv_dim) { return kv_dim + 8; }
inline constexpr int mla_verify_smem_bytes(int kv_dim) {
  return (kMlaVerifyHeadsPerCta + kMlaVerifyTileTokens) * mla_verify_row_stride(kv_dim) * 2 +
         kMlaVerifyHeadsPerCta * kMlaVerifyTileTokens * 4 + 3 * kMlaVerifyHeadsPerCta * 4 + kMlaVerifyTileTokens * 4;
}

}  // namespace specprobe_kernels
